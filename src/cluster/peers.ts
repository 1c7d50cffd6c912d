/**
 * `serve --peer-readiness`: the shell around peer-verdict.ts. Every round (1 s in `serve`)
 * it lists the pods of its own Deployment (its own labels but `pod-template-hash`), and
 * when it has peers: renews its heartbeat Lease (named after its pod, owned by it), lists
 * the peers' Leases, probes each ready peer's HTTPS port (peer-probe.ts), and writes what
 * `judgePeers` decides to pods/status. Alone (one replica) it only lists its pods.
 * Every call has a deadline (deadline.ts); a round that outlasts the interval is followed
 * at once by the next. Needs, in its own namespace: pods get/list, pods/status patch, leases
 * get/list/create/update (deploy/base/rbac.yaml).
 */
import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Lease, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';
import { probeHealthz } from './peer-probe.js';
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

export interface PeerWatch {
  /** Runs one round now (tests; the timer runs them otherwise); resolves when it ends. */
  round(): Promise<void>;
  stop(): void;
}

/** The label that differs between the ReplicaSets of one Deployment, left out of the peer selector. */
const TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** `metadata.labels` but the template hash, as a label selector (`a=b,c=d`); `undefined` without labels. */
export function peerSelector(labels: Record<string, string> | undefined): string | undefined {
  const pairs = Object.entries(labels ?? {}).filter(([key]) => key !== TEMPLATE_HASH_LABEL);
  return pairs.length === 0 ? undefined : pairs.map(([key, value]) => `${key}=${value}`).join(',');
}

/** The pod as the verdict reads it. */
export function podView(pod: V1Pod): PodView {
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
export function readyPatch(resourceVersion: string, ready: boolean, message: string, at: Date): object {
  const condition = ready
    ? { type: 'Ready', status: 'True', reason: null, message: null, lastTransitionTime: at.toISOString() }
    : { type: 'Ready', status: 'False', reason: PEER_UNREACHABLE_REASON, message, lastTransitionTime: at.toISOString() };
  return { metadata: { resourceVersion }, status: { conditions: [condition] } };
}

/** Starts the rounds every `intervalMs`; the first runs at once. */
export function startPeerWatch(options: PeerWatchOptions): PeerWatch {
  const { kubeConfig, namespace, podName, logger } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const leases = kubeConfig.makeApiClient(CoordinationV1Api);
  const nowMs = options.nowMs ?? (() => performance.now());
  const probe = options.probe ?? probeHealthz;
  const call = <T>(fn: Parameters<typeof withDeadline<T>>[0]) => withDeadline(fn, options.callTimeoutMs);
  const ages = new HeartbeatAges();
  const streaks = new ProbeStreaks();
  let selector: string | undefined;
  let lastProblem: string | undefined;

  const ownSelector = async () => (selector ??= peerSelector((await call((o) => core.readNamespacedPod({ name: podName, namespace }, o))).metadata?.labels));

  /** Renews this pod's Lease: an update against the version last written, read again after a conflict, created when absent. */
  let leaseVersion: string | undefined;
  const heartbeat = async (self: V1Pod, labels: string) => {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: podName,
        labels: Object.fromEntries(labels.split(',').map((pair) => pair.split('=') as [string, string])),
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: self.metadata?.uid ?? '' }],
      },
      spec: { holderIdentity: podName, leaseDurationSeconds: Math.ceil(options.policy.heartbeatStaleMs / 1000), renewTime: microTime(new Date()) as unknown as Date },
    };
    const replace = (resourceVersion: string) => call((o) => leases.replaceNamespacedLease({ name: podName, namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion } } }, o));
    try {
      leaseVersion ??= (await call((o) => leases.readNamespacedLease({ name: podName, namespace }, o))).metadata?.resourceVersion ?? '';
      leaseVersion = (await replace(leaseVersion)).metadata?.resourceVersion;
    } catch (err) {
      leaseVersion = undefined;
      if (summarizeApiError(err).statusCode !== 404) throw err;
      leaseVersion = (await call((o) => leases.createNamespacedLease({ namespace, body }, o))).metadata?.resourceVersion;
    }
  };

  const leaseValues = async (labels: string) => {
    const list = await call((o) => leases.listNamespacedLease({ namespace, labelSelector: labels }, o));
    return new Map(list.items.map((l) => [l.metadata?.name ?? '', l.metadata?.resourceVersion ?? '']));
  };

  const probeAll = async (peers: PodView[]) => {
    const probed = peers.filter((p) => p.podIP !== undefined && p.ready);
    const answers = await Promise.all(probed.map((p) => probe(p.podIP!, options.port, options.probeTimeoutMs)));
    streaks.record(new Map(probed.map((p, i) => [p.name, answers[i]!])));
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
    if (peers.length === 0) return; // alone: nothing to watch, no heartbeat written
    const [, values] = await Promise.all([heartbeat(self, labels), leaseValues(labels), probeAll(peers)]);
    const now = nowMs();
    ages.observe(values, now);
    const observed = peers.map((p) => ({ ...p, failedProbes: streaks.failed(p.name), ...optionalAge(ages.ageMs(p.name, now)) }));
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

  // Back to back when a round outlasts the interval (a silent peer's probe waits its whole deadline).
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= (async () => {
      const startedMs = nowMs();
      await guarded();
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(() => void tick(), Math.max(0, options.intervalMs - (nowMs() - startedMs))).unref();
    })().finally(() => (running = undefined));
    return running;
  };
  void tick();
  return {
    round: tick,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

const optionalAge = (ageMs: number | undefined) => (ageMs === undefined ? {} : { heartbeatAgeMs: ageMs });
