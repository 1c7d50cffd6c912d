/**
 * client-node's `Watch` with the bounds client-go's reflector puts on a watch, for the
 * SpiderIPPool informer (`ListWatch` takes any object with this `watch` method):
 *
 * - it asks the API server to end the watch after 5-10 minutes (`timeoutSeconds`, as
 *   client-go's `minWatchTimeout` × (1 + rand)), so a healthy watch always ends or speaks
 *   within that time;
 * - a watch whose response has not begun within `headersMs`, or with no event and no end
 *   for `idleMs` (longer than the above), is given up as dead (an API server that never
 *   sends the response headers, a half-open connection), which the informer sees as a watch
 *   error and retries; its request is aborted, so the socket is released even before the
 *   response began. client-node 1.4 itself has no timeout (its `Watch` overwrites its own
 *   `AbortSignal.timeout` and the signal of the fetch options: {@link abortingConfig});
 * - a watch that cannot even start (an exec credential plugin that fails, no current
 *   cluster) is reported through `done`, like any watch error, instead of rejecting
 *   `ListWatch.start()` (an unhandled rejection would end the process);
 * - an event whose object has no `metadata` object (or, for ADDED/MODIFIED/DELETED, no
 *   `metadata.name` string; for ERROR, no object at all) is dropped and reported:
 *   `ListWatch` dereferences the object inside its async stream handler, where a
 *   TypeError would be an unhandled rejection and end the process.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';

/**
 * How long a watch's response may take to begin, in milliseconds: the API server sends
 * the headers of a watch at once (client-node 1.4 meant 30 s too, watch.js).
 */
const WATCH_HEADERS_TIMEOUT_MS = 30_000;

/**
 * `config` whose fetch options also abort when `signal` does: client-node's `Watch.watch`
 * replaces the options' `signal` by its own controller's (watch.js), so the property keeps
 * both: what client-node sets, and `signal`.
 */
function abortingConfig(config: KubeConfig, signal: AbortSignal): KubeConfig {
  const applyToFetchOptions: KubeConfig['applyToFetchOptions'] = async (options) => {
    const init = await config.applyToFetchOptions(options);
    let combined = signal;
    Object.defineProperty(init, 'signal', {
      configurable: true,
      enumerable: true,
      get: () => combined,
      set: (theirs: AbortSignal | undefined) => (combined = theirs === undefined ? signal : AbortSignal.any([theirs, signal])),
    });
    return init;
  };
  return new Proxy(config, {
    get: (target, key) => {
      if (key === 'applyToFetchOptions') return applyToFetchOptions;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** client-go's `minWatchTimeout`: the API server is asked to end each watch after 1-2 times this. */
const MIN_WATCH_TIMEOUT_SECONDS = 300;

/** The longest watch the API server is asked for, in milliseconds. */
export const MAX_WATCH_TIMEOUT_MS = 2 * MIN_WATCH_TIMEOUT_SECONDS * 1000;

/** What the cache learns from the watch besides its events. */
export interface WatchActivity {
  /** An event arrived (not an `ERROR` event), or the watch opened or ended normally: the cache is current. */
  current(what: 'event' | 'opened' | 'ended'): void;
  /** An event was dropped because its object is not shaped like a Kubernetes object. */
  malformed(phase: string): void;
}

/** Whether `object` can go through `ListWatch`'s cache for an event of `phase` without throwing. */
export function isWatchableObject(phase: string, object: unknown): boolean {
  if (phase === 'ERROR') return typeof object === 'object' && object !== null; // a Status; ListWatch reads its code
  const metadata = (object as { metadata?: unknown } | null)?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return false;
  return phase === 'BOOKMARK' || typeof (metadata as { name?: unknown }).name === 'string';
}

type WatchQuery = Parameters<Watch['watch']>[1];
type WatchCallback = Parameters<Watch['watch']>[2];
type WatchDone = Parameters<Watch['watch']>[3];

/** A watch given up after `idleMs` without an event or an end. */
class WatchSilentError extends Error {
  constructor(idleMs: number) {
    super(`no event and no end from the watch for ${Math.round(idleMs / 1000)} s; the connection is taken for dead`);
  }
}

/** See the module comment; `idleMs` must exceed {@link MAX_WATCH_TIMEOUT_MS} in production. */
export class TimedWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly idleMs: number,
    private readonly activity: WatchActivity,
    private readonly headersMs: number = WATCH_HEADERS_TIMEOUT_MS,
  ) {
    super(config);
  }

  /**
   * `Watch.watch` with the bounds above: resolves, as client-node's does, once the response
   * has begun (or the watch has failed), with a controller that aborts it.
   */
  override async watch(path: string, queryParams: WatchQuery, callback: WatchCallback, done: WatchDone): Promise<AbortController> {
    const own = new AbortController();
    // Aborts the request itself, also before its response began (client-node's `inner` exists only after).
    const request = new AbortController();
    let inner: AbortController | undefined;
    let finished = false;
    let silence: NodeJS.Timeout | undefined;
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(silence);
      inner?.abort();
      request.abort();
      if (err === null || err === undefined) this.activity.current('ended');
      done(err);
    };
    const listen = (limitMs = this.idleMs) => {
      clearTimeout(silence);
      silence = setTimeout(() => finish(new WatchSilentError(limitMs)), limitMs);
      silence.unref();
    };
    // Aborting ours aborts client-node's, whose done() then reports it (as client-node does).
    own.signal.addEventListener('abort', () => {
      inner?.abort();
      request.abort();
    });
    const timeoutSeconds = Math.floor(MIN_WATCH_TIMEOUT_SECONDS * (1 + Math.random()));
    const onEvent: WatchCallback = (phase, apiObj, watchObj) => {
      if (finished) return;
      listen();
      if (!isWatchableObject(phase, apiObj)) return this.activity.malformed(phase);
      if (phase !== 'ERROR') this.activity.current('event');
      callback(phase, apiObj, watchObj);
    };
    listen(Math.min(this.headersMs, this.idleMs));
    try {
      inner = await new Watch(abortingConfig(this.config, request.signal)).watch(path, { ...queryParams, timeoutSeconds }, onEvent, finish);
    } catch (err) {
      finish(err);
      return own;
    }
    if (finished || own.signal.aborted) {
      inner.abort();
      return own;
    }
    listen();
    this.activity.current('opened');
    return own;
  }
}
