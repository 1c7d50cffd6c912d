/**
 * Candidate-pool categories (design document, "候选池类别排他"): when one Pod NIC's candidate
 * pools of one IP version mix categories, Spiderpool keeps only the highest category present
 * and ignores the rest, never falling back to them:
 *
 * 1. paired IaaS primary, only when dual-stack is on (`enableIPv6: true` in conf.yml): an IaaS
 *    pool with `spec.ipVersion: 4` and a non-empty `ipam.spidernet.io/pair-pool`;
 * 2. IaaS: a pool with the `ipam.spidernet.io/iaas-provider` annotation (node and global pools
 *    alike; with IPv6 off a paired pool ranks here);
 * 3. traditional: every other pool.
 *
 * The category is decided on the configured set, after wildcard expansion against the pools
 * of that IP version (`ParseWildcardPoolNameList`) and before any per-node filtering.
 */
import type { IPVersion } from '../ip/ranges.js';
import { PAIR_POOL_ANNOTATION, annotation, iaasProvider, ipVersionOf, type SpiderIPPool } from '../rules/pool.js';
import { BAD_PATTERN, compileGoPattern, hasWildcard } from './go-match.js';

export type Category = 'paired' | 'iaas' | 'traditional';

/** Highest first. */
export const CATEGORY_RANK: readonly Category[] = ['paired', 'iaas', 'traditional'];

/** A stored pool as the expansion reads it: its name, also as UTF-8 bytes for Go's matching. */
export interface PoolEntry {
  name: string;
  bytes: Uint8Array;
  pool: SpiderIPPool;
}

/** What the candidate rules may know about the cluster's SpiderIPPools (memory only). */
export interface PoolCatalog {
  /** `undefined` when the pools are known (synced); else why not, for the warning. */
  unavailable(): string | undefined;
  get(name: string): SpiderIPPool | undefined;
  /** The pools of that IP version (`spec.ipVersion`, or the subnet's before it is set). */
  ofVersion(version: IPVersion): readonly PoolEntry[];
}

/** Whether Spiderpool runs dual-stack (`enableIPv6` in conf.yml), or why that is not known. */
export type DualStack = { known: true; enableIPv6: boolean } | { known: false; reason: string };

export function categoryOf(pool: SpiderIPPool, enableIPv6: boolean): Category {
  if (iaasProvider(pool) === undefined) return 'traditional';
  const pair = annotation(pool, PAIR_POOL_ANNOTATION);
  return enableIPv6 && ipVersionOf(pool) === 4 && pair !== undefined && pair !== '' ? 'paired' : 'iaas';
}

/** A candidate list after wildcard expansion: the names, and the patterns that matched no pool. */
export type Expansion =
  | { ok: true; names: string[]; unmatched: string[] }
  /** Go's `filepath.Match` refused `pattern`: Spiderpool refuses the whole annotation. */
  | { ok: false; pattern: string };

/**
 * Spiderpool's `ParseWildcardPoolNameList`: when any name of `names` is a wildcard, each
 * wildcard is replaced by the pools of `version` it matches (Go's `filepath.Match`), the
 * others kept as written; a pattern Go refuses against any pool refuses the list.
 */
export function expand(names: readonly string[], version: IPVersion, catalog: PoolCatalog): Expansion {
  if (!names.some(hasWildcard)) return { ok: true, names: [...names], unmatched: [] };
  const pools = catalog.ofVersion(version);
  const out: string[] = [];
  const unmatched: string[] = [];
  for (const name of names) {
    if (!hasWildcard(name)) {
      out.push(name);
      continue;
    }
    const pattern = compileGoPattern(name);
    const before = out.length;
    for (const entry of pools) {
      const result = pattern.match(entry.name, entry.bytes);
      if (result === BAD_PATTERN) return { ok: false, pattern: name };
      if (result) out.push(entry.name);
    }
    if (out.length === before) unmatched.push(name);
  }
  return { ok: true, names: out, unmatched };
}

/**
 * The existing candidates of `version` grouped by category (each name once, in candidate
 * order), the names no pool has, and the pools of the other version.
 */
export interface Grouped {
  byCategory: Map<Category, string[]>;
  missing: string[];
  /** Named for this version but of the other one. */
  otherVersion: string[];
}

export function group(names: readonly string[], version: IPVersion, catalog: PoolCatalog, enableIPv6: boolean): Grouped {
  const byCategory = new Map<Category, string[]>();
  const missing: string[] = [];
  const otherVersion: string[] = [];
  for (const name of new Set(names)) {
    const pool = catalog.get(name);
    if (pool === undefined) {
      missing.push(name);
      continue;
    }
    const poolVersion = ipVersionOf(pool);
    if (poolVersion !== undefined && poolVersion !== version) {
      otherVersion.push(name);
      continue;
    }
    const category = categoryOf(pool, enableIPv6);
    byCategory.set(category, [...(byCategory.get(category) ?? []), name]);
  }
  return { byCategory, missing, otherVersion };
}

/** The category kept and the ones ignored, when the candidates mix categories. */
export interface Mix {
  kept: { category: Category; names: string[] };
  ignored: { category: Category; names: string[] }[];
}

export function mixOf(grouped: Grouped): Mix | undefined {
  const present = CATEGORY_RANK.filter((c) => grouped.byCategory.has(c));
  if (present.length < 2) return undefined;
  const [top, ...rest] = present;
  return {
    kept: { category: top!, names: grouped.byCategory.get(top!)! },
    ignored: rest.map((category) => ({ category, names: grouped.byCategory.get(category)! })),
  };
}
