/**
 * The cluster state the rules read besides the object under review, in one place: the
 * SpiderIPPools (a {@link PoolIndex}, what the pair rules read) and any other objects by
 * kind (Namespaces, Spiderpool's ConfigMap, …) for rules that need them. Filled once from
 * manifests (`review --pools`, `audit --pools`) or from a cluster's lists
 * (`--kubeconfig`), it is complete by construction, so offline checks decide as the
 * server does with a synced cache. Pure data, no I/O.
 */
import type { KubeObject } from '../kubernetes/build.js';
import { splitApiVersion } from '../kubernetes/resources.js';
import type { ClusterObjects } from '../kubernetes/cluster-objects.js';
import type { GroupKind } from '../kubernetes/resources.js';
import { SPIDERIPPOOL } from '../spiderpool/pool.js';
import { PoolIndex } from './pool-index.js';

/** An object of a state that could not be taken, and why (for a warning naming it). */
export interface RefusedObject {
  object: KubeObject;
  reason: string;
}

const kindKey = ({ group, kind }: GroupKind): string => `${group}/${kind}`;
const objectKey = (name: string, namespace: string | undefined): string => `${namespace ?? ''}/${name}`;

function identity(object: KubeObject): { groupKind: GroupKind; name: string | undefined; namespace: string | undefined } {
  const metadata = (object.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  return {
    groupKind: { group: splitApiVersion(object.apiVersion).group, kind: object.kind },
    name: typeof metadata.name === 'string' && metadata.name !== '' ? metadata.name : undefined,
    namespace: typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined,
  };
}

const isPool = (groupKind: GroupKind): boolean => groupKind.group === SPIDERIPPOOL.group && groupKind.kind === SPIDERIPPOOL.kind;

export class ClusterState implements ClusterObjects {
  /** The SpiderIPPools, synced: pair checks read them as the server reads its cache. */
  readonly pools = new PoolIndex();
  private readonly byKind = new Map<string, Map<string, KubeObject>>();

  /**
   * A state holding `objects` (a later object of the same kind and name replaces an
   * earlier one, as a second `kubectl apply` would).
   *
   * @returns the state and the objects it could not take (no name, or a SpiderIPPool
   *   whose fields do not have the types the rules read: pair checks treat it as absent).
   */
  static of(objects: readonly KubeObject[]): { state: ClusterState; refused: RefusedObject[] } {
    const state = new ClusterState();
    const refused: RefusedObject[] = [];
    // By name, so that only the last copy of a pool reaches the index and its shape check.
    const pools = new Map<string, KubeObject>();
    const seen = new Map<string, KubeObject>();
    for (const object of objects) {
      const { groupKind, name, namespace } = identity(object);
      const key = name === undefined ? undefined : `${kindKey(groupKind)} ${objectKey(name, namespace)}`;
      const earlier = key === undefined ? undefined : seen.get(key);
      if (earlier !== undefined) refused.push({ object: earlier, reason: 'a later object of the same kind and name replaces it, as a cluster holds only one' });
      if (key !== undefined) seen.set(key, object);
      if (name === undefined) refused.push({ object, reason: 'it has no metadata.name' });
      else if (isPool(groupKind)) pools.set(name, object);
      else state.kind(groupKind).set(objectKey(name, namespace), object);
    }
    const notPools = new Set(state.pools.replaceAll([...pools.values()]));
    for (const object of pools.values()) {
      if (notPools.has(identity(object).name!))
        refused.push({ object, reason: 'its fields do not have the types of a SpiderIPPool, so pair checks treat it as absent' });
    }
    return { state, refused };
  }

  private kind(groupKind: GroupKind): Map<string, KubeObject> {
    let objects = this.byKind.get(kindKey(groupKind));
    if (objects === undefined) this.byKind.set(kindKey(groupKind), (objects = new Map()));
    return objects;
  }

  get(groupKind: GroupKind, name: string, namespace?: string): KubeObject | undefined {
    return this.byKind.get(kindKey(groupKind))?.get(objectKey(name, namespace));
  }

  list(groupKind: GroupKind): KubeObject[] {
    return [...(this.byKind.get(kindKey(groupKind))?.values() ?? [])];
  }

  /** How many objects of each kind the state holds besides SpiderIPPools, e.g. `Namespace` → 2. */
  otherKinds(): Map<string, number> {
    return new Map([...this.byKind.values()].filter((objects) => objects.size > 0).map((objects) => [objects.values().next().value!.kind, objects.size]));
  }

  /**
   * The stored object with the identity (kind, namespace, name) of `object`; a SpiderIPPool
   * as the index keeps it (slimmed: what the rules and a webhook's `objectSelector` read).
   */
  stored(object: KubeObject): KubeObject | undefined {
    const { groupKind, name, namespace } = identity(object);
    if (name === undefined) return undefined;
    if (isPool(groupKind)) return this.pools.get(name) as KubeObject | undefined;
    return this.get(groupKind, name, namespace);
  }

  /**
   * Records a write the API server accepted, so that the next review sees it, as the
   * server's cache would: CREATE and UPDATE store `object`, DELETE removes it.
   */
  record(operation: 'CREATE' | 'UPDATE' | 'DELETE', object: KubeObject): void {
    const { groupKind, name, namespace } = identity(object);
    if (name === undefined) return;
    if (isPool(groupKind)) {
      if (operation === 'DELETE') this.pools.remove(name);
      else this.pools.upsert(object);
      return;
    }
    if (operation === 'DELETE') this.kind(groupKind).delete(objectKey(name, namespace));
    else this.kind(groupKind).set(objectKey(name, namespace), object);
  }
}
