/**
 * Cluster default pools (`spec.default: true`) are the last source of candidates: every Pod
 * NIC that no annotation, Namespace or CNI config gives pools to takes all default pools of
 * each IP version (`getClusterDefaultPools`, pkg/ipam/pool_selections.go). Mixed categories
 * there are resolved like any candidate set (candidates/categories.ts): the lower categories
 * are ignored. Warned when a pool written with `spec.default: true` makes or keeps that mix.
 */
import { categoryOf, group, mixOf, type DualStack, type PoolCatalog } from '../spiderpool/candidate-categories.js';
import { fit, mixText } from '../spiderpool/candidate-warnings.js';
import { ipVersionOf, type SpiderIPPool } from '../spiderpool/pool.js';

/** `catalog` with `pool` stored under `name` (the object under review, which the cache may not hold yet). */
function withPool(catalog: PoolCatalog, name: string, pool: SpiderIPPool): PoolCatalog {
  return { unavailable: () => catalog.unavailable(), get: (n) => (n === name ? pool : catalog.get(n)), ofVersion: (v) => catalog.ofVersion(v) };
}

/**
 * The warning for SpiderIPPool `name` as it would be stored, when it is a default pool whose
 * category differs from other default pools of its IP version; `[]` otherwise.
 */
export function defaultPoolWarnings(pool: SpiderIPPool, name: string, pools: PoolCatalog, dualStack: DualStack): string[] {
  if (pool.spec?.default !== true) return [];
  const version = ipVersionOf(pool);
  if (version === undefined) return [];
  const unavailable = pools.unavailable();
  if (unavailable !== undefined) return [`spiderpool: spec.default: the categories of the other cluster default pools were not compared: ${unavailable}`];
  const others = pools
    .ofVersion(version)
    .filter((entry) => entry.name !== name && entry.pool.spec?.default === true)
    .map((entry) => entry.name);
  const overlay = withPool(pools, name, pool);
  const enableIPv6 = dualStack.known ? dualStack.enableIPv6 : false;
  const own = categoryOf(pool, enableIPv6);
  if (others.every((other) => categoryOf(overlay.get(other)!, enableIPv6) === own)) return [];
  const mix = mixOf(group([name, ...others], version, overlay, enableIPv6));
  if (mix === undefined) return [];
  const unknown = dualStack.known ? '' : ` (dual-stack not known: ${dualStack.reason})`;
  return [fit((m) => `spiderpool: spec.default: Pod NICs left to the cluster default IPv${version} pools: ${mixText(mix, m)}${unknown}`)];
}
