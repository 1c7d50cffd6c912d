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
import { PAIR_POOL_ANNOTATION, annotation, iaasProvider, ipVersionOf, type SpiderIPPool } from '../spiderpool/pool.js';
import { BAD_PATTERN, compileGoPattern } from '../go/filepath-match.js';
import { hasWildcard } from './wildcard.js';

export type Category = 'paired' | 'iaas' | 'traditional';

/** Highest first. */
export const CATEGORY_RANK: readonly Category[] = ['paired', 'iaas', 'traditional'];

/** A stored pool as the expansion reads it. */
export interface PoolEntry {
  name: string;
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

/** A stored pool's version and categories, worked out once per stored object (reviews read them again and again). */
const classified = new WeakMap<SpiderIPPool, { version: IPVersion | undefined; on: Category; off: Category }>();

function classify(pool: SpiderIPPool): { version: IPVersion | undefined; on: Category; off: Category } {
  let known = classified.get(pool);
  if (known === undefined) {
    const version = ipVersionOf(pool);
    const pair = annotation(pool, PAIR_POOL_ANNOTATION);
    const off: Category = iaasProvider(pool) === undefined ? 'traditional' : 'iaas';
    const on: Category = off === 'iaas' && version === 4 && pair !== undefined && pair !== '' ? 'paired' : off;
    known = { version, on, off };
    classified.set(pool, known);
  }
  return known;
}

export function categoryOf(pool: SpiderIPPool, enableIPv6: boolean): Category {
  const { on, off } = classify(pool);
  return enableIPv6 ? on : off;
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
    const matched = matchAll(name, pools);
    if (matched === BAD_PATTERN) return { ok: false, pattern: name };
    if (matched.length === 0) unmatched.push(name);
    out.push(...matched);
  }
  return { ok: true, names: out, unmatched };
}

/** The names of `pools` that `pattern` matches, or `BAD_PATTERN` when Go refuses it against any of them. */
function matchAll(pattern: string, pools: readonly PoolEntry[]): readonly string[] | typeof BAD_PATTERN {
  const compiled = compileGoPattern(pattern);
  const result: string[] = [];
  for (const entry of pools) {
    const match = compiled.match(entry.name);
    if (match === BAD_PATTERN) return BAD_PATTERN;
    if (match) result.push(entry.name);
  }
  return result;
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
    const poolVersion = classify(pool).version;
    if (poolVersion !== undefined && poolVersion !== version) {
      otherVersion.push(name);
      continue;
    }
    const category = categoryOf(pool, enableIPv6);
    const names = byCategory.get(category);
    if (names === undefined) byCategory.set(category, [name]);
    else names.push(name);
  }
  return { byCategory, missing, otherVersion };
}

/** The category kept and the ones ignored, when the candidates mix categories. */
export interface Mix {
  kept: { category: Category; names: string[] };
  ignored: { category: Category; names: string[] }[];
}

/** A candidate list resolved: expanded and grouped, or the pattern Go refuses. */
export type Resolved = { ok: true; unmatched: string[]; grouped: Grouped } | { ok: false; pattern: string };

/**
 * How many pattern-against-pool matches one review may still make (Spiderpool makes them
 * all at Pod start; the webhook shares its event loop with the refusing webhooks, so a
 * hostile template with 50 000 patterns must not hold it for seconds).
 */
export interface MatchBudget {
  matches: number;
}

/** Per review: ~10 ms of matching; real templates name a few patterns against a few thousand pools. */
export const MATCHES_PER_REVIEW = 200_000;

/** Lists remembered per pool list; a pool list is replaced whenever a pool changes, and its memo with it. */
const MAX_REMEMBERED_LISTS = 1024;
const remembered = new WeakMap<readonly PoolEntry[], Map<string, Resolved>>();

/**
 * {@link expand} then {@link group}, remembered while the pools stay the same: the same
 * templates are reviewed again and again (every apply, every rollout). At most
 * {@link MAX_REMEMBERED_LISTS} lists per pool list, so hostile reviews with ever new lists
 * cannot grow memory. Callers must not change the result.
 */
export function resolve(names: readonly string[], version: IPVersion, catalog: PoolCatalog, enableIPv6: boolean, budget: MatchBudget): Resolved | 'over budget' {
  const pools = catalog.ofVersion(version);
  const key = `${enableIPv6}${JSON.stringify(names)}`;
  let memo = remembered.get(pools);
  const known = memo?.get(key);
  if (known !== undefined) return known;
  const cost = names.filter(hasWildcard).length * pools.length;
  if (cost > budget.matches) return 'over budget';
  budget.matches -= cost;
  const expansion = expand(names, version, catalog);
  const resolved: Resolved = expansion.ok
    ? { ok: true, unmatched: expansion.unmatched, grouped: group(expansion.names, version, catalog, enableIPv6) }
    : expansion;
  if (memo === undefined) remembered.set(pools, (memo = new Map()));
  if (memo.size >= MAX_REMEMBERED_LISTS) memo.clear();
  memo.set(key, resolved);
  return resolved;
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
