/**
 * The informer wiring against a fake API server on loopback (port 0): list, watch events,
 * a failed list retried with backoff, and a watch that ends and resumes. Bounded: every
 * wait polls for at most 5 s, and the server and cache are stopped after each test.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { poolCacheReadinessCheck, registerPoolCacheMetrics, startPoolCache, type PoolCache } from '../../src/cluster/pool-cache.js';
import { FakeApiServer, kubeConfigFor, pool } from './fake-api-server.js';

/** Polls `condition` every 10 ms for at most 5 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 5000; waited += 10) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

const logger = pino({ level: 'silent' });
let api: FakeApiServer;
let cache: PoolCache | undefined;

beforeEach(() => {
  api = new FakeApiServer();
});

afterEach(async () => {
  await cache?.stop();
  cache = undefined;
  await api.stop();
});

describe('the SpiderIPPool cache against a fake API server', () => {
  it('is unsynced until the list completes, then follows watch events', async () => {
    api.lists = [{ status: 200, items: [pool('pool-a-v6', '5', 'pool-a')], resourceVersion: '7' }];
    const url = await api.start();
    cache = startPoolCache(kubeConfigFor(url), { logger });
    expect(cache.pools.unavailable()).toMatch(/has not synced/); // the review path never waits for the list
    await until(() => cache!.hasSynced(), 'synced');
    expect(cache.pools.unavailable()).toBeUndefined();
    expect(cache.pools.get('pool-a-v6')?.metadata.name).toBe('pool-a-v6');
    expect(cache.pools.pairedWith('pool-a').map((p) => p.metadata.name)).toEqual(['pool-a-v6']);

    await until(() => api.openWatches === 1, 'the watch is open');
    expect(api.watchQueries[0]!.get('resourceVersion')).toBe('7');
    api.send('ADDED', pool('pool-b', '8'));
    await until(() => cache!.pools.get('pool-b') !== undefined, 'pool-b added');
    api.send('MODIFIED', pool('pool-b', '9', 'pool-a'));
    await until(() => cache!.pools.pairedWith('pool-a').length === 2, 'pool-b paired');
    api.send('DELETED', pool('pool-a-v6', '10'));
    await until(() => cache!.pools.get('pool-a-v6') === undefined, 'pool-a-v6 deleted');
    expect(cache.pools.size).toBe(1);
  });

  it('drops an object that is not shaped like a SpiderIPPool instead of judging with it', async () => {
    api.lists = [{ status: 200, items: [pool('good', '1'), { metadata: { name: 'bad' }, spec: { nodeName: 'not-a-list' } }] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => cache!.hasSynced(), 'synced');
    expect(cache.pools.get('good')).toBeDefined();
    expect(cache.pools.get('bad')).toBeUndefined();
  });

  it('retries a failed list with backoff, and syncs once it succeeds', async () => {
    api.lists = [{ status: 503 }, { status: 500 }, { status: 200, items: [pool('pool-a-v6', '3')] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 20 });
    await until(() => cache!.hasSynced(), 'synced after retries');
    expect(api.listCalls).toBe(3);
    expect(cache.pools.get('pool-a-v6')).toBeDefined();
  });

  it('resumes watching after the API server ends the watch, keeping the pools', async () => {
    api.lists = [{ status: 200, items: [pool('pool-a-v6', '3')], resourceVersion: '3' }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.openWatches === 1, 'the first watch is open');
    api.send('ADDED', pool('pool-b', '4'));
    await until(() => cache!.pools.get('pool-b') !== undefined, 'pool-b added');
    api.endWatches();
    await until(() => api.openWatches === 1, 'the watch is reopened');
    expect(api.watchQueries[1]!.get('resourceVersion')).toBe('4');
    expect(cache.hasSynced()).toBe(true);
    api.send('ADDED', pool('pool-c', '5'));
    await until(() => cache!.pools.get('pool-c') !== undefined, 'pool-c added after the reconnect');
    expect(cache.pools.size).toBe(3);
  });

  it('never syncs, and never throws, when the API server is unreachable', async () => {
    const url = await api.start();
    await api.stop(); // the port is closed now: connections are refused
    api = new FakeApiServer(); // for afterEach
    await api.start();
    cache = startPoolCache(kubeConfigFor(url), { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(cache.hasSynced()).toBe(false);
    expect(cache.pools.unavailable()).toMatch(/has not synced/);
  });

  it('reports its sync state as an informational readiness check', async () => {
    api.lists = [{ status: 200, items: [] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    const check = poolCacheReadinessCheck(cache);
    expect(check).toMatchObject({ name: 'pool-cache', informational: true });
    expect(check.check()).toMatch(/^SpiderIPPools not listed yet; .*\(readiness does not wait for it\)$/);
    await until(() => cache!.hasSynced(), 'synced');
    expect(check.check()).toBeUndefined();
  });

  it('reports sync state and size as gauges', async () => {
    api.lists = [{ status: 200, items: [pool('a', '1'), pool('b', '1')] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    const registry = new Registry();
    registerPoolCacheMetrics(registry, cache);
    const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]!.value;
    expect(await value('spiderpool_iaas_webhook_pool_cache_synced')).toBe(0);
    await until(() => cache!.hasSynced(), 'synced');
    expect(await value('spiderpool_iaas_webhook_pool_cache_synced')).toBe(1);
    expect(await value('spiderpool_iaas_webhook_pool_cache_pools')).toBe(2);
  });
});
