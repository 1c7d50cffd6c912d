/**
 * The reports shell against a fake API server on 127.0.0.1 (fake-object-store.ts): one
 * replica leads through the Lease and the other stands by, a released or expired Lease is
 * taken over, reports are written only when their content changed, and an absent CRD is
 * one log line, no write, and asked again later.
 */
import { pino } from 'pino';
import { startPoolReports, type PoolReports, type PoolReportsOptions } from '../../src/cluster/pool-reports.js';
import { microTime } from '../../src/kubernetes/lease.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import { REPORT_NAMES } from '../../src/store/pool-reports.js';
import { PoolViolationTracker } from '../../src/store/pool-violations.js';
import { spiderIPPool } from '../helpers/pools.js';
import { until } from '../helpers/until.js';
import { CLUSTER_ROLES, startFakeObjectStore, type FakeObjectStore } from './fake-object-store.js';

const NS = 'spiderpool-iaas-webhook';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const LEASE = `${LEASES}/spiderpool-iaas-webhook-reports`;
const REPORTS = '/apis/openreports.io/v1alpha1/clusterreports';
const OWNER = 'spiderpool-iaas-webhook';

const broken = (name: string) => spiderIPPool(name, { provider: 'cloud', nic: 'eth0,eth1', ips: ['10.0.0.1-10.0.0.10'] }); // parent-nic-one
const paired = (name: string, pair: string, version: 4 | 6) =>
  spiderIPPool(name, { provider: 'cloud', pair, version, ips: version === 4 ? ['10.0.0.1-10.0.0.10'] : ['fd00::1-fd00::a'] });

let store: FakeObjectStore;
let running: PoolReports[] = [];
let index: PoolIndex;
let records: { msg: string; level: number }[];

function start(identity: string, extra: Partial<PoolReportsOptions> = {}): PoolReports {
  const reports = startPoolReports({
    kubeConfig: store.kubeConfig,
    tracker: new PoolViolationTracker(index),
    uidOf: (pool) => index.get(pool)?.metadata.uid,
    synced: () => index.hasSynced(),
    lease: { namespace: NS, name: 'spiderpool-iaas-webhook-reports' },
    identity,
    ownerClusterRole: OWNER,
    logger: pino({ level: 'info' }, { write: (line: string) => void records.push(JSON.parse(line)) }),
    retryPeriodMs: 50,
    intervalMs: 3_600_000, // rounds run when a test calls sync()
    ...extra,
  });
  running.push(reports);
  return reports;
}

const writes = () =>
  store.requests.filter((r) => r.path.startsWith(REPORTS) && r.method !== 'GET').map((r) => `${r.method} ${r.path.slice(REPORTS.length) || '/'}`);
const holder = () => store.objects.get(LEASE)?.['spec']?.holderIdentity;

beforeEach(async () => {
  store = await startFakeObjectStore();
  store.put(CLUSTER_ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: OWNER } });
  index = new PoolIndex();
  index.replaceAll([broken('a'), paired('v4', 'v6', 4), paired('v6', 'v4', 4)]);
  records = [];
  running = [];
});
afterEach(async () => {
  await Promise.all(running.map((r) => r.stop()));
  await store.close();
});

