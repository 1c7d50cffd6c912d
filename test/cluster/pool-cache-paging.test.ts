/**
 * The cache's own list-watch loop against the fake API server on loopback: pages of the
 * list (limit/continue), a continue token that expires, a watch that asks for bookmarks and
 * resumes from the last resourceVersion, a 410 relist that keeps serving the old pools,
 * objects slimmed as they arrive, and readiness that waits for the first list, bounded.
 * Every wait is bounded (test/helpers/until.ts).
 */
import { pino } from 'pino';
import { poolCacheReadinessCheck, startPoolCache, type PoolCache } from '../../src/cluster/pool-cache.js';
import { readinessReport } from '../../src/kubernetes/healthz.js';
import { until } from '../helpers/until.js';
import { allocatedIPs, FakePoolApiServer, kubeConfigFor, pool } from './fake-api-server.js';

const logger = pino({ level: 'silent' });
function recordingLogger(level = 'info') {
  const records: { level: number; msg: string; message?: string; operation?: string }[] = [];
  return { records, logger: pino({ level }, { write: (line: string) => void records.push(JSON.parse(line)) }) };
}
const pools = (count: number, from = 0) => Array.from({ length: count }, (_, i) => pool(`p-${from + i}`, String(from + i + 1)));

let api: FakePoolApiServer;
let cache: PoolCache | undefined;
beforeEach(() => {
  api = new FakePoolApiServer();
});
afterEach(async () => {
  await cache?.stop();
  cache = undefined;
  await api.stop();
});

describe('the SpiderIPPool cache list', () => {
  it('comes in pages of 500 (limit/continue), all stored once the last one is in', async () => {
    api.lists = [{ status: 200, items: pools(1203), resourceVersion: '77' }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.openWatches === 1, 'the watch is open');
    expect(api.listQueries.map((q) => [q.get('limit'), q.get('continue')])).toEqual([
      ['500', null],
      ['500', '500'],
      ['500', '1000'],
    ]);
    expect(cache.pools.size).toBe(1203);
    expect(api.watchQueries[0]!.get('resourceVersion')).toBe('77');
  });

  it('starts over at once when a continue token expires (410 Gone on a later page), without an error', async () => {
    api.lists = [{ status: 200, items: pools(5) }];
    api.expireContinues = 1;
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, pageSize: 2 });
    await until(() => cache!.pools.hasSynced(), 'synced');
    expect(api.listQueries.map((q) => q.get('continue'))).toEqual([null, '2', null, '2', '4']);
    expect(cache.pools.size).toBe(5);
    expect(cache.errors()).toEqual({ list: 0, watch: 0 });
    expect(records.map((r) => r.msg)).toContainEqual(expect.stringMatching(/continue token expired \(410 Gone\)/));
  });

  it('backs off when continue tokens expire twice in a row (pages too slow for the compaction)', async () => {
    api.lists = [{ status: 200, items: pools(5) }];
    api.expireContinues = 2;
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, pageSize: 2, initialBackoffMs: 5 });
    await until(() => cache!.pools.hasSynced(), 'synced');
    expect(cache.errors()).toEqual({ list: 1, watch: 0 });
  });

  it('stores a listed or watched pool slim: 64 allocations, managedFields and all, leave only the count', async () => {
    const big = {
      ...pool('big', '3'),
      metadata: { ...pool('big', '3').metadata, managedFields: [{ manager: 'x' }] },
      status: { allocatedIPCount: 64, allocatedIPs: allocatedIPs(64) },
    };
    api.lists = [{ status: 200, items: [big] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.openWatches === 1, 'the watch is open');
    expect(cache.pools.get('big')!.status).toEqual({ allocatedIPCount: 64 });
    expect(JSON.stringify(cache.pools.get('big'))).not.toMatch(/managedFields|podUid/);
    api.send('MODIFIED', { ...big, status: { allocatedIPCount: 65, allocatedIPs: allocatedIPs(65) } });
    await until(
      () => cache!.pools.get('big')!.status !== undefined && (cache!.pools.get('big')!.status as { allocatedIPCount: number }).allocatedIPCount === 65,
      'the watched update stored',
    );
    expect(JSON.stringify(cache.pools.get('big'))).not.toMatch(/podUid/);
  });

  it('on 410 Gone lists again while the old pools keep serving, and swaps them in once the new list is complete', async () => {
    api.lists = [
      { status: 200, items: [pool('old', '3')], resourceVersion: '3' },
      { status: 200, hang: true },
      { status: 200, items: [pool('new', '9')], resourceVersion: '9' },
    ];
    api.watchStatuses = [410];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, listTimeoutMs: 300, initialBackoffMs: 5 });
    await until(() => api.listCalls === 2, 'the relist is under way');
    expect(cache.pools.get('old')).toBeDefined();
    expect(cache.pools.unavailable()).toBeUndefined();
    await until(() => cache!.pools.get('new') !== undefined, 'the third list swapped in');
    expect(cache.pools.get('old')).toBeUndefined();
    expect(cache.errors()).toEqual({ list: 1, watch: 0 });
  });
});

