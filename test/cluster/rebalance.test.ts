/**
 * `serve --rebalance`'s rounds against a stand-in API server on 127.0.0.1 with a fake clock:
 * the youngest replica on a shared node asks for its own eviction once a free node has been
 * there for the settle time, and asks again after the PodDisruptionBudget refused.
 */
import { pino } from 'pino';
import { startRebalance } from '../../src/cluster/rebalance.js';
import type { Rounds } from '../../src/cluster/rounds.js';
import { startFakeObjectStore, type FakeObjectStore } from './fake-object-store.js';

const NS = 'spiderpool-iaas-webhook';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const NODES = '/api/v1/nodes';
const LABELS = { 'app.kubernetes.io/name': 'spiderpool-iaas-webhook', 'pod-template-hash': '5d8f7' };

const pod = (name: string, nodeName: string, creationTimestamp: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels: LABELS, creationTimestamp },
  spec: { nodeName, containers: [] },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});
const node = (name: string, unschedulable = false) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: { unschedulable },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});
const evictions = (store: FakeObjectStore) =>
  store.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/eviction')).map((r) => r.path.replace(`${PODS}/`, ''));

let store: FakeObjectStore;
let rounds: Rounds | undefined;
let nowMs: number;

beforeEach(async () => {
  store = await startFakeObjectStore();
  nowMs = 0;
  // Both on b: the replacement came while a was down.
  store.put(PODS, pod('old', 'b', '2026-01-01T00:00:00Z'));
  store.put(PODS, pod('new', 'b', '2026-01-01T00:05:00Z'));
  store.put(NODES, node('b'));
});
afterEach(async () => {
  rounds?.stop();
  rounds = undefined;
  await store.close();
});

/** A replica's rounds; they run only when the test calls them (the interval is an hour). */
function rebalanceOf(podName: string): Rounds {
  return startRebalance({
    kubeConfig: store.kubeConfig,
    namespace: NS,
    podName,
    intervalMs: 3_600_000,
    settleMs: 30_000,
    callTimeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
    nowMs: () => nowMs,
  });
}
async function roundsAt(of: Rounds, times: number[]): Promise<void> {
  for (const at of times) {
    nowMs = at;
    await of.round();
  }
}

describe('startRebalance', () => {
  it('evicts the youngest replica of a shared node once a free node was there for 30 s, and only it', async () => {
    const newer = rebalanceOf('new');
    const older = rebalanceOf('old');
    rounds = { round: newer.round, stop: () => [newer, older].forEach((r) => r.stop()) };
    await roundsAt(newer, [0, 10_000]);
    expect(store.requests.some((r) => r.path === NODES)).toBe(true);
    store.put(NODES, node('a')); // a comes back
    await roundsAt(newer, [20_000, 40_000]);
    expect(evictions(store)).toEqual([]);
    await roundsAt(newer, [50_000]);
    await roundsAt(older, [50_000, 90_000]);
    expect(evictions(store)).toEqual(['new/eviction']);
    expect(JSON.parse(store.requests.find((r) => r.path.endsWith('/eviction'))!.body)).toMatchObject({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'new', namespace: NS },
    });
  });

  it('never evicts on a one-node cluster or toward a cordoned node', async () => {
    store.put(NODES, node('a', true));
    rounds = rebalanceOf('new');
    await roundsAt(rounds, [0, 40_000, 80_000, 120_000]);
    expect(evictions(store)).toEqual([]);
  });

  it('asks again after the PodDisruptionBudget refused (429)', async () => {
    store.put(NODES, node('a'));
    store.refuse = (r) =>
      r.path.endsWith('/eviction') ? { status: 429, message: "Cannot evict pod as it would violate the pod's disruption budget." } : undefined;
    rounds = rebalanceOf('new');
    await roundsAt(rounds, [0, 30_000, 40_000]);
    expect(evictions(store)).toEqual(['new/eviction', 'new/eviction']);
  });

  it('lists no nodes while the replicas are on distinct nodes', async () => {
    store.put(PODS, pod('new', 'a', '2026-01-01T00:05:00Z'));
    store.put(NODES, node('a'));
    rounds = rebalanceOf('new');
    await roundsAt(rounds, [0, 40_000]);
    expect(store.requests.filter((r) => r.path === NODES)).toEqual([]);
  });
});
