/**
 * The list-then-watch loop the server's caches share (pool-cache.ts, spiderpool-conf-cache.ts),
 * feeding a store. Reviews only read the store; the loop's I/O never blocks or fails a
 * review. It is its own small reflector, after client-go's (`tools/cache/reflector.go`),
 * because client-node's `ListWatch` keeps every whole object in its own cache and lists in
 * one request (a 10 000-pool list is ~110 MiB of JSON, held as one string): here the list
 * comes in pages of 500 (`limit`/`continue`), streamed item by item (list-pages.ts), and
 * every listed or watched object goes through `slim` as it is parsed, before anything
 * keeps it. The watch (client-node's `Watch`, bounded by {@link TimedWatch}) asks for
 * bookmarks and resumes from the last resourceVersion it saw; an expired one (410 Gone,
 * as a response or an `ERROR` event, or a continue token expiring mid-list) makes it list
 * afresh while the store keeps serving what it had, replaced only once the new list is
 * complete. After a list or watch error it retries with exponential backoff, keeping what
 * the store holds meanwhile. A list page that takes longer than `listTimeoutMs` and a
 * watch silent for longer than `watchIdleMs` count as errors, so a dead connection is
 * retried instead of leaving the store stale without a sign.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { summarizeApiError } from './api-error.js';
import { ContinueExpiredError, DEFAULT_PAGE_SIZE, listPages } from './list-pages.js';
import { isWatchableObject, MAX_WATCH_TIMEOUT_MS, TimedWatch } from './timed-watch.js';

/** How long stop() waits for a watch request in flight to get its response, in milliseconds. */
const STOP_WAIT_MS = 2000;

/**
 * A watch that ends normally sooner than this, with no event, is an error (client-go's
 * reflector: "very short watch ... lasted less than a second and no items received"), so
 * a server or proxy that closes every watch at once is retried with backoff, not in a loop.
 */
const SHORT_WATCH_MS = 1000;

/** A watch that ended at once without an event (see {@link SHORT_WATCH_MS}). */
class ShortWatchError extends Error {
  constructor() {
    // No duration in the text: each repeat is the same failure, logged at debug after the first.
    super(`the watch ended at once without an event (within ${SHORT_WATCH_MS / 1000} s); retrying with backoff`);
  }
}

/**
 * The second watch in a row from the resourceVersion a list just returned that expired
 * (410 Gone) within {@link SHORT_WATCH_MS} without an event: relisting at once every time
 * would loop list → 410 → list (a whole list of every pool each time), so from the second
 * the relist waits for the backoff, as client-go's reflector paces every ListAndWatch.
 */
class ExpiredAtOnceError extends Error {
  constructor() {
    super(`the watch from a fresh list expired at once (410 Gone within ${SHORT_WATCH_MS / 1000} s); listing again with backoff`);
  }
}

export interface InformerTiming {
  /** First retry delay after an error, in milliseconds (default 1000); doubled per failure in a row. */
  initialBackoffMs?: number;
  /** Longest retry delay, in milliseconds (default 30000). */
  maxBackoffMs?: number;
  /** How long one page of a list may take before it is abandoned as an error, in milliseconds (default 60000). */
  listTimeoutMs?: number;
  /** Items per list page (default 500, client-go's pager's). */
  pageSize?: number;
  /**
   * How long a watch may go without an event or an end before it is abandoned as an
   * error, in milliseconds (default 11 minutes: the API server is asked to end every
   * watch within 10, so only a dead connection stays silent longer).
   */
  watchIdleMs?: number;
}

