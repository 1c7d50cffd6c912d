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

/** The retry delay after `failures` failures in a row: doubled each time, capped (client-go's backoff without jitter). */
export function backoffMs(failures: number, initialMs: number, maxMs: number): number {
  return Math.min(maxMs, initialMs * 2 ** failures);
}

/**
 * A failure is logged at warn when it differs from the last one logged, or follows a
 * success; its repeats, retried every few seconds for as long as it lasts, at debug.
 */
export class FailureLog {
  private lastLogged: string | undefined;
  private failedSinceLogged = 0;
  /** The last failure, until {@link recovered}. */
  last: CacheFailure | undefined;

  /** Records `failure`; true when it repeats the last one logged (log it at debug). */
  record(failure: CacheFailure): boolean {
    this.last = failure;
    const key = JSON.stringify(failure);
    const repeated = key === this.lastLogged;
    this.lastLogged = key;
    this.failedSinceLogged++;
    return repeated;
  }

  /** Clears the failure; the count of failed attempts when a failure had been logged, to report recovery once. */
  recovered(): number | undefined {
    this.last = undefined;
    if (this.lastLogged === undefined) return undefined;
    const failed = this.failedSinceLogged;
    this.lastLogged = undefined;
    this.failedSinceLogged = 0;
    return failed;
  }
}

/** A watch's progress, for the decision at its end. */
interface WatchRun {
  startedMs: number;
  /** Events other than ERROR. */
  read: number;
  /** Every event, ERROR included. */
  events: number;
  /** An ERROR event with code 410 came: the watch expired. */
  gone: boolean;
}

/**
 * How a watch ended: `expired` (410 Gone: list afresh), `ended` (normally, after an event or
 * {@link SHORT_WATCH_MS}), or an error to retry with backoff ({@link ShortWatchError} for a
 * watch that ended at once without an event).
 */
export function watchEnd(run: WatchRun, err: unknown, nowMs: number): 'expired' | 'ended' | Error {
  if (run.gone || (err as { statusCode?: unknown } | null)?.statusCode === 410) return 'expired';
  if (err !== null && err !== undefined) return err instanceof Error ? err : new Error(String(err));
  if (run.events === 0 && nowMs - run.startedMs < SHORT_WATCH_MS) return new ShortWatchError();
  return 'ended';
}

/** Timing with every default applied. */
type Timing = Required<InformerTiming>;

function withDefaults(timing: InformerTiming): Timing {
  return {
    initialBackoffMs: timing.initialBackoffMs ?? 1000,
    maxBackoffMs: timing.maxBackoffMs ?? 30_000,
    listTimeoutMs: timing.listTimeoutMs ?? 60_000,
    pageSize: timing.pageSize ?? DEFAULT_PAGE_SIZE,
    watchIdleMs: timing.watchIdleMs ?? MAX_WATCH_TIMEOUT_MS + 60_000,
  };
}

/**
 * client-go's reflector, small: `run` lists, then watches from the listed resourceVersion,
 * relisting on 410 and backing off on errors, until `stop`. State lives in fields.
 */
