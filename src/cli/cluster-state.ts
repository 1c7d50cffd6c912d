/**
 * `--pools PATH…` or `--kubeconfig FILE` of `review` and `audit`: the cluster state the
 * checks read, from manifests or listed once from a cluster.
 */
import { existsSync } from 'node:fs';
import type { KubeObject } from '../kubernetes/build.js';
import { ClusterState } from '../store/state.js';
import { readManifestPaths } from '../kubernetes/manifests.js';
import { quoteGoString } from '../go/strconv-quote.js';

export interface StateSource {
  /** `--pools`: files or folders of manifests. */
  pools: readonly string[];
  /** `--kubeconfig`: list the state from that cluster instead. */
  kubeconfig?: string;
  /**
   * With `kubeconfig`: Spiderpool's ConfigMap, listed with the Namespaces beside the
   * SpiderIPPools; absent, only the SpiderIPPools are listed (`audit`).
   */
  configMapName?: string;
}

/** A usage error: exit 2 with this one-line message. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Loads the state, or `undefined` when neither source is given (no cluster known: the
 * pair checks are skipped with a warning, as in a server without a cluster connection).
 *
 * @returns the state and warnings about objects it could not take.
 * @throws UsageError when both sources are given or the cluster cannot be listed;
 *   ManifestError when a manifest cannot be read.
 */
export async function loadState(source: StateSource): Promise<{ state: ClusterState; warnings: string[] } | undefined> {
  if (source.pools.length > 0 && source.kubeconfig !== undefined) throw new UsageError('give --pools or --kubeconfig, not both');
  let objects: { object: KubeObject; source: string }[];
  if (source.kubeconfig !== undefined) {
    if (!existsSync(source.kubeconfig)) throw new UsageError(`${source.kubeconfig}: cannot be read as a kubeconfig: no such file`);
    // One after the other: both load client-node, which jest's ESM loader cannot link twice at once.
    const { loadKubeConfig } = await import('../cluster/kubeconfig.js');
    const { ClusterListError, listClusterState } = await import('../cluster/list-state.js');
    let loaded: ReturnType<typeof loadKubeConfig>;
    try {
      loaded = loadKubeConfig(source.kubeconfig);
    } catch (e) {
      // The loader's message names the flag and the file already (and holds no excerpt of it).
      throw new UsageError(String((e as Error)?.message ?? e).split('\n', 1)[0]);
    }
    if (loaded === undefined) throw new UsageError(`${source.kubeconfig}: no kubeconfig there`);
    try {
      objects = (await listClusterState(loaded.config, source.configMapName)).map((object) => ({ object, source: source.kubeconfig! }));
    } catch (e) {
      if (e instanceof ClusterListError) throw new UsageError(e.message);
      throw e;
    }
  } else if (source.pools.length > 0) {
    objects = await readManifestPaths(source.pools);
  } else return undefined;
  const sourceOf = new Map(objects.map(({ object, source }) => [object, source]));
  const { state, refused } = ClusterState.of(objects.map(({ object }) => object));
  const warnings = refused.map(({ object, reason }) => {
    const name = (object.metadata as { name?: unknown } | undefined)?.name;
    return `${sourceOf.get(object)}: ${object.kind} ${typeof name === 'string' ? quoteGoString(name) : '(no name)'} is left out of the cluster state: ${reason}`;
  });
  return { state, warnings };
}
