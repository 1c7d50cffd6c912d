/**
 * The SpiderIPPool cache the server's reviews read: a `@kubernetes/client-node` informer
 * (list, then watch from the list's resourceVersion) on
 * `spiderpool.spidernet.io/v2beta1` `spiderippools`, feeding a {@link PoolIndex}. Reviews
 * only read memory; the cache's I/O never blocks or fails a review. Until the first list
 * completes, pair checks are skipped with a warning. After a list or watch error it
 * retries with exponential backoff (as client-go's reflector does), keeping the last
 * known pools meanwhile; an expired resourceVersion (410 Gone) makes it list afresh.
 */
import { CustomObjectsApi, makeInformer, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { ReadinessCheck } from '../server/readiness.js';
import { PoolIndex, nameOf } from './pool-index.js';

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
}

export interface PoolCache {
  /** What reviews read (pass as `ReviewOptions.pools`). */
  pools: PoolIndex;
  /** Whether a complete list has been stored. */
  hasSynced(): boolean;
  /** Stops watching and retrying; the index keeps what it has. */
  stop(): Promise<void>;
}

/** An error from client-node, for the log: its message and HTTP status, never a stack. */
function describeError(err: unknown): { message: string; statusCode?: number } {
  const e = err as { message?: unknown; statusCode?: unknown; code?: unknown } | undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const status = typeof e?.statusCode === 'number' ? e.statusCode : typeof e?.code === 'number' ? e.code : undefined;
  return status === undefined ? { message } : { message, statusCode: status };
}

/**
 * Starts listing and watching SpiderIPPools through `config` (from `loadKubeConfig`).
 * Returns at once; the first list completes in the background.
 */
export function startPoolCache(config: KubeConfig, options: PoolCacheOptions): PoolCache {
  const { logger } = options;
  const initialBackoffMs = options.initialBackoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const index = new PoolIndex();
  const api = config.makeApiClient(CustomObjectsApi);
  let failures = 0;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  // The informer's start(): it resolves once the watch request has its response headers.
  let starting: Promise<void> = Promise.resolve();
  const start = () => {
    starting = informer.start();
  };

  const warnRefused = (names: readonly string[]) => {
    for (const name of names) logger.warn({ name }, 'SpiderIPPool not shaped as expected; pair checks treat it as absent');
  };

  const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
    const result = (await api.listClusterCustomObject({ ...SPIDERIPPOOL_RESOURCE })) as KubernetesListObject<KubernetesObject>;
    const firstSync = !index.hasSynced();
    warnRefused(index.replaceAll(result.items ?? []));
    failures = 0;
    (firstSync ? logger.info.bind(logger) : logger.debug.bind(logger))({ pools: index.size }, 'SpiderIPPool cache listed');
    return result;
  };

  const informer = makeInformer(config, WATCH_PATH, list);
  const store = (object: KubernetesObject) => {
    if (!index.upsert(object)) warnRefused([nameOf(object)]);
  };
  informer.on('add', store);
  informer.on('update', store);
  informer.on('delete', (object) => index.remove(nameOf(object)));
  informer.on('error', (err: unknown) => {
    if (stopped) return; // stop() aborts the watch, which reports as an error
    const delayMs = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failures);
    failures++;
    logger.warn(
      { ...describeError(err), retryInMs: delayMs, synced: index.hasSynced() },
      index.hasSynced()
        ? 'SpiderIPPool watch failed; pair checks use the last known pools until it reconnects'
        : 'SpiderIPPool list failed; pair checks are skipped with a warning until it succeeds',
    );
    retry = setTimeout(start, delayMs);
    retry.unref();
  });
  start();

  return {
    pools: index,
    hasSynced: () => index.hasSynced(),
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
 * Registers `spiderpool_iaas_webhook_pool_cache_synced` (1 once the cache has listed the
 * pools, else 0: pair checks are skipped with a warning) and
 * `spiderpool_iaas_webhook_pool_cache_pools` (pools held) on `registry`; both are read
 * when scraped.
 */
export function registerPoolCacheMetrics(registry: Registry, cache: Pick<PoolCache, 'pools' | 'hasSynced'>): void {
  new Gauge({
    name: 'spiderpool_iaas_webhook_pool_cache_synced',
    help: 'Whether the SpiderIPPool cache has listed the pools (1) or not (0, dual-stack pair checks are skipped with a warning).',
    registers: [registry],
    collect() {
      this.set(cache.hasSynced() ? 1 : 0);
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
}

/**
 * `/readyz?verbose` line `[+]pool-cache ok` once synced, else `[-]pool-cache failed: …`;
 * informational, so the server stays ready: the pair checks degrade to warnings while the
 * cache is not synced, whereas an unready webhook (failurePolicy Fail) would block writes.
 */
export function poolCacheReadinessCheck(cache: Pick<PoolCache, 'hasSynced'>): ReadinessCheck {
  return {
    name: 'pool-cache',
    informational: true,
    check: () =>
      cache.hasSynced()
        ? undefined
        : 'SpiderIPPools not listed yet; dual-stack pair checks are skipped with a warning until they are (readiness does not wait for it)',
  };
}
