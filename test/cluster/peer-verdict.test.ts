/** The replicas' watch over each other, judged without I/O: who is marked not ready, and when a false alarm heals. */
import { HeartbeatAges, judgePeers, ProbeStreaks, type PeerRound, type PodView } from '../../src/cluster/peer-verdict.js';

const POLICY = { failedProbesToMark: 2, heartbeatStaleMs: 2_500 };
const pod = (name: string, extra: Partial<PodView> = {}): PodView => ({
  name,
  resourceVersion: `rv-${name}`,
  podIP: '10.0.0.1',
  ready: true,
  markedByPeer: false,
  terminating: false,
  ...extra,
});
/** A peer whose node died: its port silent twice, its heartbeat unchanged for 3 s. */
const dead = (name: string, extra: Partial<PodView> = {}) => ({ ...pod(name, extra), failedProbes: 2, heartbeatAgeMs: 3_000 });
const round = (extra: Partial<PeerRound> = {}): PeerRound => ({ self: pod('a'), selfServing: true, peers: [dead('b')], ...extra });

describe('judgePeers', () => {
  it('marks a peer whose port and heartbeat are both silent, against the resourceVersion judged', () => {
    expect(judgePeers(round(), POLICY)).toEqual([{ kind: 'mark-not-ready', pod: 'b', resourceVersion: 'rv-b' }]);
  });

  it('marks every silent peer of three or more, and only those', () => {
    const peers = [dead('b'), { ...pod('c'), failedProbes: 0, heartbeatAgeMs: 100 }, dead('d')];
    expect(judgePeers(round({ peers }), POLICY).map((a) => a.kind === 'mark-not-ready' && a.pod)).toEqual(['b', 'd']);
  });

  const { heartbeatAgeMs: _age, ...withoutLease } = dead('b');
  it.each([
    ['a cut between the replicas: its port is silent, its heartbeat through the API server fresh', { ...dead('b'), heartbeatAgeMs: 900 }],
    ['its heartbeat is late but its port answers (a slow API server)', { ...dead('b'), failedProbes: 0 }],
    ['one failed probe only', { ...dead('b'), failedProbes: 1 }],
    ['it has no heartbeat Lease (a replica without the mechanism, in a rollout)', withoutLease],
  ])('leaves a peer alone when %s', (_what, peer) => {
    expect(judgePeers(round({ peers: [peer] }), POLICY)).toEqual([]);
  });

  it.each([
    ['the peer is already not ready', { peers: [dead('b', { ready: false })] }],
    ['the peer is terminating', { peers: [dead('b', { terminating: true })] }],
    ['this replica is not ready', { self: pod('a', { ready: false }) }],
    ['this replica is terminating', { self: pod('a', { terminating: true }) }],
    ["this replica's own checks fail", { selfServing: false }],
  ])('marks nothing when %s', (_what, extra) => {
    expect(judgePeers(round(extra), POLICY)).toEqual([]);
  });

  it('a replica marked by a peer sets itself ready again while it serves, and marks nobody in that round', () => {
    const self = pod('a', { ready: false, markedByPeer: true });
    expect(judgePeers(round({ self }), POLICY)).toEqual([{ kind: 'restore-self', resourceVersion: 'rv-a' }]);
    expect(judgePeers(round({ self, selfServing: false }), POLICY)).toEqual([]);
  });

  it('a cut between two replicas that both reach the API server takes neither out, round after round', () => {
    const ages = new HeartbeatAges();
    const streaks = new ProbeStreaks();
    const marks: string[] = [];
    for (let second = 0; second < 30; second++) {
      const nowMs = second * 1_000;
      // Both renew every second through the API server; neither reaches the other's port.
      ages.observe(
        new Map([
          ['a', `a${second}`],
          ['b', `b${second}`],
        ]),
        nowMs,
      );
      streaks.record(
        new Map([
          ['a', false],
          ['b', false],
        ]),
      );
      for (const [self, peer] of [
        ['a', 'b'],
        ['b', 'a'],
      ] as const) {
        const peers = [{ ...pod(peer), failedProbes: streaks.failed(peer), heartbeatAgeMs: ages.ageMs(peer, nowMs)! }];
        marks.push(...judgePeers({ self: pod(self), selfServing: true, peers }, POLICY).map((a) => a.kind));
      }
    }
    expect(marks).toEqual([]);
  });
});

describe('HeartbeatAges', () => {
  it('measures from the change this replica saw, on its own clock, and forgets Leases that are gone', () => {
    const ages = new HeartbeatAges();
    ages.observe(new Map([['b', '1']]), 1_000);
    expect(ages.ageMs('b', 1_000)).toBe(0);
    ages.observe(new Map([['b', '1']]), 3_500);
    expect(ages.ageMs('b', 3_500)).toBe(2_500);
    ages.observe(new Map([['b', '2']]), 4_000);
    expect(ages.ageMs('b', 4_200)).toBe(200);
    ages.observe(new Map(), 5_000);
    expect(ages.ageMs('b', 5_000)).toBeUndefined();
  });
});

describe('ProbeStreaks', () => {
  it('counts failures in a row, resets on an answer, forgets peers no longer probed', () => {
    const streaks = new ProbeStreaks();
    streaks.record(new Map([['b', false]]));
    streaks.record(new Map([['b', false]]));
    expect(streaks.failed('b')).toBe(2);
    streaks.record(new Map([['b', true]]));
    expect(streaks.failed('b')).toBe(0);
    streaks.record(new Map([['b', false]]));
    streaks.record(new Map());
    expect(streaks.failed('b')).toBe(0);
  });
});