describe('the SpiderIPPool cache watch', () => {
  it("asks for bookmarks, and resumes from the last resourceVersion seen, a bookmark's included, without listing again", async () => {
    api.lists = [{ status: 200, items: [pool('a', '3')], resourceVersion: '3' }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.openWatches === 1, 'the watch is open');
    expect(api.watchQueries[0]!.get('allowWatchBookmarks')).toBe('true');
    api.send('MODIFIED', pool('a', '8'));
    api.send('BOOKMARK', { kind: 'SpiderIPPool', metadata: { resourceVersion: '20' } });
    await until(() => cache!.pools.get('a')?.metadata.resourceVersion === '8', 'events read');
    await new Promise((resolve) => setTimeout(resolve, 100));
    api.endWatches();
    await until(() => api.watchQueries.length === 2 && api.openWatches === 1, 'the watch is reopened');
    expect(api.watchQueries[1]!.get('resourceVersion')).toBe('20');
    expect(api.listCalls).toBe(1);
    expect(cache.pools.size).toBe(1);
  });
});

describe('the SpiderIPPool cache readiness', () => {
  it('fails readiness until the first list, then passes', async () => {
    api.lists = [
      { status: 200, hang: true },
      { status: 200, items: [pool('a', '1')] },
    ];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, listTimeoutMs: 200, initialBackoffMs: 5 });
    const check = poolCacheReadinessCheck(cache);
    expect(readinessReport([check], false)).toEqual({
      ready: false,
      text: expect.stringMatching(/^\[-\]pool-cache failed: SpiderIPPools not listed yet; readiness waits for them, up to 60 s/),
    });
    await until(() => cache!.pools.hasSynced(), 'synced');
    expect(readinessReport([check], false)).toEqual({ ready: true, text: 'ok\n' });
    // Synced for good: a later failure keeps the pools and the readiness.
    api.lists = [{ status: 503 }];
    api.watchStatuses = [410];
    api.endWatches();
    await until(() => cache!.errors().list >= 1, 'the relist failed');
    expect(readinessReport([check], false).ready).toBe(true);
  });

  it('turns ready after the bounded wait when the API server cannot be listed, with one line saying why', async () => {
    api.lists = [{ status: 503, statusBody: { kind: 'Status', code: 503, message: 'etcd is down' } }];
    const { records, logger } = recordingLogger('warn');
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 20, syncWaitMs: 300 });
    const check = poolCacheReadinessCheck(cache);
    expect(readinessReport([check], false).ready).toBe(false);
    await until(() => readinessReport([check], false).ready, 'ready after the wait');
    expect(readinessReport([check], true).text).toMatch(
      /^\[-\]pool-cache failed: SpiderIPPools not listed yet; dual-stack pair checks are skipped with a warning until they are \(readiness stopped waiting after 0\.3 s\)\n/,
    );
    expect(records.filter((r) => r.msg.startsWith('SpiderIPPool cache not synced'))).toEqual([
      expect.objectContaining({
        msg: 'SpiderIPPool cache not synced after 0.3 s (the list failed: 503: etcd is down); ready anyway: dual-stack pair checks are skipped with a warning until it syncs',
      }),
    ]);
  });
});
