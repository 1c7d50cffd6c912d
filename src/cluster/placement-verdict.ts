/**
 * Moving replicas apart again, as a decision without I/O: whether this replica should
 * leave its node (evict itself) because it shares it with another replica while a node
 * that could take it holds none. The scheduler never moves a running pod; a replacement
 * that came while a node was down shares the surviving node for good otherwise. Which
 * nodes could take it follows the scheduler's filters for the pod's own spec: not
 * cordoned, Ready, every NoSchedule/NoExecute taint tolerated
 * (k8s.io/component-helpers/scheduling/corev1 `Toleration.ToleratesTaint`), its
 * nodeSelector and required node affinity matched (`nodeaffinity.GetRequiredNodeAffinity`).
 * Room (CPU, memory) is not judged: docs/adr/0035-peer-readiness.md.
 */

/** One replica of the Deployment as the list showed it. */
export interface ReplicaView {
  name: string;
  nodeName?: string;
  ready: boolean;
  terminating: boolean;
  /** `metadata.creationTimestamp` in milliseconds since the epoch. */
  createdMs: number;
}

/** What of a node the scheduler's filters read. */
export interface NodeView {
  name: string;
  labels: Record<string, string>;
  unschedulable: boolean;
  ready: boolean;
  taints: readonly Taint[];
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: readonly string[];
}

/** The parts of this pod's spec that choose its nodes. */
export interface PodPlacement {
  nodeSelector: Record<string, string>;
  tolerations: readonly Toleration[];
  /** `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`: any one term, every expression of it. */
  requiredTerms: readonly (readonly NodeSelectorRequirement[])[];
}

/** `Toleration.ToleratesTaint`: effect, key and value, with an empty key and `Exists` tolerating every taint. */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  return (toleration.operator === undefined || toleration.operator === 'Equal') && (toleration.value ?? '') === (taint.value ?? '');
}

/** One node selector requirement; Gt and Lt compare whole numbers, as the scheduler does. */
function matches(requirement: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const [have, bound] = [Number(value), Number(values[0])];
      if (value === undefined || !Number.isInteger(have) || !Number.isInteger(bound)) return false;
      return requirement.operator === 'Gt' ? have > bound : have < bound;
    }
    default:
      return false;
  }
}

/** The node passes the scheduler's filters for this pod's spec (room aside). */
export function couldTake(node: NodeView, pod: PodPlacement): boolean {
  if (node.unschedulable || !node.ready) return false;
  const blocking = node.taints.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
  if (!blocking.every((taint) => pod.tolerations.some((t) => tolerates(t, taint)))) return false;
  if (!Object.entries(pod.nodeSelector).every(([key, value]) => node.labels[key] === value)) return false;
  return pod.requiredTerms.length === 0 || pod.requiredTerms.some((term) => term.every((r) => matches(r, node.labels)));
}

/**
 * This replica leaves its node when every replica is ready (two or more, none leaving), it
 * shares its node with another, it is the youngest there (the name breaks a tie), and a
 * node that could take it holds no replica. The eviction it then asks for passes the
 * PodDisruptionBudget first, so at most one replica is ever away.
 */
export function shouldLeave(self: string, replicas: readonly ReplicaView[], nodes: readonly NodeView[], pod: PodPlacement): boolean {
  if (!crowded(self, replicas)) return false;
  const occupied = new Set(replicas.map((r) => r.nodeName));
  return nodes.some((node) => !occupied.has(node.name) && couldTake(node, pod));
}

/** The first half of {@link shouldLeave}, which needs no nodes: all ready, and this replica the youngest of two or more on its node. */
export function crowded(self: string, replicas: readonly ReplicaView[]): boolean {
  const me = replicas.find((r) => r.name === self);
  if (me?.nodeName === undefined || replicas.length < 2 || !replicas.every((r) => r.ready && !r.terminating)) return false;
  const here = replicas.filter((r) => r.nodeName === me.nodeName);
  const youngest = here.reduce((a, b) => (b.createdMs > a.createdMs || (b.createdMs === a.createdMs && b.name > a.name) ? b : a));
  return here.length >= 2 && youngest.name === self;
}
