/**
 * The list-then-watch loop the server's caches share (pool-cache.ts, spiderpool-conf-cache.ts):
 * a `@kubernetes/client-node` `ListWatch` over a {@link TimedWatch}, feeding a store. Reviews
 * only read the store; the loop's I/O never blocks or fails a review. After a list or watch
 * error it retries with exponential backoff (as client-go's reflector does), keeping what the
 * store holds meanwhile; an expired resourceVersion (410 Gone) makes it list afresh. A list
 * that takes longer than `listTimeoutMs` and a watch silent for longer than `watchIdleMs`
 * count as errors, so a dead connection is retried instead of leaving the store stale
 * without a sign.
 */
import {
  ListWatch,
  Observable,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObservableMiddleware,
  type RequestContext,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { summarizeApiError } from './api-error.js';
import { isWatchableObject, MAX_WATCH_TIMEOUT_MS, TimedWatch } from './timed-watch.js';

/** How long stop() waits for a watch request in flight to get its response, in milliseconds. */
const STOP_WAIT_MS = 2000;

export interface InformerTiming {
  /** First retry delay after an error, in milliseconds (default 1000); doubled per failure in a row. */
  initialBackoffMs?: number;
  /** Longest retry delay, in milliseconds (default 30000). */
  maxBackoffMs?: number;
  /** How long a list may take before it is abandoned as an error, in milliseconds (default 60000). */
  listTimeoutMs?: number;
  /**
   * How long a watch may go without an event or an end before it is abandoned as an
   * error, in milliseconds (default 11 minutes: the API server is asked to end every
   * watch within 10, so only a dead connection stays silent longer).
   */
  watchIdleMs?: number;
}

/** Request options for client-node's generated API calls (the list's abort signal). */
export type ListRequestOptions = { middleware: ObservableMiddleware[]; middlewareMergeStrategy: 'append' };

/** What the loop lists, watches and feeds. */
export interface InformerSpec {
  logger: Logger;
  /** What it watches, for the log, e.g. `SpiderIPPool`. */
  what: string;
  /** The watch path, e.g. `/api/v1/namespaces/kube-system/configmaps`. */
  path: string;
  /** Sent on the watch too, e.g. `metadata.name=spiderpool-conf`. */
  fieldSelector?: string;
  /** One list call through client-node, with `options` (they abort it after the list timeout). */
  list(options: ListRequestOptions): Promise<unknown>;
  /** Replaces the store with a complete list (well-formed objects only). */
  replaceAll(items: KubernetesObject[]): void;
  upsert(object: KubernetesObject): void;
  remove(object: KubernetesObject): void;
  /** Whether the store has had a complete list. */
  synced(): boolean;
  /** What the reviews do meanwhile, for the error log line: before the first list, and after. */
  degraded: { unsynced: string; stale: string };
  /**
   * One line for a failed list or watch, saying what an operator can do about it (a missing
   * CRD, missing RBAC); {@link describeApiFailure} when absent.
   */
  describeFailure?(operation: 'list' | 'watch', err: unknown): CacheFailure;
}

/** A failed list or watch, described for the log. */
export interface CacheFailure {
  operation: 'list' | 'watch';
  statusCode?: number;
  /** One line that says what is wrong and, for the failures an operator can fix, what to do. */
  message: string;
}

/** Errors by what failed, since the start. */
export interface InformerErrors {
  list: number;
  watch: number;
}

export interface Informer {
  /**
   * When the store was last known current, in Unix seconds: a list succeeded, or a watch
   * opened, delivered an event or ended normally. `undefined` before the first list.
   */
  lastSyncSeconds(): number | undefined;
  /** List and watch errors since the start. */
  errors(): InformerErrors;
  /** Stops watching and retrying; the store keeps what it has. */
  stop(): Promise<void>;
}

/**
 * The API server's answer to a failed list or watch in one line (api-error.ts: never
 * client-node's whole HTTP exchange), its status code in front when the text lacks it.
 */
export function describeApiFailure(operation: 'list' | 'watch', err: unknown): CacheFailure {
  const { statusCode, message } = summarizeApiError(err);
  if (statusCode === undefined) return { operation, message };
  return { operation, statusCode, message: message.includes(String(statusCode)) ? message : `${statusCode}: ${message}` };
}

/**
 * Request options that abort the request after `ms` milliseconds, so a list stuck on a
 * dead connection fails and is retried instead of hanging for good (client-node sets no
 * timeout on it).
 */
export function abortAfter(ms: number): ListRequestOptions {
  const middleware: ObservableMiddleware = {
    pre: (context: RequestContext) => {
      context.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/**
 * Starts listing and watching through `config` (from `loadKubeConfig`). Returns at once; the
 * first list completes in the background.
 */
export function startInformer(config: KubeConfig, spec: InformerSpec, timing: InformerTiming = {}): Informer {
  const { logger, what } = spec;
  const initialBackoffMs = timing.initialBackoffMs ?? 1000;
  const maxBackoffMs = timing.maxBackoffMs ?? 30_000;
  const listTimeoutMs = timing.listTimeoutMs ?? 60_000;
  const watchIdleMs = timing.watchIdleMs ?? MAX_WATCH_TIMEOUT_MS + 60_000;
  const errors: InformerErrors = { list: 0, watch: 0 };
  let lastSyncSeconds: number | undefined;
  let failures = 0;
  let listFailed = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  // A failure is logged at warn when it differs from the last one logged, or follows a
  // success; its repeats, retried every few seconds for as long as it lasts, at debug.
  let lastLogged: string | undefined;
  let failedSinceLogged = 0;
  const recovered = () => {
    if (lastLogged === undefined) return;
    logger.info({ failedAttempts: failedSinceLogged }, `${what} list and watch work again`);
    lastLogged = undefined;
    failedSinceLogged = 0;
  };
  const current = () => {
    recovered();
    if (spec.synced()) lastSyncSeconds = Date.now() / 1000;
  };
  const describeFailure = spec.describeFailure ?? describeApiFailure;

  const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
    let result: KubernetesListObject<KubernetesObject>;
    try {
      result = (await spec.list(abortAfter(listTimeoutMs))) as KubernetesListObject<KubernetesObject>;
    } catch (err) {
      listFailed = true;
      throw err;
    }
    if (!Array.isArray(result?.items)) {
      listFailed = true;
      throw new Error(`the ${what} list has no items array`);
    }
    // Only objects ListWatch can key by name reach it (it would throw on others, ending the process).
    const items = result.items.filter((item) => isWatchableObject('ADDED', item));
    if (items.length < result.items.length) logger.warn({ dropped: result.items.length - items.length }, `${what} list items without metadata.name ignored`);
    const firstSync = !spec.synced();
    spec.replaceAll(items);
    failures = 0;
    current();
    (firstSync ? logger.info.bind(logger) : logger.debug.bind(logger))({ objects: items.length }, `${what} cache listed`);
    return { ...result, items };
  };

  const watch = new TimedWatch(config, watchIdleMs, {
    current: (activity) => {
      // The first event after a reconnect shows the connection works again: the next
      // error starts the backoff afresh.
      if (activity === 'event') failures = 0;
      current();
    },
    malformed: (phase) => logger.warn({ phase }, `${what} watch event without metadata.name ignored`),
  });
  const informer = new ListWatch<KubernetesObject>(spec.path, watch, list, false, undefined, spec.fieldSelector);
  const failed = (err: unknown) => {
    if (stopped) return; // stop() aborts the watch, which reports as an error
    const operation = listFailed ? 'list' : 'watch';
    listFailed = false;
    errors[operation]++;
    const delayMs = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failures);
    failures++;
    const synced = spec.synced();
    const failure = describeFailure(operation, err);
    const key = JSON.stringify(failure);
    const repeated = key === lastLogged;
    lastLogged = key;
    failedSinceLogged++;
    (repeated ? logger.debug.bind(logger) : logger.warn.bind(logger))(
      { ...failure, retryInMs: delayMs, synced },
      synced ? `${what} list or watch failed; ${spec.degraded.stale} until it reconnects` : `${what} list failed; ${spec.degraded.unsynced} until it succeeds`,
    );
    retry = setTimeout(start, delayMs);
    retry.unref();
  };
  // The informer's start(): it resolves once the watch request has its response headers.
  // It rejects only if client-node fails outside the paths that report errors; that is
  // one more error to retry, never an unhandled rejection.
  let starting: Promise<void> = Promise.resolve();
  function start() {
    starting = informer.start().catch(failed);
  }
  informer.on('add', (object) => spec.upsert(object));
  informer.on('update', (object) => spec.upsert(object));
  informer.on('delete', (object) => spec.remove(object));
  informer.on('error', failed);
  start();

  return {
    lastSyncSeconds: () => lastSyncSeconds,
    errors: () => ({ ...errors }),
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await informer.stop();
      // client-node's stop() cannot abort a watch whose response has not begun; once it
      // has, stop again so that the watch's connection closes and the process can exit.
      const waited = new Promise<void>((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref());
      await Promise.race([starting, waited]);
      await informer.stop();
    },
  };
}

/** Registers counter `name{operation="list"|"watch"}` on `registry`, read from `errors` when scraped. */
export function registerInformerErrors(registry: Registry, name: string, help: string, errors: () => InformerErrors): void {
  new Counter({
    name,
    help,
    labelNames: ['operation'] as const,
    registers: [registry],
    collect() {
      const counts = errors();
      this.reset();
      this.inc({ operation: 'list' }, counts.list);
      this.inc({ operation: 'watch' }, counts.watch);
    },
  });
}
