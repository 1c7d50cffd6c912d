/**
 * `--pools PATH…` or the cluster (`--cluster`, `--kubeconfig FILE`, `--context NAME`) of
 * `review` and `audit`: the cluster state the checks read, from manifests or listed once.
 */
import { existsSync } from 'node:fs';
import type { KubeObject } from '../kubernetes/build.js';
import { ClusterState } from '../store/state.js';
import { readManifestPaths } from '../kubernetes/manifests.js';
import { quoteGoString } from '../go/strconv-quote.js';
import { NO_CLUSTER_FOUND } from '../cluster/kubeconfig-source.js';

/** `--kubeconfig` and `--context`: which cluster, found as kubectl finds it. */
export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
}

export interface StateSource {
  /** `--pools`: files or folders of manifests. */
  pools: readonly string[];
  /** List the state from a cluster instead (`--cluster`, `--kubeconfig`, `--context`; kubectl's lookup). */
  cluster?: ClusterFlags;
  /**
   * With `cluster`: Spiderpool's ConfigMap, listed with the Namespaces beside the
   * SpiderIPPools; absent, only the SpiderIPPools are listed (`audit`).
   */
  configMapName?: string;
}

/** A usage error: exit 2 with this one-line message. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Loads the state, or `undefined` when neither source is given.
 *
 * @returns the state and warnings about objects it could not take.
 * @throws UsageError when both sources are given or the cluster cannot be found or listed;
 *   ManifestError when a manifest cannot be read.
 */
export async function loadState(source: StateSource): Promise<{ state: ClusterState; warnings: string[] } | undefined> {
  if (source.pools.length > 0 && source.cluster !== undefined) throw new UsageError('give --pools or a cluster (--cluster, --kubeconfig, --context), not both');
  let objects: { object: KubeObject; source: string }[];
  if (source.cluster !== undefined) objects = await listCluster(source.cluster, source.configMapName);
  else if (source.pools.length > 0) objects = await readManifestPaths(source.pools);
  else return undefined;
  const sourceOf = new Map(objects.map(({ object, source }) => [object, source]));
  const { state, refused } = ClusterState.of(objects.map(({ object }) => object));
  const warnings = refused.map(({ object, reason }) => {
    const name = (object.metadata as { name?: unknown } | undefined)?.name;
    return `${sourceOf.get(object)}: ${object.kind} ${typeof name === 'string' ? quoteGoString(name) : '(no name)'} is left out of the cluster state: ${reason}`;
  });
  return { state, warnings };
}

/** The state listed once from the cluster kubectl would use with these flags, each object named by its context. */
async function listCluster(flags: ClusterFlags, configMapName: string | undefined): Promise<{ object: KubeObject; source: string }[]> {
  if (flags.kubeconfig !== undefined && !existsSync(flags.kubeconfig))
    throw new UsageError(`${flags.kubeconfig}: cannot be read as a kubeconfig: no such file`);
  // One after the other: both load client-node, which jest's ESM loader cannot link twice at once.
  const { loadKubeConfig } = await import('../cluster/kubeconfig.js');
  const { ClusterListError, listClusterState } = await import('../cluster/list-state.js');
  let loaded: ReturnType<typeof loadKubeConfig>;
  try {
    loaded = loadKubeConfig(flags.kubeconfig, undefined, { order: 'kubectl', ...(flags.context !== undefined ? { context: flags.context } : {}) });
  } catch (e) {
    // The loader's message names the flag and the file already (and holds no excerpt of it).
    throw new UsageError(String((e as Error)?.message ?? e).split('\n', 1)[0]);
  }
  if (loaded === undefined) throw new UsageError(NO_CLUSTER_FOUND);
  const source = `context ${JSON.stringify(loaded.config.getCurrentContext())}`;
  try {
    return (await listClusterState(loaded.config, configMapName)).map((object) => ({ object, source }));
  } catch (e) {
    if (e instanceof ClusterListError) throw new UsageError(e.message);
    throw e;
  }
}

/** The cluster a command's flags ask for: any of `--cluster`, `--kubeconfig`, `--context`; `undefined` for none. */
export function clusterFlags(args: { cluster?: boolean; kubeconfig?: string; context?: string }): ClusterFlags | undefined {
  if (args.cluster !== true && args.kubeconfig === undefined && args.context === undefined) return undefined;
  return { ...(args.kubeconfig !== undefined ? { kubeconfig: args.kubeconfig } : {}), ...(args.context !== undefined ? { context: args.context } : {}) };
}
