/**
 * The replicas' watch over each other, as a decision without I/O: from one round of
 * observations (the pods of the Deployment, each peer's HTTPS probes and heartbeat Lease),
 * which pod's `Ready` condition to set False, and whether to set this pod's back to True.
 *
 * Why `Ready` itself: the EndpointSlice controller publishes an address as ready exactly
 * when the pod's `Ready` condition is True (k8s.io/endpointslice `podToEndpoint`,
 * `podutil.IsPodReady`), and a dead node's kubelet cannot recompute `Ready` from a
 * readiness gate. The node lifecycle controller writes the same condition the same way
 * (pkg/controller/util/node `MarkPodsNotReady`). A live kubelet writes its own value back
 * within its status manager's 10 s reconcile (pkg/kubelet/status/status_manager.go
 * `needsReconcile`); a live replica restores itself sooner. The rule against partitions:
 * docs/adr/0035-peer-readiness.md.
 */

/** The reason written into a `Ready` condition this mechanism set False. */
export const PEER_UNREACHABLE_REASON = 'PeerUnreachable';

/** One pod of the Deployment as the round's list showed it. */
export interface PodView {
  name: string;
  /** Its `metadata.resourceVersion`: a status write is made against the version judged. */
  resourceVersion: string;
  /** `status.podIP`; absent before the pod has one. */
  podIP?: string;
  /** Its `Ready` condition is True. */
  ready: boolean;
  /** Its `Ready` condition is False with {@link PEER_UNREACHABLE_REASON}: a replica marked it. */
  markedByPeer: boolean;
  /** It has a `metadata.deletionTimestamp` (its endpoint is already not ready). */
  terminating: boolean;
}

/** What this replica saw of one peer over the last rounds. */
interface PeerHealth {
  /** Probes of its HTTPS port that failed in a row (0 after one that answered). */
  failedProbes: number;
  /**
   * Milliseconds (this replica's monotonic clock) since its heartbeat Lease was last seen
   * to change; absent when it has none (a replica without the mechanism is never marked).
   */
  heartbeatAgeMs?: number;
}

/** One round's observations, made only when every API call of the round succeeded (the lists, this replica's heartbeat). */
export interface PeerRound {
  self: PodView;
  /** This server's own `/readyz` checks pass. */
  selfServing: boolean;
  peers: readonly (PodView & PeerHealth)[];
}

/** When a peer counts as gone. */
export interface PeerPolicy {
  /** Failed probes in a row before a peer may be marked. */
  failedProbesToMark: number;
  /** Milliseconds without a change of its heartbeat before a peer may be marked. */
  heartbeatStaleMs: number;
}

export type PeerAction = { kind: 'mark-not-ready'; pod: string; resourceVersion: string } | { kind: 'restore-self'; resourceVersion: string };

/** A peer this replica may mark: ready now, not leaving, silent on both paths (its port and the API server). */
function gone(peer: PodView & PeerHealth, policy: PeerPolicy): boolean {
  const silent = peer.heartbeatAgeMs !== undefined && peer.heartbeatAgeMs >= policy.heartbeatStaleMs;
  return peer.ready && !peer.terminating && peer.failedProbes >= policy.failedProbesToMark && silent;
}

/**
 * The writes of one round (judged only after a round whose API calls all succeeded). This pod's own mark
 * is undone when its server is ready (a false alarm heals at once). Peers are marked only
 * by a replica that is itself ready, serving, and reached the API server this round, and
 * only when both the peer's port and its heartbeat through the API server are silent: a
 * cut between replicas alone leaves both heartbeats fresh, so neither is marked.
 */
export function judgePeers(round: PeerRound, policy: PeerPolicy): PeerAction[] {
  const { self } = round;
  if (self.markedByPeer) return round.selfServing ? [{ kind: 'restore-self', resourceVersion: self.resourceVersion }] : [];
  if (!self.ready || !round.selfServing || self.terminating) return [];
  return round.peers.filter((peer) => gone(peer, policy)).map((peer) => ({ kind: 'mark-not-ready', pod: peer.name, resourceVersion: peer.resourceVersion }));
}

/**
 * The heartbeat ages of {@link PeerHealth}, kept across rounds: per Lease name, the value
 * last seen and when it changed, on this replica's clock (another node's clock never
 * enters: a peer's clock skew cannot make it look silent).
 */
export class HeartbeatAges {
  private readonly seen = new Map<string, { value: string; changedAtMs: number }>();

  /** Records this round's Lease values (name → resourceVersion) at `nowMs`; Leases not listed are forgotten. */
  observe(values: ReadonlyMap<string, string>, nowMs: number): void {
    for (const name of [...this.seen.keys()]) if (!values.has(name)) this.seen.delete(name);
    for (const [name, value] of values) {
      if (this.seen.get(name)?.value !== value) this.seen.set(name, { value, changedAtMs: nowMs });
    }
  }

  /** Milliseconds since `name`'s Lease last changed, or `undefined` when none was seen. */
  ageMs(name: string, nowMs: number): number | undefined {
    const entry = this.seen.get(name);
    return entry === undefined ? undefined : nowMs - entry.changedAtMs;
  }
}

/** Consecutive failed probes per peer, kept across rounds. */
export class ProbeStreaks {
  private readonly failures = new Map<string, number>();

  /** Records this round's probe results (pod name → answered); peers not probed are forgotten. */
  record(results: ReadonlyMap<string, boolean>): void {
    for (const name of [...this.failures.keys()]) if (!results.has(name)) this.failures.delete(name);
    for (const [name, answered] of results) this.failures.set(name, answered ? 0 : (this.failures.get(name) ?? 0) + 1);
  }

  failed(name: string): number {
    return this.failures.get(name) ?? 0;
  }
}