class Reflector implements Informer {
  private readonly timing: Timing;
  private readonly slim: (object: KubernetesObject) => KubernetesObject;
  private readonly describeFailure: NonNullable<InformerSpec['describeFailure']>;
  private readonly counts: InformerErrors = { list: 0, watch: 0 };
  private readonly failureLog = new FailureLog();
  private readonly stopping = new AbortController();
  private readonly watcher: TimedWatch;
  private syncedAtSeconds: number | undefined;
  /** Failures in a row, for the backoff. */
  private failures = 0;
  private stopped = false;
  /** Where the next watch starts; `undefined`: list first. */
  private resourceVersion: string | undefined;
  /** The retry wait in progress, ended early by stop(). */
  private waiting: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  /** The watch request in flight (resolves once its response began). */
  private watchRequest: Promise<AbortController> | undefined;
  /** Set while a watch that opened has not lasted SHORT_WATCH_MS yet: then it has recovered. */
  private lasting: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: KubeConfig,
    private readonly spec: InformerSpec,
    timing: InformerTiming,
  ) {
    this.timing = withDefaults(timing);
    this.slim = spec.slim ?? ((object) => object);
    this.describeFailure = spec.describeFailure ?? describeApiFailure;
    this.watcher = new TimedWatch(config, this.timing.watchIdleMs, {
      current: (activity) => this.onWatchActivity(activity),
      malformed: (phase) => spec.logger.warn({ phase }, `${spec.what} watch event without metadata.name ignored`),
    });
  }

  start(): this {
    this.running = this.run();
    return this;
  }

  lastSyncSeconds(): number | undefined {
    return this.syncedAtSeconds;
  }

  errors(): InformerErrors {
    return { ...this.counts };
  }

  lastFailure(): CacheFailure | undefined {
    return this.failureLog.last;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.waiting !== undefined) {
      clearTimeout(this.waiting.timer);
      this.waiting.resolve();
    }
    // client-node's Watch cannot abort a watch whose response has not begun; once it
    // has, abort it so that the watch's connection closes and the process can exit.
    const waited = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), STOP_WAIT_MS).unref());
    const controller = await Promise.race([this.watchRequest, waited]);
    controller?.abort();
    await Promise.race([this.running, waited]);
  }

  /** Recovery is a list that succeeded, or a watch that delivered an event or lasted SHORT_WATCH_MS. */
  private recovered(): void {
    const failedAttempts = this.failureLog.recovered();
    if (failedAttempts !== undefined) this.spec.logger.info({ failedAttempts }, `${this.spec.what} list and watch work again`);
  }

  private markCurrent(): void {
    if (this.spec.synced()) this.syncedAtSeconds = Date.now() / 1000;
  }

  private onWatchActivity(activity: 'opened' | 'event' | 'ended'): void {
    // The first event after a reconnect shows the connection works again: the next error starts the backoff afresh.
    if (activity === 'event') {
      this.failures = 0;
      this.recovered();
    } else if (activity === 'opened') {
      this.lasting = setTimeout(() => this.recovered(), SHORT_WATCH_MS);
      this.lasting.unref();
    }
    this.markCurrent();
  }

  /** Lists every page; the old store serves until the new list is complete (a 410 relist never empties it). */
  private async list(): Promise<void> {
    const { spec } = this;
    const startedMs = Date.now();
    const items: KubernetesObject[] = [];
    let dropped = 0;
    const listed = await listPages(this.config, {
      path: spec.path,
      ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
      limit: this.timing.pageSize,
      pageTimeoutMs: this.timing.listTimeoutMs,
      signal: this.stopping.signal,
      onItem: (item) => {
        // Only objects the store can key by name reach it.
        if (isWatchableObject('ADDED', item)) items.push(this.slim(item as KubernetesObject));
        else dropped++;
      },
    });
    if (this.stopped) return;
    if (dropped > 0) spec.logger.warn({ dropped }, `${spec.what} list items without metadata.name ignored`);
    const firstSync = !spec.synced();
    await spec.replaceAll(items);
    if (this.stopped) return;
    this.resourceVersion = listed ?? '';
    this.failures = 0;
    this.recovered();
    this.markCurrent();
    const log = firstSync ? spec.logger.info.bind(spec.logger) : spec.logger.debug.bind(spec.logger);
    log({ objects: items.length, durationMs: Date.now() - startedMs }, `${spec.what} cache listed`);
  }

  /** One watch event into the store; ERROR events are left to the watch's end, as client-node does. */
  private onEvent(run: WatchRun, phase: string, object: KubernetesObject): void {
    if (run.gone || this.stopped) return;
    run.events++;
    if (phase === 'ERROR') {
      if ((object as { code?: unknown }).code === 410) run.gone = true;
      return;
    }
    run.read++;
    if (phase === 'ADDED' || phase === 'MODIFIED') this.spec.upsert(this.slim(object));
    else if (phase === 'DELETED') this.spec.remove(this.slim(object));
    const version = object.metadata?.resourceVersion;
    if (typeof version === 'string' && version !== '') this.resourceVersion = version;
  }

  /**
   * One watch from `resourceVersion`: resolves with the number of events it read other than
   * ERROR when it ends normally or with 410 Gone (then `resourceVersion` is cleared), rejects
   * on an error.
   */
  private watch(): Promise<number> {
    const { spec } = this;
    const run: WatchRun = { startedMs: Date.now(), read: 0, events: 0, gone: false };
    const query = {
      allowWatchBookmarks: true,
      ...(this.resourceVersion ? { resourceVersion: this.resourceVersion } : {}),
      ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
    };
    return new Promise<number>((resolve, reject) => {
      const onDone = (err: unknown) => {
        clearTimeout(this.lasting);
        const end = watchEnd(run, err, Date.now());
        if (end instanceof Error) return reject(end);
        if (end === 'expired') this.resourceVersion = undefined;
        // Lasted SHORT_WATCH_MS (its timer may not have run yet on a busy event loop) or delivered an event.
        else if (run.read > 0 || Date.now() - run.startedMs >= SHORT_WATCH_MS) this.recovered();
        resolve(run.read);
      };
      this.watchRequest = this.watcher.watch(spec.path, query, (phase, object: KubernetesObject) => this.onEvent(run, phase, object), onDone);
    });
  }

  /** Waits `ms`, or less if stop() is called. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.waiting = { timer, resolve };
    });
  }

  private async failed(operation: 'list' | 'watch', err: unknown): Promise<void> {
    const { spec } = this;
    this.counts[operation]++;
    const delayMs = backoffMs(this.failures, this.timing.initialBackoffMs, this.timing.maxBackoffMs);
    this.failures++;
    const synced = spec.synced();
    const failure = this.describeFailure(operation, err);
    const repeated = this.failureLog.record(failure);
    (repeated ? spec.logger.debug.bind(spec.logger) : spec.logger.warn.bind(spec.logger))(
      { ...failure, retryInMs: delayMs, synced },
      synced
        ? `${spec.what} list or watch failed; ${spec.degraded.stale} until it reconnects`
        : `${spec.what} list failed; ${spec.degraded.unsynced} until it succeeds`,
    );
    await this.pause(delayMs);
  }

  /**
   * A list (when no resourceVersion is held) then a watch. A watch from a fresh list that
   * expires at once twice in a row throws {@link ExpiredAtOnceError}, with the failures of
   * before, so the relist backs off. Returns whether this round expired at once.
   */
  private async listAndWatch(expiredAtOnceBefore: boolean, setOperation: (op: 'watch') => void): Promise<boolean> {
    const listed = this.resourceVersion === undefined;
    // A list resets the failures; a relist paced for an expiry at once keeps them, so its backoff grows.
    const failuresBefore = this.failures;
    if (listed) await this.list();
    setOperation('watch');
    const watchedMs = Date.now();
    const read = this.stopped ? 0 : await this.watch();
    const expiredAtOnce = listed && this.resourceVersion === undefined && !this.stopped && read === 0 && Date.now() - watchedMs < SHORT_WATCH_MS;
    if (expiredAtOnce && expiredAtOnceBefore) {
      this.failures = failuresBefore;
      throw new ExpiredAtOnceError();
    }
    return expiredAtOnce;
  }

  private async run(): Promise<void> {
    let continueExpiredBefore = false;
    let expiredAtOnceBefore = false;
    while (!this.stopped) {
      let operation: 'list' | 'watch' = 'list';
      try {
        expiredAtOnceBefore = await this.listAndWatch(expiredAtOnceBefore, (op) => (operation = op));
      } catch (err) {
        if (this.stopped) return; // stop() aborts the list or watch, which reports as an error
        if (err instanceof ExpiredAtOnceError) expiredAtOnceBefore = true;
        // A continue token that expired mid-list is not a failure: list again at once, as client-go's pager does.
        // Twice in a row, it is one (the pages come too slowly), and backs off.
        const continueExpired = err instanceof ContinueExpiredError;
        const again = continueExpired && continueExpiredBefore;
        continueExpiredBefore = continueExpired;
        if (continueExpired && !again) {
          this.spec.logger.info(`${this.spec.what} ${(err as Error).message}`);
          continue;
        }
        await this.failed(operation, err);
      }
    }
  }
}

/**
 * Starts listing and watching through `config` (from `loadKubeConfig`). Returns at once; the
 * first list completes in the background.
 */
export function startInformer(config: KubeConfig, spec: InformerSpec, timing: InformerTiming = {}): Informer {
  const reflector = new Reflector(config, spec, timing).start();
  // A plain object, so the caches can spread it into theirs.
  return {
    lastSyncSeconds: () => reflector.lastSyncSeconds(),
    errors: () => reflector.errors(),
    lastFailure: () => reflector.lastFailure(),
    stop: () => reflector.stop(),
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