describe('leader election', () => {
  it('lets one replica lead while the other stands by, and hands over on a clean stop', async () => {
    const a = start('a');
    await until(() => a.isLeader(), 'a leads');
    const b = start('b');
    await until(() => store.requests.filter((r) => r.path === LEASE && r.method === 'GET').length >= 4, 'b tries the Lease');
    expect(b.isLeader()).toBe(false);
    expect(holder()).toBe('a');
    expect(store.objects.get(LEASE)?.['metadata']?.ownerReferences).toEqual([expect.objectContaining({ kind: 'ClusterRole', name: OWNER })]);
    await a.stop();
    await until(() => b.isLeader(), 'b takes over');
    expect(holder()).toBe('b');
    expect(store.objects.get(LEASE)?.['spec']?.leaseTransitions).toBe(1);
  });

  it('takes over a Lease whose holder died once the lease duration has passed unrenewed, by its own clock', async () => {
    let nowMs = Date.parse('2026-12-07T10:00:00Z');
    store.put(LEASES, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'spiderpool-iaas-webhook-reports', namespace: NS },
      spec: { holderIdentity: 'dead', leaseDurationSeconds: 15, renewTime: microTime(nowMs), leaseTransitions: 0 },
    });
    const b = start('b', { now: () => nowMs });
    const tries = () => store.requests.filter((r) => r.path === LEASE && r.method === 'GET').length;
    await until(() => tries() >= 3, 'b tries the Lease');
    nowMs += 14_000;
    const before = tries();
    await until(() => tries() >= before + 2, 'b tries again');
    expect(b.isLeader()).toBe(false);
    nowMs += 1_001;
    await until(() => b.isLeader(), 'b takes over');
    expect(holder()).toBe('b');
  });
  it('takes over the Lease and the reports of an earlier owner: the garbage collector follows the new one', async () => {
    const a = start('a');
    await until(() => a.isLeader(), 'a leads');
    await a.sync();
    await a.stop();
    const earlier = [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'earlier-owner', uid: 'earlier-uid' }];
    const nic = `${REPORTS}/spiderpool-iaas-webhook-parent-nic-one`;
    for (const [collection, path] of [
      [LEASES, LEASE],
      [REPORTS, nic],
    ] as const) {
      const stored = store.objects.get(path)!;
      store.put(collection, { ...stored, metadata: { ...stored['metadata'], ownerReferences: earlier } });
    }
    const b = start('b');
    await until(() => b.isLeader(), 'b leads');
    await b.sync();
    for (const path of [LEASE, nic])
      expect([path, store.objects.get(path)?.['metadata']?.ownerReferences]).toEqual([path, [expect.objectContaining({ name: OWNER })]]);
  });
  it('writes no Lease again once its owner is gone with it (reports turned off): it steps down', async () => {
    let nowMs = Date.parse('2026-12-07T10:00:00Z');
    const a = start('a', { now: () => nowMs });
    await until(() => a.isLeader(), 'a leads');
    store.objects.delete(`${CLUSTER_ROLES}/${OWNER}`); // the garbage collector then deletes the Lease
    store.objects.delete(LEASE);
    await until(() => records.some((r) => JSON.stringify(r).includes('does not exist')), 'a fails to write the Lease');
    nowMs += 15_000; // past the renew deadline
    await until(() => !a.isLeader(), 'a steps down');
    expect(store.objects.has(LEASE)).toBe(false);
  });
});

