/**
 * `serve --peer-readiness`'s rounds against a stand-in API server on 127.0.0.1, with a
 * fake clock and fake probes: what it writes (its heartbeat Lease, a peer's or its own
 * Ready condition) and what it never writes (alone, in a cut between replicas, without
 * the API server).
 */
import { pino } from 'pino';
import { peerMarkParts } from '../../src/cluster/node-failure-windows.js';
import { startPeerWatch } from '../../src/cluster/peers.js';
import { PEER_POLICY, PEER_PROBE_TIMEOUT_MS, PEER_ROUND_INTERVAL_MS } from '../../src/cluster/replica-defaults.js';
import type { Rounds } from '../../src/cluster/rounds.js';
import { startFakeObjectStore, type FakeObjectStore } from './fake-object-store.js';

const NS = 'spiderpool-iaas-webhook';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const LABELS = { 'app.kubernetes.io/name': 'spiderpool-iaas-webhook', 'app.kubernetes.io/component': 'admission-webhook' };

const pod = (name: string, podIP: string, ready: { status: string; reason?: string } = { status: 'True' }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels: { ...LABELS, 'pod-template-hash': '5d8f7' } },
  status: {
    podIP,
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', ...ready },
    ],
  },
});
const lease = (name: string) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: NS, labels: LABELS },
  spec: { holderIdentity: name },
});
const ready = (store: FakeObjectStore, name: string) =>
  store.objects.get(`${PODS}/${name}`)!['status'].conditions.find((c: { type: string }) => c.type === 'Ready');
const writes = (store: FakeObjectStore) =>
  store.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path.replace(/^.*\/namespaces\/[^/]+\//, '')}`);

/** The status patches among `writes`. */
const patches = (store: FakeObjectStore) => writes(store).filter((w) => w.startsWith('PATCH'));

let store: FakeObjectStore;
let watch: Rounds | undefined;
let nowMs: number;
/** Whether b's port answers a probe. */
let bAnswers: boolean;

beforeEach(async () => {
  store = await startFakeObjectStore();
  nowMs = 0;
  bAnswers = true;
});
afterEach(async () => {
  watch?.stop();
  watch = undefined;
  await store.close();
});

/** Replica a's pod and replica b's, both ready. */
function putTwoPods(): void {
  store.put(PODS, pod('a', '10.0.0.1'));
  store.put(PODS, pod('b', '10.0.0.2'));
}

/** Replica a's watch; rounds run only when the test calls them (the interval is an hour). */
function watchFromA(selfServing = () => true): Rounds {
  return startPeerWatch({
    kubeConfig: store.kubeConfig,
    namespace: NS,
    podName: 'a',
    port: 8443,
    selfServing,
    intervalMs: 3_600_000,
    probeTimeoutMs: 1_000,
    callTimeoutMs: 5_000,
    policy: { failedProbesToMark: 2, heartbeatStaleMs: 2_500 },
    logger: pino({ level: 'silent' }),
    nowMs: () => nowMs,
    probe: async (host) => host !== '10.0.0.2' || bAnswers,
  });
}

/** Rounds at the given times (ms on the fake clock), `between` run before each. */
async function roundsAt(times: number[], between: () => void = () => undefined): Promise<void> {
  for (const at of times) {
    nowMs = at;
    between();
    await watch!.round();
  }
}

describe('startPeerWatch', () => {
  it('alone (one replica) writes nothing: no heartbeat, no status', async () => {
    store.put(PODS, pod('a', '10.0.0.1'));
    watch = watchFromA();
    await roundsAt([0, 1_000, 5_000]);
    expect(writes(store)).toEqual([]);
    expect(store.requests.length).toBeGreaterThan(0);
  });

  it('alone but marked by a peer that has gone since, sets its own pod ready again', async () => {
    store.put(PODS, pod('a', '10.0.0.1', { status: 'False', reason: 'PeerUnreachable' }));
    watch = watchFromA();
    await roundsAt([0]);
    expect(writes(store)).toEqual(['PATCH pods/a/status']);
    expect(ready(store, 'a').status).toBe('True');
  });

  it('renews its own Lease, owned by its pod and labelled as its pods but the template hash', async () => {
    putTwoPods();
    watch = watchFromA();
    await roundsAt([0, 1_000]);
    expect(writes(store)).toEqual(['POST leases', 'PUT leases/a']);
    const own = store.objects.get(`${LEASES}/a`)!;
    expect(own['metadata'].labels).toEqual(LABELS);
    expect(own['metadata'].ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: 'a', uid: store.objects.get(`${PODS}/a`)!['metadata'].uid }]);
    expect(own['spec'].renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('marks a peer not ready once its port failed twice and its heartbeat stood still for 2.5 s, and not before', async () => {
    putTwoPods();
    store.put(LEASES, lease('b'));
    bAnswers = false;
    watch = watchFromA();
    await roundsAt([0, 1_000, 2_000]);
    expect(ready(store, 'b')).toEqual({ type: 'Ready', status: 'True' });
    await roundsAt([2_600]);
    expect(ready(store, 'b')).toMatchObject({ type: 'Ready', status: 'False', reason: 'PeerUnreachable' });
    expect(ready(store, 'b').message).toMatch(/^replica a found the port and the heartbeat of this pod silent/);
    expect(patches(store)).toEqual(['PATCH pods/b/status']);
    // The conditions merge by type only in a strategic-merge patch (a JSON patch would be refused).
    expect(store.requests.find((r) => r.method === 'PATCH')!.contentType).toBe('application/strategic-merge-patch+json');
    // Marked once: a peer not ready is left to its kubelet (or to itself).
    await roundsAt([3_600, 4_600]);
    expect(patches(store)).toEqual(['PATCH pods/b/status']);
  });

  it('a cut between the replicas marks nobody while the peer heartbeats through the API server', async () => {
    putTwoPods();
    bAnswers = false;
    watch = watchFromA();
    await roundsAt(
      Array.from({ length: 20 }, (_, i) => i * 1_000),
      () => store.put(LEASES, lease('b')),
    );
    expect(patches(store)).toEqual([]);
    expect(ready(store, 'b').status).toBe('True');
  });

  it('marks nobody in a round whose API calls failed (here: the Lease list)', async () => {
    putTwoPods();
    store.put(LEASES, lease('b'));
    bAnswers = false;
    watch = watchFromA();
    await roundsAt([0, 1_000]);
    store.refuse = (r) => (r.method === 'GET' && r.path === LEASES ? { status: 500, message: 'etcd unavailable' } : undefined);
    await roundsAt([3_000, 4_000]);
    expect(patches(store)).toEqual([]);
  });

  it('sets its own pod ready again when a peer marked it while it serves, and not while its checks fail', async () => {
    store.put(PODS, pod('a', '10.0.0.1', { status: 'False', reason: 'PeerUnreachable' }));
    store.put(PODS, pod('b', '10.0.0.2'));
    let serving = false;
    watch = watchFromA(() => serving);
    await roundsAt([0]);
    expect(ready(store, 'a').status).toBe('False');
    serving = true;
    await roundsAt([1_000]);
    expect(ready(store, 'a')).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: expect.any(String) });
  });
});