/** What the loop lists, watches and feeds. */
export interface InformerSpec {
  logger: Logger;
  /** What it watches, for the log, e.g. `SpiderIPPool`. */
  what: string;
  /** The watch path, e.g. `/api/v1/namespaces/kube-system/configmaps`. */
  path: string;
  /** Sent on the watch too, e.g. `metadata.name=spiderpool-conf`. */
  fieldSelector?: string;
  /**
   * What the store keeps of an object, called on each as it is parsed from the list or
   * watch stream (so that the whole object is garbage at once); the object itself when absent.
   */
  slim?(object: KubernetesObject): KubernetesObject;
  /**
   * Replaces the store with a complete list (well-formed objects only, slimmed); the watch
   * starts once the returned promise (a store built in time slices) has resolved.
   */
  replaceAll(items: KubernetesObject[]): void | Promise<void>;
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
  /** The last failure, until a list or watch works again. */
  lastFailure(): CacheFailure | undefined;
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
 * Starts listing and watching through `config` (from `loadKubeConfig`). Returns at once; the
 * first list completes in the background.
 */
export function startInformer(config: KubeConfig, spec: InformerSpec, timing: InformerTiming = {}): Informer {
  const { logger, what } = spec;
  const initialBackoffMs = timing.initialBackoffMs ?? 1000;
  const maxBackoffMs = timing.maxBackoffMs ?? 30_000;
  const listTimeoutMs = timing.listTimeoutMs ?? 60_000;
  const pageSize = timing.pageSize ?? DEFAULT_PAGE_SIZE;
  const watchIdleMs = timing.watchIdleMs ?? MAX_WATCH_TIMEOUT_MS + 60_000;
  const slim = spec.slim ?? ((object: KubernetesObject) => object);
  const errors: InformerErrors = { list: 0, watch: 0 };
  let lastSyncSeconds: number | undefined;
  let failures = 0;
  let stopped = false;
  /** Where the next watch starts; `undefined`: list first. */
  let resourceVersion: string | undefined;
  const stopping = new AbortController();
  /** The retry wait in progress, ended early by stop(). */
  let waiting: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  /** The watch request in flight (resolves once its response began) and its controller. */
  let watchRequest: Promise<AbortController> | undefined;
  // A failure is logged at warn when it differs from the last one logged, or follows a
  // success; its repeats, retried every few seconds for as long as it lasts, at debug.
  let lastLogged: string | undefined;
  let lastFailure: CacheFailure | undefined;
  let failedSinceLogged = 0;
  // Recovery is a list that succeeded, or a watch that delivered an event or lasted
  // SHORT_WATCH_MS: a watch that opens and ends at once (a ShortWatchError) recovers nothing.
  const recovered = () => {
    lastFailure = undefined;
    if (lastLogged === undefined) return;
    logger.info({ failedAttempts: failedSinceLogged }, `${what} list and watch work again`);
    lastLogged = undefined;
    failedSinceLogged = 0;
  };
  /** Set while a watch that opened has not lasted SHORT_WATCH_MS yet: then it has recovered. */
  let lasting: NodeJS.Timeout | undefined;
  const current = () => {
    if (spec.synced()) lastSyncSeconds = Date.now() / 1000;
  };
  const describeFailure = spec.describeFailure ?? describeApiFailure;

  const list = async (): Promise<void> => {
    const startedMs = Date.now();
    // The old store serves until the new list is complete (a 410 relist never empties it).
    const items: KubernetesObject[] = [];
    let dropped = 0;
    const listed = await listPages(config, {
      path: spec.path,
      ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
      limit: pageSize,
      pageTimeoutMs: listTimeoutMs,
      signal: stopping.signal,
      onItem: (item) => {
        // Only objects the store can key by name reach it.
        if (isWatchableObject('ADDED', item)) items.push(slim(item as KubernetesObject));
        else dropped++;
      },
    });
    if (stopped) return;
    if (dropped > 0) logger.warn({ dropped }, `${what} list items without metadata.name ignored`);
    const firstSync = !spec.synced();
    await spec.replaceAll(items);
    if (stopped) return;
    resourceVersion = listed ?? '';
    failures = 0;
    recovered();
    current();
    (firstSync ? logger.info.bind(logger) : logger.debug.bind(logger))({ objects: items.length, durationMs: Date.now() - startedMs }, `${what} cache listed`);
  };

  const watcher = new TimedWatch(config, watchIdleMs, {
    current: (activity) => {
      // The first event after a reconnect shows the connection works again: the next
      // error starts the backoff afresh.
      if (activity === 'event') {
        failures = 0;
        recovered();
      } else if (activity === 'opened') {
        lasting = setTimeout(recovered, SHORT_WATCH_MS);
        lasting.unref();
      }
      current();
    },
    malformed: (phase) => logger.warn({ phase }, `${what} watch event without metadata.name ignored`),
  });

  /**
   * One watch from `resourceVersion`: resolves with the number of events it read other than
   * ERROR when it ends normally or with 410 Gone (then `resourceVersion` is cleared), rejects
   * on an error.
   */
  const watch = () =>
    new Promise<number>((resolve, reject) => {
      let read = 0;
      const expired = () => {
        resourceVersion = undefined;
        resolve(read);
      };
      let gone = false;
      let events = 0;
      const startedMs = Date.now();
      const query = {
        allowWatchBookmarks: true,
        ...(resourceVersion ? { resourceVersion } : {}),
        ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
      };
      watchRequest = watcher.watch(
        spec.path,
        query,
        (phase, object: KubernetesObject) => {
          if (gone || stopped) return;
          events++;
          if (phase === 'ERROR') {
            // The API server ends the watch after it; other ERROR events are left to that end, as client-node does.
            if ((object as { code?: unknown }).code === 410) gone = true;
            return;
          }
          read++;
          if (phase === 'ADDED' || phase === 'MODIFIED') spec.upsert(slim(object));
          else if (phase === 'DELETED') spec.remove(slim(object));
          const version = object.metadata?.resourceVersion;
          if (typeof version === 'string' && version !== '') resourceVersion = version;
        },
        (err: unknown) => {
          clearTimeout(lasting);
          if (gone || (err as { statusCode?: unknown } | null)?.statusCode === 410) expired();
          else if (err !== null && err !== undefined) reject(err);
          else if (events === 0 && Date.now() - startedMs < SHORT_WATCH_MS) reject(new ShortWatchError());
          else {
            // Lasted SHORT_WATCH_MS (its timer may not have run yet on a busy event loop) or delivered an event.
            if (read > 0 || Date.now() - startedMs >= SHORT_WATCH_MS) recovered();
            resolve(read);
          }
        },
      );
    });

  /** Waits `ms`, or less if stop() is called. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      waiting = { timer, resolve };
    });

  const failed = async (operation: 'list' | 'watch', err: unknown) => {
    errors[operation]++;
    const delayMs = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failures);
    failures++;
    const synced = spec.synced();
    const failure = describeFailure(operation, err);
    lastFailure = failure;
    const key = JSON.stringify(failure);
    const repeated = key === lastLogged;
    lastLogged = key;
    failedSinceLogged++;
    (repeated ? logger.debug.bind(logger) : logger.warn.bind(logger))(
      { ...failure, retryInMs: delayMs, synced },
      synced ? `${what} list or watch failed; ${spec.degraded.stale} until it reconnects` : `${what} list failed; ${spec.degraded.unsynced} until it succeeds`,
    );
    await pause(delayMs);
  };

  const run = async () => {
    let expiredBefore = false;
    let expiredAtOnceBefore = false;
    while (!stopped) {
      let operation: 'list' | 'watch' = 'list';
      try {
        const listed = resourceVersion === undefined;
        // A list resets the failures; a relist paced for an expiry at once keeps them, so its backoff grows.
        const failuresBefore = failures;
        if (listed) await list();
        operation = 'watch';
        const watchedMs = Date.now();
        const read = stopped ? 0 : await watch();
        const expiredMs = Date.now() - watchedMs;
        const expiredAtOnce = listed && resourceVersion === undefined && !stopped && read === 0 && expiredMs < SHORT_WATCH_MS;
        const expiredAtOnceAgain = expiredAtOnce && expiredAtOnceBefore;
        expiredAtOnceBefore = expiredAtOnce;
        if (expiredAtOnceAgain) {
          failures = failuresBefore;
          throw new ExpiredAtOnceError();
        }
      } catch (err) {
        if (stopped) return; // stop() aborts the list or watch, which reports as an error
        // A continue token that expired mid-list is not a failure: list again at once, as client-go's pager does.
        // Twice in a row, it is one (the pages come too slowly), and backs off.
        const expired = err instanceof ContinueExpiredError;
        const again = expired && expiredBefore;
        expiredBefore = expired;
        if (expired && !again) {
          logger.info(`${what} ${err.message}`);
          continue;
        }
        await failed(operation, err);
      }
    }
  };
  const running = run();

  return {
    lastSyncSeconds: () => lastSyncSeconds,
    errors: () => ({ ...errors }),
    lastFailure: () => lastFailure,
    stop: async () => {
      stopped = true;
      stopping.abort();
      if (waiting !== undefined) {
        clearTimeout(waiting.timer);
        waiting.resolve();
      }
      // client-node's Watch cannot abort a watch whose response has not begun; once it
      // has, abort it so that the watch's connection closes and the process can exit.
      const waited = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), STOP_WAIT_MS).unref());
      const controller = await Promise.race([watchRequest, waited]);
      controller?.abort();
      await Promise.race([running, waited]);
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