describe('reports', () => {
  it("writes each broken rule's report once, and again only when it changed", async () => {
    const a = start('a');
    await until(() => a.isLeader(), 'a leads');
    await a.sync();
    expect(writes().sort()).toEqual(['POST /', 'POST /']);
    const nic = store.objects.get(`${REPORTS}/spiderpool-iaas-webhook-parent-nic-one`)!;
    expect(nic['summary']).toEqual({ pass: 0, fail: 1, warn: 0, error: 0, skip: 0 });
    expect(nic['metadata']['ownerReferences']).toEqual([expect.objectContaining({ kind: 'ClusterRole', name: OWNER, uid: expect.any(String) })]);
    expect(nic['results'].map((r: { resources: { name: string }[] }) => r.resources[0]!.name)).toEqual(['a']);

    await a.sync();
    index.upsert(spiderIPPool('unrelated', {})); // judged, nothing changes
    await a.sync();
    expect(writes()).toHaveLength(2);

    index.upsert(paired('v6', 'v4', 6)); // the pair is fixed
    index.upsert(broken('b')); // another pool breaks the NIC rule
    await a.sync();
    expect(writes().slice(2).sort()).toEqual(['DELETE /spiderpool-iaas-webhook-pair-ipVersion', 'PUT /spiderpool-iaas-webhook-parent-nic-one']);
    expect(store.objects.get(`${REPORTS}/spiderpool-iaas-webhook-parent-nic-one`)!['summary'].fail).toBe(2);
    expect(a.writes().get('create/success')).toBe(2);
  });

  it('writes and deletes nothing before the pools are listed (no violation known is not no violation)', async () => {
    store.put(REPORTS, {
      apiVersion: 'openreports.io/v1alpha1',
      kind: 'ClusterReport',
      metadata: { name: 'spiderpool-iaas-webhook-node-empty', labels: { 'app.kubernetes.io/managed-by': 'spiderpool-iaas-webhook' } },
    });
    index = new PoolIndex();
    const a = start('a');
    await until(() => a.isLeader(), 'a leads');
    await a.sync();
    expect(writes()).toEqual([]);
    index.replaceAll([broken('a')]);
    await a.sync();
    expect(writes().sort()).toEqual(['DELETE /spiderpool-iaas-webhook-node-empty', 'POST /']);
  });

  it("replaces and deletes only reports of its own names (RBAC's resourceNames): a labelled report of another name is left alone", async () => {
    const labels = { 'app.kubernetes.io/managed-by': 'spiderpool-iaas-webhook' };
    store.put(REPORTS, { apiVersion: 'openreports.io/v1alpha1', kind: 'ClusterReport', metadata: { name: 'spiderpool-iaas-webhook-retired-rule', labels } });
    // As deploy/base/rbac.yaml grants them: update and delete of REPORT_NAMES alone.
    store.refuse = (r) =>
      r.path.startsWith(`${REPORTS}/`) && !REPORT_NAMES.includes(r.path.slice(REPORTS.length + 1)) && r.method !== 'GET'
        ? { status: 403, message: 'forbidden' }
        : undefined;
    const a = start('a');
    await until(() => a.isLeader(), 'a leads');
    await a.sync();
    await a.sync();
    expect(writes()).toEqual(['POST /', 'POST /']);
    expect(store.objects.has(`${REPORTS}/spiderpool-iaas-webhook-retired-rule`)).toBe(true);
  });

  it('a new leader writes nothing when the stored reports already say what it would', async () => {
    const a = start('a');
    await until(() => a.isLeader(), 'a leads');
    await a.sync();
    await a.stop();
    const b = start('b');
    await until(() => b.isLeader(), 'b leads');
    await b.sync();
    expect(writes()).toEqual(['POST /', 'POST /']);
  });

  it('stays off without the CRD: one log line, no write, nothing fails, and asks again later', async () => {
    let nowMs = Date.parse('2026-12-07T10:00:00Z');
    store.refuse = (r) => (r.path.startsWith(REPORTS) ? { status: 404, message: 'the server could not find the requested resource' } : undefined);
    const a = start('a', { now: () => nowMs, crdRecheckMs: 60_000 });
    await until(() => a.isLeader(), 'a leads');
    await a.sync();
    await a.sync();
    const asked = () => store.requests.filter((r) => r.path === REPORTS).length;
    expect(asked()).toBe(1);
    expect(a.crdInstalled()).toBe(false);
    expect(records.filter((r) => /CRD/.test(r.msg)).map((r) => r.msg)).toEqual([
      "the clusterreports.openreports.io CRD is not installed: no reports (install OpenReports' CRDs to have them); asking again every 60 s",
    ]);
    store.refuse = undefined;
    nowMs += 60_000;
    await a.sync();
    expect(a.crdInstalled()).toBe(true);
    expect(writes()).toEqual(['POST /', 'POST /']);
  });

  it('never piles rounds up behind an API server that does not answer: ticks while one runs are dropped', async () => {
    store.hang = (r) => r.path === REPORTS;
    const a = start('a', { intervalMs: 10, callTimeoutMs: 200 });
    await until(() => store.hung.count >= 3, 'three lists left unanswered', { timeoutMs: 20_000 });
    const before = store.hung.count;
    await a.stop();
    // Only the round in progress finishes (≤ 1 more list); piled-up rounds would each list again.
    expect(store.hung.count).toBeLessThanOrEqual(before + 1);
  });
});