describe('a dead peer marked within the window stated for it (peerMarkParts)', () => {
  const marked = () => store.requests.some((r) => r.method === 'PATCH' && r.path.endsWith('/pods/b/status'));

  /**
   * b renews its Lease every round at `renewPhaseMs` until its node dies at `killMs`; a runs
   * `serve`'s settings in rounds as rounds.ts schedules them (the next one an interval after
   * the last began, at once after a longer one), its probe of the dead b waiting the whole
   * deadline on the fake clock. Returns the ms from the kill to a's status write marking b.
   */
  async function markDelayMs(killMs: number, renewPhaseMs: number): Promise<number> {
    putTwoPods();
    let renewedAtMs = -Infinity;
    const renew = (atMs: number) => {
      const lastMs = renewPhaseMs + Math.floor((Math.min(atMs, killMs - 1) - renewPhaseMs) / PEER_ROUND_INTERVAL_MS) * PEER_ROUND_INTERVAL_MS;
      if (lastMs > renewedAtMs) store.put(LEASES, lease('b'));
      renewedAtMs = Math.max(renewedAtMs, lastMs);
    };
    let startMs = 0;
    for (let round = 0; round < 20; round++) {
      nowMs = startMs;
      renew(startMs);
      watch ??= startPeerWatch({
        kubeConfig: store.kubeConfig,
        namespace: NS,
        podName: 'a',
        port: 8443,
        selfServing: () => true,
        intervalMs: 3_600_000, // rounds run when this loop calls them
        probeTimeoutMs: PEER_PROBE_TIMEOUT_MS,
        callTimeoutMs: 5_000,
        policy: PEER_POLICY,
        logger: pino({ level: 'silent' }),
        nowMs: () => nowMs,
        probe: async (host) => {
          if (host !== '10.0.0.2' || nowMs < killMs) return true;
          nowMs += PEER_PROBE_TIMEOUT_MS;
          return false;
        },
      });
      await watch.round();
      if (marked()) return nowMs - killMs;
      startMs += Math.max(PEER_ROUND_INTERVAL_MS, nowMs - startMs);
    }
    throw new Error(`b not marked within 20 rounds of a kill at ${killMs} ms`);
  }

  // Kills at several points of a's round, b's renewals at several points of its own; the
  // worst: b renews just after a's Lease list and dies just after that (offset 2, phase 1).
  const KILL_OFFSETS_MS = [0, 2, 500, 999];
  const RENEW_PHASES_MS = [0, 1, 999];
  it('marks a dead peer within the stated seconds wherever in the rounds it dies, the worst case within one round of them', async () => {
    const boundMs = peerMarkParts().reduce((total, p) => total + p.seconds * 1000, 0);
    const delays: number[] = [];
    for (const offsetMs of KILL_OFFSETS_MS) {
      for (const phaseMs of RENEW_PHASES_MS) {
        watch?.stop();
        watch = undefined;
        await store.close();
        store = await startFakeObjectStore();
        delays.push(await markDelayMs(3 * PEER_ROUND_INTERVAL_MS + offsetMs, phaseMs));
      }
    }
    expect(Math.max(...delays)).toBeLessThanOrEqual(boundMs);
    expect(Math.max(...delays)).toBeGreaterThan(boundMs - Math.max(PEER_ROUND_INTERVAL_MS, PEER_PROBE_TIMEOUT_MS));
  });
});
