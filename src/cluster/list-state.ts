/**
 * The cluster state `review --kubeconfig` and `audit --kubeconfig` judge against, listed
 * once: every SpiderIPPool (paginated and streamed, each slimmed as it is parsed, as the
 * server's cache lists them: list-pages.ts, pool-index.ts), every Namespace, and
 * Spiderpool's ConfigMap wherever it is (`metadata.name` field selector). Each list (each
 * page of the pools') is bounded in time. Loads `@kubernetes/client-node`, so only
 * commands given a cluster import this module.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../kubernetes/build.js';
import { isKubeObject } from '../kubernetes/manifests.js';
import { connectionName, kubectlErrorLine } from './api-error.js';
import { withDeadline } from './deadline.js';
import { listPages } from './list-pages.js';
import { POOLS_PATH, SPIDERIPPOOL_RESOURCE } from './pool-cache.js';
import { slimPool } from '../store/pool-index.js';

/** How long each list may take, in milliseconds. */
const LIST_TIMEOUT_MS = 30_000;

/** A list that failed: what was listed and why, in one line. */
export class ClusterListError extends Error {
  override name = 'ClusterListError';
}

/** Every SpiderIPPool, slimmed as each is parsed; one that is not shaped like one is kept whole, for the state to refuse by name. */
async function listPools(config: KubeConfig, timeoutMs: number): Promise<RawList> {
  const items: unknown[] = [];
  await listPages(config, { path: POOLS_PATH, pageTimeoutMs: timeoutMs, onItem: (item) => items.push(slimPool(item) ?? item) });
  return { items };
}

interface RawList {
  items?: unknown;
}

/** `items` with `apiVersion` and `kind` set (a list's items often omit them). */
function itemsOf(list: RawList, apiVersion: string, kind: string): KubeObject[] {
  const items = Array.isArray(list?.items) ? (list.items as unknown[]) : [];
  return items
    .map((item) => (item !== null && typeof item === 'object' ? { apiVersion, kind, ...(item as Record<string, unknown>) } : item))
    .filter(isKubeObject)
    .map((item) => ({ ...item, apiVersion, kind }));
}

/** What a list asked for, and what to check when the API server does not know it. */
interface Listed {
  what: string;
  resource: string;
  notFoundHint: string;
}

const POOLS: Listed = {
  what: 'SpiderIPPools',
  resource: `${SPIDERIPPOOL_RESOURCE.plural}.${SPIDERIPPOOL_RESOURCE.group}/${SPIDERIPPOOL_RESOURCE.version}`,
  notFoundHint: `is Spiderpool installed? check kubectl get crd ${SPIDERIPPOOL_RESOURCE.plural}.${SPIDERIPPOOL_RESOURCE.group}`,
};
const core = (what: string, resource: string): Listed => ({ what, resource, notFoundHint: 'check that the server is a Kubernetes API server' });

/** `call`, its failure as one line in kubectl's words naming what was listed, the context and the server. */
async function listing<T>(listed: Listed, call: () => Promise<T>, timeout: { ms: number; config: KubeConfig }): Promise<T> {
  try {
    return await call();
  } catch (e) {
    const name = (e as { name?: unknown } | null)?.name;
    const where = connectionName(timeout.config);
    // A page's timeout (list-pages.ts) or a call's deadline (deadline.ts) aborted it.
    if (name === 'AbortError' || name === 'TimeoutError' || name === 'ApiTimeoutError') {
      throw new ClusterListError(`cannot list ${listed.what}: no answer within ${timeout.ms / 1000}s (${where}); check that the API server is reachable`);
    }
    const server = timeout.config.getCurrentCluster()?.server ?? '';
    throw new ClusterListError(`${kubectlErrorLine(e, server, listed.resource, listed.notFoundHint)} (listing ${listed.what}; ${where})`);
  }
}

/**
 * Lists the state from the cluster `config` connects to.
 *
 * @param configMapName Spiderpool's ConfigMap name, listed with the Namespaces; absent, only
 *   the SpiderIPPools are listed (`audit`: its user needs no other permission).
 * @param timeoutMs how long each list (each page of the pools') may take (default 30 s).
 * @throws ClusterListError when a list fails or times out.
 */
export async function listClusterState(config: KubeConfig, configMapName?: string, timeoutMs = LIST_TIMEOUT_MS): Promise<KubeObject[]> {
  const coreApi = config.makeApiClient(CoreV1Api);
  const timeout = { ms: timeoutMs, config };
  const none: RawList = { items: [] };
  const [pools, namespaces, configMaps] = await Promise.all([
    listing(POOLS, () => listPools(config, timeoutMs), timeout),
    // Typed lists come back as client-node's models; serialize them back to the JSON the API sent.
    configMapName === undefined
      ? none
      : listing(
          core('Namespaces', 'namespaces'),
          async () => JSON.parse(JSON.stringify(await withDeadline((options) => coreApi.listNamespace({}, options), timeoutMs))) as RawList,
          timeout,
        ),
    configMapName === undefined
      ? none
      : listing(
          core(`ConfigMaps named ${JSON.stringify(configMapName)}`, 'configmaps'),
          async () =>
            JSON.parse(
              JSON.stringify(
                await withDeadline((options) => coreApi.listConfigMapForAllNamespaces({ fieldSelector: `metadata.name=${configMapName}` }, options), timeoutMs),
              ),
            ) as RawList,
          timeout,
        ),
  ]);
  const poolApiVersion = `${SPIDERIPPOOL_RESOURCE.group}/${SPIDERIPPOOL_RESOURCE.version}`;
  return [...itemsOf(pools, poolApiVersion, 'SpiderIPPool'), ...itemsOf(namespaces, 'v1', 'Namespace'), ...itemsOf(configMaps, 'v1', 'ConfigMap')];
}
