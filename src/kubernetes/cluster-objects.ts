/**
 * What rules other than the pair rules may read of the cluster besides the object under
 * review: stored objects by kind, from memory only (src/store/state.ts fills it from
 * manifests or a cluster's lists).
 */
import type { KubeObject } from '../kubernetes/build.js';
import type { GroupKind } from '../kubernetes/resources.js';

/** What rules other than the pair rules may read of the cluster: stored objects by kind. */
export interface ClusterObjects {
  /** The stored object of that kind and name (`namespace` for namespaced kinds), if any. */
  get(groupKind: GroupKind, name: string, namespace?: string): KubeObject | undefined;
  /** Every stored object of that kind. */
  list(groupKind: GroupKind): KubeObject[];
}
