/**
 * Whether Spiderpool runs dual-stack, from its ConfigMap as a cache or a manifest holds it:
 * the one place that turns "the ConfigMap, or its absence" into a {@link DualStack} for the
 * candidate-pool warnings. Pure: the server's watch (cluster/spiderpool-conf-cache.ts) and
 * `review --pools` feed it.
 */
import type { ClusterObjects } from '../kubernetes/cluster-objects.js';
import { CONF_YML_KEY } from '../defaults.js';
import type { DualStack } from './candidate-categories.js';
import { enableIPv6Of } from './candidate-dual-stack.js';

export interface SpiderpoolConfRef {
  name: string;
  /** Any namespace when absent (`review`); the server always watches one. */
  namespace?: string;
}

const where = (ref: SpiderpoolConfRef) => `ConfigMap ${ref.namespace === undefined ? '' : `${ref.namespace}/`}${ref.name}`;

/** The {@link DualStack} a stored ConfigMap (or `undefined`: none) gives. */
export function dualStackOf(configMap: unknown, ref: SpiderpoolConfRef): DualStack {
  if (configMap === undefined) return { known: false, reason: `${where(ref)} does not exist` };
  const confYml = (configMap as { data?: Record<string, unknown> | null } | null)?.data?.[CONF_YML_KEY];
  if (typeof confYml !== 'string') return { known: false, reason: `${where(ref)} has no ${CONF_YML_KEY}` };
  const read = enableIPv6Of(confYml);
  return read.ok ? { known: true, enableIPv6: read.enableIPv6 } : { known: false, reason: `${where(ref)}: ${read.reason}` };
}

/** The {@link DualStack} of the ConfigMap `ref` names among `cluster`'s objects (`review --pools`, `--kubeconfig`). */
export function dualStackInCluster(cluster: ClusterObjects, ref: SpiderpoolConfRef): DualStack {
  const found = cluster
    .list({ group: '', kind: 'ConfigMap' })
    .filter((c) => (c.metadata as { name?: unknown } | undefined)?.name === ref.name)
    .filter((c) => ref.namespace === undefined || (c.metadata as { namespace?: unknown } | undefined)?.namespace === ref.namespace);
  if (found.length > 1) return { known: false, reason: `${found.length} ConfigMaps are named ${ref.name}; give --configmap-namespace` };
  return dualStackOf(found[0], ref);
}

/** What a review reads from the server's watch: the last ConfigMap seen, or why it is not known. */
export class SpiderpoolConfState {
  private synced = false;
  private current: DualStack;

  constructor(private readonly ref: Required<SpiderpoolConfRef>) {
    this.current = { known: false, reason: `${where(ref)} has not been listed from the API server yet` };
  }

  /** Stores the ConfigMap as listed or watched, or its absence (`undefined`). */
  set(configMap: unknown): void {
    this.current = dualStackOf(configMap, this.ref);
  }

  markSynced(): void {
    this.synced = true;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  dualStack(): DualStack {
    return this.current;
  }
}
