/**
 * `serve --peer-readiness`: the shell around peer-verdict.ts. Every round (1 s in `serve`)
 * it lists the pods of its own Deployment (its own labels but `pod-template-hash`), and
 * when it has peers: renews its heartbeat Lease (named after its pod, owned by it), lists
 * the peers' Leases, probes each ready peer's HTTPS port (peer-probe.ts), and writes what
 * `judgePeers` decides to pods/status. Alone (one replica) it only lists its pods.
 * Every call has a deadline (deadline.ts); rounds.ts runs the rounds. Needs, in its own
 * namespace: pods get/list, pods/status patch, leases get/list/create/update (deploy/base/rbac.yaml).
 */
import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Lease, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';
import { probeHealthz } from './peer-probe.js';
import { startRounds, type Rounds } from './rounds.js';
import { HeartbeatAges, judgePeers, PEER_UNREACHABLE_REASON, ProbeStreaks, type PeerAction, type PeerPolicy, type PodView } from './peer-verdict.js';

export interface PeerWatchOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** This pod's name (the downward API's `metadata.name`). */
  podName: string;
  /** The HTTPS port every replica serves on. */
  port: number;
  /** This server's `/readyz` checks pass. */
  selfServing: () => boolean;
  /** Milliseconds between rounds. */
  intervalMs: number;
  /** Deadline of one probe, in milliseconds. */
  probeTimeoutMs: number;
  /** Deadline of one API call, in milliseconds. */
  callTimeoutMs: number;
  policy: PeerPolicy;
  logger: Logger;
  /** A monotonic clock in milliseconds (tests pass a fake one). */
  nowMs?: () => number;
  /** The probe (tests pass a fake one). */
  probe?: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
}

/** The label that differs between the ReplicaSets of one Deployment, left out of the peer selector. */
const TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** `metadata.labels` but the template hash, as a label selector (`a=b,c=d`); `undefined` without labels. */
export function peerSelector(labels: Record<string, string> | undefined): string | undefined {
  const pairs = Object.entries(labels ?? {}).filter(([key]) => key !== TEMPLATE_HASH_LABEL);
  return pairs.length === 0 ? undefined : pairs.map(([key, value]) => `${key}=${value}`).join(',');
}

/** The pod as the verdict reads it. */
function podView(pod: V1Pod): PodView {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    name: pod.metadata?.name ?? '',
    resourceVersion: pod.metadata?.resourceVersion ?? '',
    ...(pod.status?.podIP ? { podIP: pod.status.podIP } : {}),
    ready: ready?.status === 'True',
    markedByPeer: ready?.status === 'False' && ready.reason === PEER_UNREACHABLE_REASON,
    terminating: pod.metadata?.deletionTimestamp != null,
  };
}

/** A MicroTime as the API server parses it (RFC3339 with exactly six fraction digits). */
const microTime = (date: Date) => date.toISOString().replace(/Z$/, '000Z');

/** The strategic-merge patch of pods/status that sets `Ready`, against the resourceVersion judged. */
function readyPatch(resourceVersion: string, ready: boolean, message: string, at: Date): object {
  const condition = ready
    ? { type: 'Ready', status: 'True', reason: null, message: null, lastTransitionTime: at.toISOString() }
    : { type: 'Ready', status: 'False', reason: PEER_UNREACHABLE_REASON, message, lastTransitionTime: at.toISOString() };
  return { metadata: { resourceVersion }, status: { conditions: [condition] } };
}

