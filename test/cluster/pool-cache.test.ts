/**
 * The informer wiring against a fake API server on loopback (port 0): list, watch events,
 * a failed list retried with backoff, and a watch that ends and resumes. Bounded: every
 * wait polls for at most 10 s (test/helpers/until.ts), and the server and cache are stopped after each test.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { poolCacheReadinessCheck, registerPoolCacheMetrics, startPoolCache, type PoolCache } from '../../src/cluster/pool-cache.js';
import { NOT_SYNCED_REASON } from '../../src/store/pool-index.js';
import { until } from '../helpers/until.js';
import { FakePoolApiServer, FORBIDDEN_LIST_STATUS, kubeConfigFor, NOT_FOUND_STATUS, pool } from './fake-api-server.js';

const logger = pino({ level: 'silent' });

/** A logger that keeps its records (at `level` and above), and the records it kept. */
function recordingLogger(level = 'warn') {
  const records: {
    level: number;
    msg: string;
    err?: string;
    operation?: string;
    message?: string;
    statusCode?: number;
    retryInMs?: number;
    failedAttempts?: number;
  }[] = [];
  return { records, logger: pino({ level }, { write: (line: string) => void records.push(JSON.parse(line)) }) };
}
const WARN = 40;
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

describe('the SpiderIPPool cache against a fake API server', () => {
  it('is unsynced until the list completes, then follows watch events', async () => {
    api.lists = [{ status: 200, items: [pool('pool-a-v6', '5', 'pool-a')], resourceVersion: '7' }];
    const url = await api.start();
    cache = startPoolCache(kubeConfigFor(url), { logger });
    expect(cache.pools.unavailable()).toBe(NOT_SYNCED_REASON); // the review path never waits for the list
    await until(() => cache!.pools.hasSynced(), 'synced');
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

  it('survives list items and watch events that are not Kubernetes objects (client-node would throw on them)', async () => {
    api.lists = [{ status: 200, items: [null, 5, 'x', { metadata: { name: { a: 1 } } }, pool('good', '1')] }];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.openWatches === 1, 'the watch is open');
    expect(cache.pools.get('good')).toBeDefined();
    expect(records).toContainEqual(expect.objectContaining({ msg: 'SpiderIPPool list items without metadata.name ignored' }));
    api.send('ADDED', null);
    api.send('ADDED', { kind: 'SpiderIPPool' });
    api.send('DELETED', {});
    api.send('BOOKMARK', null);
    api.sendLine('5');
    api.sendLine('{"type":"ERROR"}');
    api.send('ERROR', null);
    api.send('ADDED', pool('after', '2'));
    await until(() => cache!.pools.get('after') !== undefined, 'the next good event is stored');
    expect(records.filter((r) => r.msg === 'SpiderIPPool watch event without metadata.name ignored')).toHaveLength(7);
    expect(cache.pools.get('good')).toBeDefined();
  });

  it.each([
    ['without an items array', 'not-a-list'],
    ['with a null body', null],
  ])('keeps the pools it knows when a re-list answers %s, and counts a list error', async (_what, items) => {
    // The first watch answers 410 Gone, so the cache lists again and gets the bad answer.
    api.lists = [
      { status: 200, items: [pool('good', '1')] },
      { status: 200, items, ...(items === null ? { nullBody: true } : {}) },
    ];
    api.watchStatuses = [410];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5 });
    await until(() => records.some((r) => r.operation === 'list'), 'the bad list is logged as a list error');
    expect(api.listCalls).toBeGreaterThanOrEqual(2);
    expect(records.some((r) => r.operation === 'watch')).toBe(false);
    expect(cache.pools.get('good')).toBeDefined();
  });

  it('drops an object that is not shaped like a SpiderIPPool instead of judging with it', async () => {
    api.lists = [{ status: 200, items: [pool('good', '1'), { metadata: { name: 'bad' }, spec: { nodeName: 'not-a-list' } }] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => cache!.pools.hasSynced(), 'synced');
    expect(cache.pools.get('good')).toBeDefined();
    expect(cache.pools.get('bad')).toBeUndefined();
  });

  it('retries a failed list with backoff, and syncs once it succeeds', async () => {
    api.lists = [{ status: 503 }, { status: 500 }, { status: 200, items: [pool('pool-a-v6', '3')] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 20 });
    await until(() => cache!.pools.hasSynced(), 'synced after retries');
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
    expect(cache.pools.hasSynced()).toBe(true);
    api.send('ADDED', pool('pool-c', '5'));
    await until(() => cache!.pools.get('pool-c') !== undefined, 'pool-c added after the reconnect');
    expect(cache.pools.size).toBe(3);
  });

  it('never syncs, and never throws, when the API server is unreachable: it keeps retrying the list', async () => {
    const url = await api.start();
    await api.stop(); // the port is closed now: connections are refused
    api = new FakePoolApiServer(); // for afterEach
    await api.start();
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(url), { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
    await until(() => cache!.errors().list >= 3, 'three list failures');
    expect(records.filter((r) => r.operation === 'list')).toHaveLength(1); // the same failure is logged once
    expect(records[0]!.message).toMatch(/ECONNREFUSED/);
    expect(cache.pools.hasSynced()).toBe(false);
    expect(cache.pools.unavailable()).toBe(NOT_SYNCED_REASON);
    expect(cache.errors().list).toBeGreaterThanOrEqual(2);
  });

  it('abandons a list that never answers (a dead connection) and retries it', async () => {
    api.lists = [
      { status: 200, hang: true },
      { status: 200, items: [pool('pool-a-v6', '3')] },
    ];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, listTimeoutMs: 100 });
    await until(() => cache!.pools.hasSynced(), 'synced after the hung list was abandoned');
    expect(api.listCalls).toBe(2);
    expect(cache.errors()).toEqual({ list: 1, watch: 0 });
    expect(records).toContainEqual(expect.objectContaining({ operation: 'list' }));
  });

  it('abandons a watch that stays silent past the idle bound, and watches again from where it was', async () => {
    api.lists = [{ status: 200, items: [], resourceVersion: '3' }];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, watchIdleMs: 100 });
    await until(() => api.watchQueries.length >= 2, 'a second watch');
    expect(records).toContainEqual(
      expect.objectContaining({ operation: 'watch', message: expect.stringMatching(/^no event and no end from the watch for 0 s/) }),
    );
    expect(api.listCalls).toBe(1);
    expect(api.watchQueries[1]!.get('resourceVersion')).toBe('3');
  });

  it('abandons a watch whose response never begins, closing its connection', async () => {
    api.lists = [{ status: 200, items: [] }];
    api.holdWatchHeaders = true;
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, watchIdleMs: 100 });
    await until(() => api.watchQueries.length >= 2, 'a second watch');
    expect(cache.errors().watch).toBeGreaterThanOrEqual(1);
    // The abandoned request's socket is released, not left waiting for headers.
    await until(() => api.closedWatches >= 1, 'the abandoned watch connection to close', {
      describe: () => `${api.closedWatches} closed of ${api.watchQueries.length}`,
    });
  });

  it('asks the API server to end each watch within 5-10 minutes, as client-go does', async () => {
    api.lists = [{ status: 200, items: [] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.openWatches === 1, 'the watch is open');
    const timeoutSeconds = Number(api.watchQueries[0]!.get('timeoutSeconds'));
    expect(timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(timeoutSeconds).toBeLessThan(600);
  });

  it('a watch error (500) is retried with backoff without listing again; the backoff starts afresh after an event', async () => {
    api.lists = [{ status: 200, items: [], resourceVersion: '3' }];
    api.watchStatuses = [500, 500];
    const { records, logger } = recordingLogger('debug');
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 1000 });
    await until(() => api.openWatches === 1, 'the watch is open after two failures');
    // The repeat is logged at debug: warn once per change, not once per retry.
    expect(records.filter((r) => r.level >= WARN).map((r) => [r.operation, r.statusCode, r.retryInMs])).toEqual([['watch', 500, 5]]);
    const quieter = records.filter((r) => r.level < WARN && r.msg !== 'SpiderIPPool cache listed');
    // Opened is not recovered yet (a watch may end at once): an event, or a second open, is.
    expect(quieter.map((r) => [r.operation, r.retryInMs])).toEqual([['watch', 10]]);
    expect(api.listCalls).toBe(1);
    api.send('ADDED', pool('pool-b', '4'));
    await until(() => cache!.pools.get('pool-b') !== undefined, 'pool-b added');
    expect(records.filter((r) => r.msg === 'SpiderIPPool list and watch work again').map((r) => r.failedAttempts)).toEqual([2]);
    api.watchStatuses = [500];
    api.endWatches();
    await until(() => records.filter((r) => r.level >= WARN).length === 2, 'the next failure is logged: it follows a success');
    expect(records.filter((r) => r.level >= WARN)[1]).toMatchObject({ operation: 'watch', retryInMs: 5 });
    await until(() => api.openWatches === 1, 'the watch is open again');
    expect(api.watchQueries.at(-1)!.get('resourceVersion')).toBe('4');
    expect(cache.errors()).toEqual({ list: 0, watch: 3 });
  });

  it('an expired resourceVersion (410 Gone), as a response or as an ERROR event, makes it list afresh without an error', async () => {
    api.lists = [
      { status: 200, items: [pool('pool-a-v6', '3')], resourceVersion: '3' },
      { status: 200, items: [pool('pool-c', '9')], resourceVersion: '9' },
    ];
    api.watchStatuses = [410];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    await until(() => api.listCalls === 2 && api.openWatches === 1, 'listed again and watching');
    await until(() => cache!.pools.get('pool-c') !== undefined, 'the second list is stored');
    expect(cache.pools.get('pool-a-v6')).toBeUndefined();
    api.send('ADDED', pool('pool-d', '10'));
    await until(() => cache!.pools.get('pool-d') !== undefined, 'the watch works');
    api.send('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    api.endWatches();
    await until(() => api.listCalls === 3, 'listed a third time');
    expect(records).toEqual([]);
    expect(cache.errors()).toEqual({ list: 0, watch: 0 });
  });

  it('a watch from a fresh list that expires at once, again and again, relists with backoff, not in a loop', async () => {
    api.lists = Array.from({ length: 50 }, (_, i) => ({ status: 200, items: [pool('pool-a-v6', String(3 + i))], resourceVersion: String(3 + i) }));
    api.watchStatuses = Array(50).fill(410);
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 100, maxBackoffMs: 10_000 });
    await until(() => cache!.errors().watch >= 3, 'expiries in a row counted as errors', { timeoutMs: 5_000 });
    // The first expiry relists at once, the next ones after a backoff that doubles (a list resets it otherwise).
    expect(
      records
        .filter((r) => r.retryInMs !== undefined)
        .map((r) => r.retryInMs)
        .slice(0, 2),
    ).toEqual([100, 200]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(api.listCalls).toBeLessThan(8);
    expect(records[0]).toMatchObject({ operation: 'watch', message: expect.stringMatching(/expired at once/) });
    expect(cache.pools.get('pool-a-v6')).toBeDefined();
  });

  it('a watch that ends at once with no event is a watch error retried with backoff, not a loop of reconnects (client-go\'s "very short watch")', async () => {
    api.lists = [{ status: 200, items: [pool('pool-a-v6', '3')], resourceVersion: '3' }];
    api.endWatchesAtOnce = true;
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 100, maxBackoffMs: 100 });
    await until(() => cache!.errors().watch >= 2, 'two short watches counted as errors');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Paced by the 100 ms backoff: a handful of watches in ~0.5 s, not hundreds.
    expect(api.watchQueries.length).toBeLessThan(10);
    expect(records[0]).toMatchObject({ operation: 'watch', message: expect.stringMatching(/ended at once without an event/) });
    expect(api.listCalls).toBe(1);
    expect(cache.pools.get('pool-a-v6')).toBeDefined();
  });

  it('short watches log no "works again" between their retries; a watch that lasts a second does, once', async () => {
    api.lists = [{ status: 200, items: [pool('pool-a-v6', '3')], resourceVersion: '3' }];
    api.endWatchesAtOnce = true;
    const { records, logger } = recordingLogger('info');
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 50, maxBackoffMs: 50 });
    await until(() => cache!.errors().watch >= 4, 'four short watches counted as errors');
    const worksAgain = () => records.filter((r) => r.msg === 'SpiderIPPool list and watch work again');
    expect(worksAgain()).toEqual([]);
    expect(records.filter((r) => r.level >= WARN)).toHaveLength(1); // the first short watch; its repeats at debug
    api.endWatchesAtOnce = false;
    await until(() => api.openWatches === 1, 'a watch stays open');
    await until(() => worksAgain().length === 1, 'recovery logged once the watch has lasted a second');
    expect(worksAgain()[0]!.failedAttempts).toBeGreaterThanOrEqual(4);
  });

  it('a watch that cannot start (no current cluster any more) is a logged, retried error, not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      api.lists = [{ status: 200, items: [] }];
      const config = kubeConfigFor(await api.start());
      const { records, logger } = recordingLogger();
      cache = startPoolCache(config, { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
      await until(() => api.openWatches === 1, 'the watch is open');
      config.clusters = []; // the list client keeps its server; the next watch finds none
      api.send('BOOKMARK', { kind: 'SpiderIPPool', metadata: { resourceVersion: '4' } }); // not a short watch
      await until(() => cache!.lastSyncSeconds() !== undefined, 'the bookmark read');
      api.endWatches();
      await until(() => cache!.errors().watch >= 2, 'two watch failures');
      expect(records).toEqual([expect.objectContaining({ operation: 'watch', message: 'No currently active cluster' })]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      await expect(cache.stop()).resolves.toBeUndefined();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("a 404 on the list says Spiderpool's v2beta1 CRD is not installed, once however often it is retried", async () => {
    api.lists = [{ status: 404, statusBody: NOT_FOUND_STATUS }];
    const { records, logger } = recordingLogger('debug');
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
    await until(() => cache!.errors().list >= 4, 'four list failures');
    const warnings = records.filter((r) => r.level >= WARN);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      operation: 'list',
      statusCode: 404,
      message:
        "Spiderpool's spiderpool.spidernet.io/v2beta1 CRD is not installed: the API server does not serve spiderippools.spiderpool.spidernet.io v2beta1 " +
        '(404 NotFound: the server could not find the requested resource); install Spiderpool (a release whose SpiderIPPool CRD serves v2beta1)',
    });
    expect(records.filter((r) => r.level < WARN && r.operation === 'list').length).toBeGreaterThanOrEqual(3);
    expect(cache.pools.hasSynced()).toBe(false);
  });

  it('a 403 on the list names deploy/base/rbac.yaml, the verb and the resource from the Status details, without the HTTP dump', async () => {
    api.lists = [{ status: 403, statusBody: FORBIDDEN_LIST_STATUS }];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
    await until(() => cache!.errors().list >= 2, 'two list failures');
    expect(records).toHaveLength(1);
    expect(records[0]!.message).toBe(
      'the ClusterRole and ClusterRoleBinding from deploy/base/rbac.yaml are missing: the API server forbids "list" on spiderippools.spiderpool.spidernet.io ' +
        `(403 Forbidden: ${FORBIDDEN_LIST_STATUS.message}); re-apply your overlay to create them (get, list, watch on spiderippools.spiderpool.spidernet.io, bound to the webhook's ServiceAccount)`,
    );
    expect(JSON.stringify(records[0])).not.toMatch(/HTTP-Code|Headers|Audit-Id|a2b3c4/);
  });

  it('a 403 on the watch (list allowed, watch not) names the watch verb', async () => {
    api.lists = [{ status: 200, items: [pool('a', '1')] }];
    api.watchStatuses = [403, 403, 403];
    const { records, logger } = recordingLogger();
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
    await until(() => cache!.errors().watch >= 3, 'three watch failures');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ operation: 'watch', statusCode: 403 });
    expect(records[0]!.message).toMatch(
      /^the ClusterRole and ClusterRoleBinding from deploy\/base\/rbac\.yaml are missing: the API server forbids "watch" on spiderippools\.spiderpool\.spidernet\.io \(403: Forbidden\); re-apply your overlay/,
    );
  });

  it('logs a failure again when it changes, and after the cache recovered', async () => {
    api.lists = [
      { status: 503 },
      { status: 503 },
      { status: 404, statusBody: NOT_FOUND_STATUS },
      { status: 404, statusBody: NOT_FOUND_STATUS },
      { status: 200, items: [] },
    ];
    api.watchStatuses = [];
    const { records, logger } = recordingLogger('info');
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5, maxBackoffMs: 10 });
    await until(() => cache!.pools.hasSynced(), 'synced on the fifth list');
    expect(records.map((r) => [r.msg, r.statusCode ?? r.failedAttempts])).toEqual([
      ['SpiderIPPool list failed; dual-stack pair checks are skipped with a warning until it succeeds', 503],
      ['SpiderIPPool list failed; dual-stack pair checks are skipped with a warning until it succeeds', 404],
      ['SpiderIPPool list and watch work again', 4],
      ['SpiderIPPool cache listed', undefined],
    ]);
  });

  it('reports its sync state as a readiness check that waits for the first list, then is informational', async () => {
    api.lists = [{ status: 200, items: [] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    const check = poolCacheReadinessCheck(cache);
    expect(check).toMatchObject({ name: 'pool-cache', informational: false });
    expect(check.check()).toMatch(/^SpiderIPPools not listed yet; readiness waits for them, up to 60 s, /);
    await until(() => cache!.pools.hasSynced(), 'synced');
    expect(check.check()).toBeUndefined();
    expect(check.informational).toBe(true);
  });

  it('reports sync state, size, last sync time and errors as metrics', async () => {
    api.lists = [{ status: 500 }, { status: 200, items: [pool('a', '1'), pool('b', '1')] }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger, initialBackoffMs: 5 });
    const registry = new Registry();
    registerPoolCacheMetrics(registry, cache);
    const values = async (name: string) => (await registry.getSingleMetric(name)!.get()).values;
    const value = async (name: string) => (await values(name))[0]!.value;
    expect(await value('spiderpool_iaas_webhook_pool_cache_synced')).toBe(0);
    expect(await value('spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds')).toBe(0);
    const before = Date.now() / 1000;
    await until(() => cache!.pools.hasSynced(), 'synced');
    expect(await value('spiderpool_iaas_webhook_pool_cache_synced')).toBe(1);
    expect(await value('spiderpool_iaas_webhook_pool_cache_pools')).toBe(2);
    const lastSync = await value('spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds');
    expect(lastSync).toBeGreaterThanOrEqual(before);
    expect(lastSync).toBeLessThanOrEqual(Date.now() / 1000);
    expect(await values('spiderpool_iaas_webhook_pool_cache_errors_total')).toEqual([
      expect.objectContaining({ labels: { operation: 'list' }, value: 1 }),
      expect.objectContaining({ labels: { operation: 'watch' }, value: 0 }),
    ]);
  });

  it('a judgement of the stored pools that throws (after a list or an event) is logged through its logger and counted, and the cache keeps serving', async () => {
    api.lists = [{ status: 200, items: [pool('pool-a', '1', 'pool-b'), pool('pool-b', '2')], resourceVersion: '2' }];
    const { records, logger } = recordingLogger('error');
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    cache.pools.pairedWith = () => {
      throw new Error('a rule failed');
    };
    const registry = new Registry();
    registerPoolCacheMetrics(registry, cache);
    const errors = async () => (await registry.getSingleMetric('spiderpool_iaas_webhook_pool_violations_errors_total')!.get()).values[0]!.value;
    expect(await errors()).toBe(0);
    await until(() => cache!.violations.failedJudgements === 1, 'the failed pass counted');
    expect(await errors()).toBe(1);
    expect(records).toEqual([
      expect.objectContaining({
        err: 'a rule failed',
        msg: "judging the stored SpiderIPPools failed; the violation gauges keep each pool's last judgement until the next list or event",
      }),
    ]);
    await until(() => api.openWatches === 1, 'the watch is open');
    api.send('ADDED', pool('pool-c', '3')); // its judgement throws too: not into the watch, which goes on
    await until(() => cache!.violations.failedJudgements === 2, 'the failed judgement of the event counted');
    api.send('ADDED', pool('pool-d', '4'));
    await until(() => cache!.pools.get('pool-d') !== undefined, 'still following events');
    expect(cache.pools.get('pool-c')).toBeDefined();
    expect(cache.errors()).toEqual({ list: 0, watch: 0 });
    expect(api.watchQueries).toHaveLength(1);
    expect(records.map((r) => r.err)).toEqual(['a rule failed', 'a rule failed', 'a rule failed']); // the list's, pool-c's and pool-d's
  });

  it('keeps the violation gauges current from list and watch events (a traditional sibling included)', async () => {
    const traditional = { ...pool('pool-b', '9'), metadata: { name: 'pool-b', resourceVersion: '9' } };
    api.lists = [{ status: 200, items: [pool('pool-a', '1', 'pool-b')], resourceVersion: '1' }];
    cache = startPoolCache(kubeConfigFor(await api.start()), { logger });
    const registry = new Registry();
    registerPoolCacheMetrics(registry, cache);
    const violations = async () =>
      Object.fromEntries(
        (await registry.getSingleMetric('spiderpool_iaas_webhook_pool_violations')!.get()).values
          .filter((v) => v.value > 0)
          .map((v) => [v.labels['rule'], v.value]),
      );
    const brokenPairs = async () => (await registry.getSingleMetric('spiderpool_iaas_webhook_pool_broken_pairs')!.get()).values[0]!.value;
    await until(() => api.openWatches === 1, 'the watch is open');
    expect(await violations()).toEqual({});
    api.send('ADDED', traditional);
    await until(() => cache!.violations.brokenPairs() === 1, 'the broken pair counted');
    expect(await violations()).toEqual({ 'pair-not-iaas': 1 });
    expect(await brokenPairs()).toBe(1);
    api.send('DELETED', traditional);
    await until(() => cache!.violations.brokenPairs() === 0, 'the broken pair gone');
    expect(await violations()).toEqual({});
  });
});
