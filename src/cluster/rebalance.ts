/**
 * `serve --rebalance`: the shell around placement-verdict.ts. Every round (10 s in `serve`)
 * it lists the pods of its own Deployment; when it is the youngest of two or more ready
 * replicas on its node, it lists the nodes, and once `shouldLeave` has held for
 * `settleMs` it asks for its own eviction (policy/v1 Eviction): the PodDisruptionBudget
 * refuses it (429) unless every other replica is healthy, and the ReplicaSet's replacement
 * goes where the spread puts it, the free node. Needs: pods get/list and pods/eviction
 * create in its namespace, nodes list (deploy/base/rbac.yaml).
 */
import { CoreV1Api, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';
import { peerSelector } from './peers.js';
import { crowded, shouldLeave, type NodeView, type PodPlacement, type ReplicaView } from './placement-verdict.js';
import { startRounds, type Rounds } from './rounds.js';

export interface RebalanceOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** This pod's name (the downward API's `metadata.name`). */
  podName: string;
  /** Milliseconds between rounds. */
  intervalMs: number;
  /** How long, in milliseconds, the verdict must hold before the eviction is asked for. */
  settleMs: number;
  /** Deadline of one API call, in milliseconds. */
  callTimeoutMs: number;
  logger: Logger;
  /** A monotonic clock in milliseconds (tests pass a fake one). */
  nowMs?: () => number;
}

function replicaView(pod: V1Pod): ReplicaView {
  return {
    name: pod.metadata?.name ?? '',
    ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    terminating: pod.metadata?.deletionTimestamp != null,
    createdMs: new Date(pod.metadata?.creationTimestamp ?? 0).getTime(),
  };
}

function nodeView(node: V1Node): NodeView {
  return {
    name: node.metadata?.name ?? '',
    labels: node.metadata?.labels ?? {},
    unschedulable: node.spec?.unschedulable === true,
    ready: node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    taints: (node.spec?.taints ?? []).map((t) => ({ key: t.key, effect: t.effect, ...(t.value === undefined ? {} : { value: t.value }) })),
  };
}

function podPlacement(pod: V1Pod): PodPlacement {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return {
    nodeSelector: pod.spec?.nodeSelector ?? {},
    tolerations: pod.spec?.tolerations ?? [],
    requiredTerms: terms.map((term) => term.matchExpressions ?? []),
  };
}

/** Starts the rounds every `intervalMs`; the first runs at once. */
export function startRebalance(options: RebalanceOptions): Rounds {
  const { namespace, podName, logger } = options;
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const nowMs = options.nowMs ?? (() => performance.now());
  const call = <T>(fn: Parameters<typeof withDeadline<T>>[0]) => withDeadline(fn, options.callTimeoutMs);
  let leavingSinceMs: number | undefined;
  let lastProblem: string | undefined;

  const round = async () => {
    const self = await call((o) => core.readNamespacedPod({ name: podName, namespace }, o));
    const labels = peerSelector(self.metadata?.labels);
    if (labels === undefined) throw new Error(`pod ${namespace}/${podName} has no labels: its peers cannot be found`);
    const replicas = (await call((o) => core.listNamespacedPod({ namespace, labelSelector: labels }, o))).items.map(replicaView);
    const leave =
      crowded(podName, replicas) && shouldLeave(podName, replicas, (await call((o) => core.listNode({}, o))).items.map(nodeView), podPlacement(self));
    if (!leave) return void (leavingSinceMs = undefined);
    leavingSinceMs ??= nowMs();
    if (nowMs() - leavingSinceMs < options.settleMs) return;
    await call((o) =>
      core.createNamespacedPodEviction(
        { name: podName, namespace, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: podName, namespace } } },
        o,
      ),
    );
    logger.warn(
      { pod: podName, node: self.spec?.nodeName },
      'this replica shared its node with another while a node could take it: evicted itself to be placed there',
    );
  };

  const guarded = async () => {
    try {
      await round();
      lastProblem = undefined;
    } catch (err) {
      const { message, statusCode } = summarizeApiError(err);
      // 429: the PodDisruptionBudget allows no eviction now; the next round asks again.
      if (message !== lastProblem) (statusCode === 429 ? logger.info.bind(logger) : logger.warn.bind(logger))({ err: message }, 'rebalance: round failed');
      lastProblem = message;
    }
  };
  return startRounds(guarded, options.intervalMs, nowMs);
}