/** Starts the rounds every `intervalMs`; the first runs at once. */
export function startPeerWatch(options: PeerWatchOptions): Rounds {
  const { kubeConfig, namespace, podName, logger } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const leases = kubeConfig.makeApiClient(CoordinationV1Api);
  const nowMs = options.nowMs ?? (() => performance.now());
  const probe = options.probe ?? probeHealthz;
  const call: Call = (fn) => withDeadline(fn, options.callTimeoutMs);
  const ages = new HeartbeatAges();
  const streaks = new ProbeStreaks();
  let selector: string | undefined;
  let lastProblem: string | undefined;

  const ownSelector = async () => (selector ??= peerSelector((await call((o) => core.readNamespacedPod({ name: podName, namespace }, o))).metadata?.labels));

  const heartbeat = leaseHeartbeat(kubeConfig.makeApiClient(CoordinationV1Api), call, {
    namespace,
    podName,
    durationSeconds: Math.ceil(options.policy.heartbeatStaleMs / 1000),
  });

  const leaseValues = async (labels: string) => {
    const list = await call((o) => leases.listNamespacedLease({ namespace, labelSelector: labels }, o));
    return new Map(list.items.map((l) => [l.metadata?.name ?? '', l.metadata?.resourceVersion ?? '']));
  };

  const probeAll = async (peers: PodView[]) => {
    const probed = peers.filter((p) => p.podIP !== undefined && p.ready);
    const answers = await Promise.all(probed.map((p) => probe(p.podIP!, options.port, options.probeTimeoutMs)));
    streaks.record(new Map(probed.map((p, i) => [p.name, answers[i]!])));
  };

  /** This round's heartbeat, Lease list and probes, and what they add up to per peer. */
  const observe = async (self: V1Pod, labels: string, peers: PodView[]) => {
    const [, values] = await Promise.all([heartbeat(self, labels), leaseValues(labels), probeAll(peers)]);
    const now = nowMs();
    ages.observe(values, now);
    return peers.map((p) => ({ ...p, failedProbes: streaks.failed(p.name), ...optionalAge(ages.ageMs(p.name, now)) }));
  };

  const write = async (action: PeerAction) => {
    const target = action.kind === 'restore-self' ? podName : action.pod;
    const message = `replica ${podName} found the port and the heartbeat of this pod silent (${options.policy.failedProbesToMark} probes, ${options.policy.heartbeatStaleMs} ms)`;
    const body = readyPatch(action.resourceVersion, action.kind === 'restore-self', message, new Date());
    await call((o) => core.patchNamespacedPodStatus({ name: target, namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch, o)));
    if (action.kind === 'restore-self') logger.info({ pod: podName }, 'this pod was marked not ready by a peer while serving: marked ready again');
    else logger.warn({ pod: target }, `peer ${target} marked not ready: its port and its heartbeat are silent`);
  };

  const round = async () => {
    const labels = await ownSelector();
    if (labels === undefined) throw new Error(`pod ${namespace}/${podName} has no labels: its peers cannot be found`);
    const pods = (await call((o) => core.listNamespacedPod({ namespace, labelSelector: labels }, o))).items;
    const self = pods.find((p) => p.metadata?.name === podName);
    if (self === undefined) throw new Error(`pod ${namespace}/${podName} is not among the pods its own labels select`);
    const peers = pods.filter((p) => p !== self).map(podView);
    // Alone: nothing to watch and no heartbeat written; its own mark is still undone.
    const observed = peers.length === 0 ? [] : await observe(self, labels, peers);
    const actions = judgePeers({ self: podView(self), selfServing: options.selfServing(), peers: observed }, options.policy);
    for (const action of actions) await write(action);
  };

  const guarded = async () => {
    try {
      await round();
      if (lastProblem !== undefined) logger.info('peer readiness: the API server answers again');
      lastProblem = undefined;
    } catch (err) {
      const { message } = summarizeApiError(err);
      // A 409: the pod changed since it was judged; the next round judges it again.
      if (message !== lastProblem) logger.warn({ err: message }, 'peer readiness: round failed; nothing marked this round');
      lastProblem = message;
    }
  };

  return startRounds(guarded, options.intervalMs, nowMs);
}

const optionalAge = (ageMs: number | undefined) => (ageMs === undefined ? {} : { heartbeatAgeMs: ageMs });

type Call = <T>(fn: Parameters<typeof withDeadline<T>>[0]) => Promise<T>;

/**
 * Renews this pod's Lease (named after it, labelled as its pods, owned by it): an update
 * against the version last written; after a failure (a conflict: another writer) the next
 * renewal reads it again; created when absent.
 */
function leaseHeartbeat(
  leases: CoordinationV1Api,
  call: Call,
  lease: { namespace: string; podName: string; durationSeconds: number },
): (self: V1Pod, labels: string) => Promise<void> {
  const { namespace, podName } = lease;
  let version: string | undefined;
  return async (self, labels) => {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: podName,
        labels: Object.fromEntries(labels.split(',').map((pair) => pair.split('=') as [string, string])),
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: self.metadata?.uid ?? '' }],
      },
      spec: { holderIdentity: podName, leaseDurationSeconds: lease.durationSeconds, renewTime: microTime(new Date()) as unknown as Date },
    };
    try {
      version ??= (await call((o) => leases.readNamespacedLease({ name: podName, namespace }, o))).metadata?.resourceVersion ?? '';
      const resourceVersion = version;
      version = (
        await call((o) => leases.replaceNamespacedLease({ name: podName, namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion } } }, o))
      ).metadata?.resourceVersion;
    } catch (err) {
      version = undefined;
      if (summarizeApiError(err).statusCode !== 404) throw err;
      version = (await call((o) => leases.createNamespacedLease({ namespace, body }, o))).metadata?.resourceVersion;
    }
  };
}
