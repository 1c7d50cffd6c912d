/**
 * The SpiderIPPool cache the server's reviews read: a `@kubernetes/client-node` informer
 * (list, then watch from the list's resourceVersion) on
 * `spiderpool.spidernet.io/v2beta1` `spiderippools`, feeding a {@link PoolIndex}. Reviews
 * only read memory; the cache's I/O never blocks or fails a review. Until the first list
 * completes, pair checks are skipped with a warning. After a list or watch error it
 * retries with exponential backoff (as client-go's reflector does), keeping the last
 * known pools meanwhile; an expired resourceVersion (410 Gone) makes it list afresh.
 * A list that takes longer than `listTimeoutMs` and a watch silent for longer than
 * `watchIdleMs` count as errors (timed-watch.ts), so a dead connection is retried
 * instead of leaving the cache stale without a sign.
 */
import {
  CustomObjectsApi,
  ListWatch,
  Observable,
  type KubeConfig,
  type ObservableMiddleware,
  type RequestContext, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { PoolViolationTracker } from '../audit/pool-violations.js';
import type { ReadinessCheck } from '../server/readiness.js';
import { summarizeApiError } from './api-error.js';
import { PoolIndex, nameOf } from './pool-index.js';
import { isWatchableObject, MAX_WATCH_TIMEOUT_MS, TimedWatch } from './timed-watch.js';

/** The resource the cache lists and watches (cluster-scoped). */
export const SPIDERIPPOOL_RESOURCE = { group: 'spiderpool.spidernet.io', version: 'v2beta1', plural: 'spiderippools' } as const;
const WATCH_PATH = `/apis/${SPIDERIPPOOL_RESOURCE.group}/${SPIDERIPPOOL_RESOURCE.version}/${SPIDERIPPOOL_RESOURCE.plural}`;

/** How long stop() waits for a watch request in flight to get its response, in milliseconds. */
const STOP_WAIT_MS = 2000;

export interface PoolCacheOptions {
  logger: Logger;
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

/** Errors by what failed, since the start. */
export interface PoolCacheErrors {
  list: number;
  watch: number;
}

export interface PoolCache {
  /** What reviews read (pass as `ReviewOptions.pools`). */
  pools: PoolIndex;
  /** The stored pools' violations, kept current on every list and watch event. */
  violations: PoolViolationTracker;
  /**
   * When the cache was last known current, in Unix seconds: a list succeeded, or a watch
   * opened, delivered an event or ended normally. `undefined` before the first list.
   */
  lastSyncSeconds(): number | undefined;
  /** List and watch errors since the start. */
  errors(): PoolCacheErrors;
  /** Stops watching and retrying; the index keeps what it has. */
  stop(): Promise<void>;
}

/** The resource as an operator reads it in a message: `spiderippools.spiderpool.spidernet.io`. */
const RESOURCE_NAME = `${SPIDERIPPOOL_RESOURCE.plural}.${SPIDERIPPOOL_RESOURCE.group}`;

/** A failed list or watch, described for the log. */
export interface CacheFailure {
  operation: 'list' | 'watch';
  statusCode?: number;
  /** One line that says what is wrong and, for the failures an operator can fix, what to do. */
  message: string;
}

/**
 * Describes a failed list or watch in one line. A 404 means the CRD (or the v2beta1
 * version of it) is not served; a 403 that the RBAC in deploy/base/rbac.yaml is not in place
 * for the webhook's identity, with the verb refused and the resource from the API
 * server's Status `details` (a watch's answer has no body: then the resource watched).
 */
export function describeCacheFailure(operation: 'list' | 'watch', err: unknown): CacheFailure {
  const { statusCode, reason, message, details } = summarizeApiError(err);
  // "404 page not found" (a path the API server does not serve) says its code already.
  const answered = statusCode === undefined ? '' : message.startsWith(`${statusCode} `) ? ` (${message})` : ` (${statusCode}${reason ? ` ${reason}` : ''}: ${message})`;
  const withStatus = (text: string): CacheFailure => ({ operation, ...(statusCode === undefined ? {} : { statusCode }), message: text });
  if (statusCode === 404) {
    return withStatus(
      `Spiderpool's ${SPIDERIPPOOL_RESOURCE.group}/${SPIDERIPPOOL_RESOURCE.version} CRD is not installed: the API server does not serve ` +
        `${RESOURCE_NAME} ${SPIDERIPPOOL_RESOURCE.version}${answered}; install Spiderpool (a release whose SpiderIPPool CRD serves ${SPIDERIPPOOL_RESOURCE.version})`,
    );
  }
  if (statusCode === 403) {
    const resource = details?.kind ? `${details.kind}${details.group ? `.${details.group}` : ''}` : RESOURCE_NAME;
    return withStatus(
      `the ClusterRole and ClusterRoleBinding from deploy/base/rbac.yaml are missing: the API server forbids "${operation}" on ${resource}` +
        `${answered}; re-apply your overlay to create them (get, list, watch on ${RESOURCE_NAME}, bound to the webhook's ServiceAccount)`,
    );
  }
  if (statusCode === 401) {
    return withStatus(`the API server does not accept the webhook's credentials${answered}; check the service-account token or the kubeconfig's user`);
  }
  return withStatus(statusCode === undefined || message.includes(String(statusCode)) ? message : `${statusCode}: ${message}`);
}

/**
 * Request options that abort the request after `ms` milliseconds, so a list stuck on a
 * dead connection fails and is retried instead of hanging for good (client-node sets no
 * timeout on it).
 */
export function abortAfter(ms: number): Parameters<CustomObjectsApi['listClusterCustomObject']>[1] {
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
 * Starts listing and watching SpiderIPPools through `config` (from `loadKubeConfig`).
 * Returns at once; the first list completes in the background.
 */
export function startPoolCache(config: KubeConfig, options: PoolCacheOptions): PoolCache {
  const { logger } = options;
  const initialBackoffMs = options.initialBackoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const listTimeoutMs = options.listTimeoutMs ?? 60_000;
  const watchIdleMs = options.watchIdleMs ?? MAX_WATCH_TIMEOUT_MS + 60_000;
  const index = new PoolIndex();
  const violations = new PoolViolationTracker(index);
  const api = config.makeApiClient(CustomObjectsApi);
  const errors: PoolCacheErrors = { list: 0, watch: 0 };
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
    logger.info({ failedAttempts: failedSinceLogged }, 'SpiderIPPool list and watch work again');
    lastLogged = undefined;
    failedSinceLogged = 0;
  };
  const current = () => {
    recovered();
    if (index.hasSynced()) lastSyncSeconds = Date.now() / 1000;
  };

  const warnRefused = (names: readonly string[]) => {
    for (const name of names) logger.warn({ name }, 'SpiderIPPool not shaped as expected; pair checks treat it as absent');
  };

  const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
    let result: KubernetesListObject<KubernetesObject>;
    try {
      result = (await api.listClusterCustomObject({ ...SPIDERIPPOOL_RESOURCE }, abortAfter(listTimeoutMs))) as KubernetesListObject<KubernetesObject>;
    } catch (err) {
      listFailed = true;
      throw err;
    }
    if (!Array.isArray(result?.items)) {
      listFailed = true;
      throw new Error('the SpiderIPPool list has no items array');
    }
    // Only objects ListWatch can key by name reach it (it would throw on others, ending the process).
    const items = result.items.filter((item) => isWatchableObject('ADDED', item));
    if (items.length < result.items.length) logger.warn({ dropped: result.items.length - items.length }, 'SpiderIPPool list items without metadata.name ignored');
    const firstSync = !index.hasSynced();
    warnRefused(index.replaceAll(items));
    failures = 0;
    current();
    (firstSync ? logger.info.bind(logger) : logger.debug.bind(logger))({ pools: index.size }, 'SpiderIPPool cache listed');
    return { ...result, items };
  };

  const watch = new TimedWatch(config, watchIdleMs, {
    current: (what) => {
      // The first event after a reconnect shows the connection works again: the next
      // error starts the backoff afresh.
      if (what === 'event') failures = 0;
      current();
    },
    malformed: (phase) => logger.warn({ phase }, 'SpiderIPPool watch event without metadata.name ignored'),
  });
  const informer = new ListWatch<KubernetesObject>(WATCH_PATH, watch, list, false);
  const store = (object: KubernetesObject) => {
    if (!index.upsert(object)) warnRefused([nameOf(object)]);
  };
  const failed = (err: unknown) => {
    if (stopped) return; // stop() aborts the watch, which reports as an error
    const operation = listFailed ? 'list' : 'watch';
    listFailed = false;
    errors[operation]++;
    const delayMs = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failures);
    failures++;
    const failure = describeCacheFailure(operation, err);
    const key = JSON.stringify(failure);
    const repeated = key === lastLogged;
    lastLogged = key;
    failedSinceLogged++;
    (repeated ? logger.debug.bind(logger) : logger.warn.bind(logger))(
      { ...failure, retryInMs: delayMs, synced: index.hasSynced() },
      index.hasSynced()
        ? 'SpiderIPPool list or watch failed; pair checks use the last known pools until it reconnects'
        : 'SpiderIPPool list failed; pair checks are skipped with a warning until it succeeds',
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
  informer.on('add', store);
  informer.on('update', store);
  informer.on('delete', (object) => index.remove(nameOf(object)));
  informer.on('error', failed);
  start();

  return {
    pools: index,
    violations,
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

/**
 * Registers, on `registry`, read when scraped:
 * `spiderpool_iaas_webhook_pool_cache_synced` (1 once the cache has listed the pools, else
 * 0: pair checks are skipped with a warning), `spiderpool_iaas_webhook_pool_cache_pools`
 * (pools held), `spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds` (Unix
 * time the cache was last known current, see {@link PoolCache.lastSyncSeconds}; 0
 * before the first list), `spiderpool_iaas_webhook_pool_cache_errors_total{operation="list"|"watch"}`,
 * `spiderpool_iaas_webhook_pool_violations{rule}` (violations of the stored IaaS pools, as a
 * CREATE would judge them, every rule listed) and
 * `spiderpool_iaas_webhook_pool_broken_pairs` (dual-stack pairs with a violation between
 * their pools). The violation counts are kept current by the cache's events; a scrape
 * only reads them.
 */
export function registerPoolCacheMetrics(registry: Registry, cache: Pick<PoolCache, 'pools' | 'violations' | 'lastSyncSeconds' | 'errors'>): void {
  new Gauge({
    name: 'spiderpool_iaas_webhook_pool_violations',
    help: 'Violations of the webhook rules by stored IaaS SpiderIPPools (judged as a CREATE would be), by rule; 0 until the cache has synced.',
    labelNames: ['rule'] as const,
    registers: [registry],
    collect() {
      for (const [rule, count] of cache.violations.counts()) this.set({ rule }, count);
    },
  });
  new Gauge({
    name: 'spiderpool_iaas_webhook_pool_broken_pairs',
    help: 'Dual-stack pairs of stored SpiderIPPools with at least one violation between the two pools (a traditional sibling included).',
    registers: [registry],
    collect() {
      this.set(cache.violations.brokenPairs());
    },
  });
  new Gauge({
    name: 'spiderpool_iaas_webhook_pool_cache_synced',
    help: 'Whether the SpiderIPPool cache has listed the pools (1) or not (0, dual-stack pair checks are skipped with a warning).',
    registers: [registry],
    collect() {
      this.set(cache.pools.hasSynced() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'spiderpool_iaas_webhook_pool_cache_pools',
    help: 'SpiderIPPools held by the cache.',
    registers: [registry],
    collect() {
      this.set(cache.pools.size);
    },
  });
  new Gauge({
    name: 'spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds',
    help: 'Unix time the SpiderIPPool cache was last known current: a list succeeded, or a watch opened, delivered an event or ended normally.',
    registers: [registry],
    collect() {
      // 0 before the first list: "never", which a staleness alert sees as stale, as it should.
      this.set(cache.lastSyncSeconds() ?? 0);
    },
  });
  new Counter({
    name: 'spiderpool_iaas_webhook_pool_cache_errors_total',
    help: 'SpiderIPPool list and watch errors (each is retried with backoff).',
    labelNames: ['operation'] as const,
    registers: [registry],
    collect() {
      const errors = cache.errors();
      this.reset();
      this.inc({ operation: 'list' }, errors.list);
      this.inc({ operation: 'watch' }, errors.watch);
    },
  });
}

/**
 * `/readyz?verbose` line `[+]pool-cache ok` once synced, else `[-]pool-cache failed: …`;
 * informational, so the server stays ready: the pair checks degrade to warnings while the
 * cache is not synced, whereas an unready webhook (failurePolicy Fail) would block writes.
 */
export function poolCacheReadinessCheck(cache: Pick<PoolCache, 'pools'>): ReadinessCheck {
  return {
    name: 'pool-cache',
    informational: true,
    check: () =>
      cache.pools.hasSynced()
        ? undefined
        : 'SpiderIPPools not listed yet; dual-stack pair checks are skipped with a warning until they are (readiness does not wait for it)',
  };
}
