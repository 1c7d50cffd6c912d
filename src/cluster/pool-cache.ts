/**
 * The SpiderIPPool cache the server's reviews read: a `@kubernetes/client-node` informer
 * (list, then watch from the list's resourceVersion) on
 * `spiderpool.spidernet.io/v2beta1` `spiderippools`, feeding a {@link PoolIndex}. Reviews
 * only read memory; the cache's I/O never blocks or fails a review (informer.ts: a paginated,
 * streamed list, retries with backoff, list and watch timeouts). The server is not ready
 * until the first list completes, for at most the sync wait; past it, pair checks are
 * skipped with a warning; after an error, the last known pools are used. The stored pools'
 * violations are kept current from the same events (audit/pool-violations.ts), for the
 * violation gauges.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { PoolViolationTracker } from '../store/pool-violations.js';
import { DEFAULT_SYNC_WAIT_MS } from '../defaults.js';
import { unsyncedEffect, type UnsyncedPools } from '../rules/pool-pair.js';
import type { ReadinessCheck } from '../kubernetes/healthz.js';
import { summarizeApiError } from './api-error.js';
import { describeApiFailure, registerInformerErrors, startInformer, type CacheFailure, type InformerErrors, type InformerTiming } from './informer.js';

import { nameOf } from '../kubernetes/metadata.js';
import { PoolIndex, slimPool } from '../store/pool-index.js';
import { EVENT_LOOP_SLICING } from '../store/slices.js';

/** The resource the cache lists and watches (cluster-scoped). */
export const SPIDERIPPOOL_RESOURCE = { group: 'spiderpool.spidernet.io', version: 'v2beta1', plural: 'spiderippools' } as const;
/** The collection's path, listed and watched. */
export const POOLS_PATH = `/apis/${SPIDERIPPOOL_RESOURCE.group}/${SPIDERIPPOOL_RESOURCE.version}/${SPIDERIPPOOL_RESOURCE.plural}`;

export interface PoolCacheOptions extends InformerTiming {
  logger: Logger;
  /** How long readiness waits for the first list, in milliseconds ({@link DEFAULT_SYNC_WAIT_MS}). */
  syncWaitMs?: number;
  /** What IaaS pool writes get until the first list (`serve --unsynced-pools`), for the log lines; default `Warn`. */
  unsyncedPools?: UnsyncedPools;
}

/** Errors by what failed, since the start. */
type PoolCacheErrors = InformerErrors;

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
  /** True until the first list completes or the sync wait has passed: readiness waits meanwhile. */
  waitingForSync(): boolean;
  /** How long readiness waits for the first list, in milliseconds. */
  readonly syncWaitMs: number;
  /** What IaaS pool writes get until the first list. */
  readonly unsyncedPools: UnsyncedPools;
  /** Stops watching and retrying; the index keeps what it has. */
  stop(): Promise<void>;
}

/** The resource as an operator reads it in a message: `spiderippools.spiderpool.spidernet.io`. */
const RESOURCE_NAME = `${SPIDERIPPOOL_RESOURCE.plural}.${SPIDERIPPOOL_RESOURCE.group}`;

/**
 * Describes a failed list or watch in one line. A 404 means the CRD (or the v2beta1
 * version of it) is not served; a 403 that the RBAC in deploy/base/rbac.yaml is not in place
 * for the webhook's identity, with the verb refused and the resource from the API
 * server's Status `details` (a watch's answer has no body: then the resource watched).
 */
function describeCacheFailure(operation: 'list' | 'watch', err: unknown): CacheFailure {
  const { statusCode, reason, message, details } = summarizeApiError(err);
  // "404 page not found" (a path the API server does not serve) says its code already.
  const answered =
    statusCode === undefined ? '' : message.startsWith(`${statusCode} `) ? ` (${message})` : ` (${statusCode}${reason ? ` ${reason}` : ''}: ${message})`;
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
  return describeApiFailure(operation, err);
}

/**
 * Starts listing and watching SpiderIPPools through `config` (from `loadKubeConfig`).
 * Returns at once; the first list completes in the background.
 */
