/**
 * The cluster state `review --kubeconfig` and `audit --kubeconfig` judge against, listed
 * once: every SpiderIPPool, every Namespace, and Spiderpool's ConfigMap wherever it is
 * (`metadata.name` field selector). Each list is bounded in time. Loads
 * `@kubernetes/client-node`, so only commands given a cluster import this module.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../admission/build.js';
import { isKubeObject } from '../manifest/read.js';
import { abortAfter, SPIDERIPPOOL_RESOURCE } from './pool-cache.js';

/** How long each list may take, in milliseconds. */
const LIST_TIMEOUT_MS = 30_000;

/** A list that failed: what was listed and why, in one line. */
export class ClusterListError extends Error {
  override name = 'ClusterListError';
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

async function listing<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    const err = e as { message?: unknown; code?: unknown; statusCode?: unknown };
    const status = typeof err?.code === 'number' ? err.code : typeof err?.statusCode === 'number' ? err.statusCode : undefined;
    const message = typeof err?.message === 'string' ? err.message.split('\n', 1)[0] : String(e);
    throw new ClusterListError(`cannot list ${what} from the cluster${status === undefined ? '' : ` (HTTP ${status})`}: ${message}`);
  }
}

/**
 * Lists the state from the cluster `config` connects to.
 *
 * @param configMapName Spiderpool's ConfigMap name, listed with the Namespaces; absent, only
 *   the SpiderIPPools are listed (`audit`: its user needs no other permission).
 * @throws ClusterListError when a list fails or times out.
 */
export async function listClusterState(config: KubeConfig, configMapName?: string): Promise<KubeObject[]> {
  const custom = config.makeApiClient(CustomObjectsApi);
  const core = config.makeApiClient(CoreV1Api);
  const options = abortAfter(LIST_TIMEOUT_MS);
  const none: RawList = { items: [] };
  const [pools, namespaces, configMaps] = await Promise.all([
    listing('SpiderIPPools', () => custom.listClusterCustomObject({ ...SPIDERIPPOOL_RESOURCE }, options) as Promise<RawList>),
    // Typed lists come back as client-node's models; serialize them back to the JSON the API sent.
    configMapName === undefined ? none : listing('Namespaces', async () => JSON.parse(JSON.stringify(await core.listNamespace({}, options))) as RawList),
    configMapName === undefined
      ? none
      : listing(`ConfigMaps named ${JSON.stringify(configMapName)}`, async () =>
          JSON.parse(JSON.stringify(await core.listConfigMapForAllNamespaces({ fieldSelector: `metadata.name=${configMapName}` }, options))) as RawList,
        ),
  ]);
  const poolApiVersion = `${SPIDERIPPOOL_RESOURCE.group}/${SPIDERIPPOOL_RESOURCE.version}`;
  return [...itemsOf(pools, poolApiVersion, 'SpiderIPPool'), ...itemsOf(namespaces, 'v1', 'Namespace'), ...itemsOf(configMaps, 'v1', 'ConfigMap')];
}