export function startPoolCache(config: KubeConfig, options: PoolCacheOptions): PoolCache {
  const { logger, syncWaitMs = DEFAULT_SYNC_WAIT_MS, unsyncedPools = 'Warn', ...timing } = options;
  const unsynced = unsyncedEffect(unsyncedPools);
  const index = new PoolIndex();
  // The pass over every pool after a list yields every few ms: probes never wait on it.
  const violations = new PoolViolationTracker(index, EVENT_LOOP_SLICING, (err) =>
    logger.error(
      { err: (err as Error | undefined)?.message ?? String(err) },
      "judging the stored SpiderIPPools failed; the violation gauges keep each pool's last judgement until the next list or event",
    ),
  );
  const warnRefused = (names: readonly string[]) => {
    for (const name of names) logger.warn({ name }, 'SpiderIPPool not shaped as expected; pair checks treat it as absent');
  };
  const informer = startInformer(
    config,
    {
      logger,
      what: 'SpiderIPPool',
      path: POOLS_PATH,
      slim: (object) => (slimPool(object) ?? object) as KubernetesObject,
      // Stored in slices: 50 000 pools in one turn blocked the event loop for ~1 s on a loaded machine.
      replaceAll: async (items) => warnRefused(await index.replaceAllInSlices(items, EVENT_LOOP_SLICING)),
      upsert: (object) => {
        if (!index.upsert(object)) warnRefused([nameOf(object)]);
      },
      remove: (object) => index.remove(nameOf(object)),
      synced: () => index.hasSynced(),
      degraded: { unsynced, stale: 'pair checks use the last known pools' },
      describeFailure: describeCacheFailure,
    },
    timing,
  );
  // After Gatekeeper's readiness tracker: ready once the cache has synced, so that a new
  // replica never skips the pair checks its older siblings still run; but bounded, so that
  // an API server that cannot be listed never keeps every replica out.
  let waiting = true;
  const wait = setTimeout(() => {
    waiting = false;
    if (index.hasSynced()) return;
    const failure = informer.lastFailure();
    logger.warn(
      { waitedMs: syncWaitMs, ...(failure ?? {}) },
      `SpiderIPPool cache not synced after ${syncWaitMs / 1000} s (${failure === undefined ? 'the list has not completed yet' : `the ${failure.operation} failed: ${failure.message}`}); ` +
        `ready anyway: ${unsynced} until it syncs`,
    );
  }, syncWaitMs);
  wait.unref();
  return {
    pools: index,
    violations,
    ...informer,
    syncWaitMs,
    unsyncedPools,
    waitingForSync: () => waiting && !index.hasSynced(),
    stop: async () => {
      clearTimeout(wait);
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
 * their pools), `spiderpool_iaas_webhook_pool_violations_errors_total` (judgements of a
 * list or event that threw: {@link PoolViolationTracker.failedJudgements}). The violation counts are kept current by the cache's events; a scrape
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
  new Counter({
    name: 'spiderpool_iaas_webhook_pool_violations_errors_total',
    help: "Judgements of stored SpiderIPPools (after a list or an event) that failed (logged); the violation gauges keep each pool's last judgement.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(cache.violations.failedJudgements);
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
  registerInformerErrors(
    registry,
    'spiderpool_iaas_webhook_pool_cache_errors_total',
    'SpiderIPPool list and watch errors (each is retried with backoff).',
    () => cache.errors(),
  );
}

/**
 * `/readyz?verbose` line `[+]pool-cache ok` once synced, else `[-]pool-cache failed: …`.
 * It fails readiness while the cache waits for its first list (at most
 * {@link PoolCache.syncWaitMs}); after that wait, and once synced for good (a later list or
 * watch failure keeps the last known pools), it is informational: IaaS pool writes are refused
 * or warned (`unsyncedPools`), whereas an unready webhook (failurePolicy Fail) would block every write.
 */
export function poolCacheReadinessCheck(cache: Pick<PoolCache, 'pools' | 'waitingForSync' | 'syncWaitMs' | 'unsyncedPools'>): ReadinessCheck {
  return {
    name: 'pool-cache',
    get informational() {
      return !cache.waitingForSync();
    },
    check: () =>
      cache.pools.hasSynced()
        ? undefined
        : cache.waitingForSync()
          ? `SpiderIPPools not listed yet; readiness waits for them, up to ${cache.syncWaitMs / 1000} s, so that no review skips the dual-stack pair checks`
          : `SpiderIPPools not listed yet; ${unsyncedEffect(cache.unsyncedPools)} until they are (readiness stopped waiting after ${cache.syncWaitMs / 1000} s)`,
  };
}
