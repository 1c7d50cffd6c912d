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
import type { IPVersion } from './ip-ranges.js';
import { PAIR_POOL_ANNOTATION, annotation, iaasProvider, ipVersionOf, type SpiderIPPool } from './pool.js';
import { BAD_PATTERN, compileGoPattern, OUT_OF_STEPS } from '../go/filepath-match.js';
import { charge, encodedNames, STEPS_PER_LIST, STEPS_PER_NAME, STEPS_PER_PAIR, STEPS_PER_REMEMBERED_NAME, type StepBudget } from './candidate-budget.js';
import { ByteBoundedMemo, stringBytes } from './candidate-memo.js';
import { hasWildcard } from './candidate-wildcard.js';

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
 * others kept as written; a pattern Go refuses against any pool refuses the list. Matching
 * takes its steps from `budget`: `'over budget'` once it has none left.
 */
export function expand(names: readonly string[], version: IPVersion, catalog: PoolCatalog, budget: StepBudget): Expansion | 'over budget' {
  if (!names.some(hasWildcard)) return { ok: true, names: [...names], unmatched: [] };
  const pools = catalog.ofVersion(version);
  const out: string[] = [];
  const unmatched: string[] = [];
  for (const name of names) {
    if (!hasWildcard(name)) {
      out.push(name);
      continue;
    }
    const matched = matchAll(name, pools, budget);
    if (matched === 'over budget') return matched;
    if (matched === BAD_PATTERN) return { ok: false, pattern: name };
    if (matched.length === 0) unmatched.push(name);
    for (const poolName of matched) out.push(poolName); // not push(...): a spread of 100 000 names overflows the stack
  }
  return { ok: true, names: out, unmatched };
}

/** The names of `pools` that `pattern` matches, `BAD_PATTERN` when Go refuses it against any of them, or `'over budget'`. */
function matchAll(pattern: string, pools: readonly PoolEntry[], budget: StepBudget): readonly string[] | typeof BAD_PATTERN | 'over budget' {
  const compiled = compileGoPattern(pattern);
  const { bytes, offsets } = encodedNames(pools);
  const result: string[] = [];
  for (let i = 0; i < pools.length; i++) {
    const match = compiled.matchWithin(bytes, offsets[i]!, offsets[i + 1]!, budget);
    if (match === OUT_OF_STEPS) {
      budget.exceeded = true;
      return 'over budget';
    }
    if (match === BAD_PATTERN) return BAD_PATTERN;
    if (match) result.push(pools[i]!.name);
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

/** The names a resolved list holds, each read again when it is warned about. */
function namesIn(resolved: Resolved): readonly string[][] {
  if (!resolved.ok) return [];
  const { grouped } = resolved;
  return [resolved.unmatched, grouped.missing, grouped.otherVersion, ...grouped.byCategory.values()];
}

/** Lists resolved before, with the names they hold, while their pools stay the same. */
const remembered = new ByteBoundedMemo<{ resolved: Resolved; names: number }>();

/** Longest key remembered, in UTF-16 units: templates name a few pools; a longer list is resolved each time, within the budget. */
const MAX_KEY_CHARS = 4096;

/** A number per pool list, for the memo's keys: a list is replaced whenever a pool changes. */
const listIds = new WeakMap<readonly PoolEntry[], number>();
let nextListId = 0;

/** The memo key of `names` against `pools`, or undefined when the list is not remembered: no wildcard (cheaper to group again than to key) or too long. */
function memoKey(names: readonly string[], pools: readonly PoolEntry[], enableIPv6: boolean): string | undefined {
  if (!names.some(hasWildcard)) return undefined;
  let chars = 0;
  for (const name of names) if ((chars += name.length + 3) > MAX_KEY_CHARS) return undefined;
  let id = listIds.get(pools);
  if (id === undefined) listIds.set(pools, (id = nextListId++));
  return `${id}:${enableIPv6 ? 1 : 0}:${JSON.stringify(names)}`;
}

/**
 * The fixed work of resolving `names` against `pools`, in steps, charged before any of it
 * is done: the list, each name written without a wildcard (grouped), each pool a wildcard
 * is tried on. Matching takes its steps as it goes (go/filepath-match.ts); the names
 * wildcards matched are charged before they are grouped.
 */
export function resolveSteps(names: readonly string[], pools: readonly PoolEntry[]): number {
  const wildcards = names.filter(hasWildcard).length;
  return STEPS_PER_LIST + (names.length - wildcards) * STEPS_PER_NAME + wildcards * pools.length * STEPS_PER_PAIR;
}

/** Remembers `resolved` under `key`, weighed by the names it holds (memo.ts). */
function remember(key: string, resolved: Resolved): void {
  const lists = namesIn(resolved);
  const count = lists.reduce((sum, list) => sum + list.length, 0);
  const bytes = lists.reduce((sum, list) => list.reduce((listSum, name) => listSum + stringBytes(name), sum + 16 + 8 * list.length), 0);
  remembered.set(key, { resolved, names: count }, bytes);
}

/**
 * {@link expand} then {@link group}, within `budget` (budget.ts): `'over budget'` when the
 * fixed work does not fit (nothing done) or matching runs out of steps. Wildcard lists are
 * remembered while the pools stay the same (the same templates are reviewed on every apply
 * and rollout), in a memo bounded in bytes (memo.ts); reading one again costs a few steps
 * per name it holds. Callers must not change the result.
 */
export function resolve(names: readonly string[], version: IPVersion, catalog: PoolCatalog, enableIPv6: boolean, budget: StepBudget): Resolved | 'over budget' {
  const pools = catalog.ofVersion(version);
  const key = memoKey(names, pools, enableIPv6);
  const known = key === undefined ? undefined : remembered.get(key);
  if (known !== undefined) return charge(budget, STEPS_PER_LIST + known.names * STEPS_PER_REMEMBERED_NAME) ? known.resolved : 'over budget';
  if (!charge(budget, resolveSteps(names, pools))) return 'over budget';
  const expansion = expand(names, version, catalog, budget);
  if (expansion === 'over budget') return expansion;
  const literals = names.length - names.filter(hasWildcard).length;
  if (expansion.ok && !charge(budget, (expansion.names.length - literals) * STEPS_PER_NAME)) return 'over budget';
  const resolved: Resolved = expansion.ok
    ? { ok: true, unmatched: expansion.unmatched, grouped: group(expansion.names, version, catalog, enableIPv6) }
    : expansion;
  if (key !== undefined) remember(key, resolved);
  return resolved;
}

/** Bytes the memo of resolved lists holds now (for tests and the bound's check). */
export const rememberedBytes = (): number => remembered.bytes;

export function mixOf(grouped: Grouped): Mix | undefined {
  const present = CATEGORY_RANK.filter((c) => grouped.byCategory.has(c));
  if (present.length < 2) return undefined;
  const [top, ...rest] = present;
  return {
    kept: { category: top!, names: grouped.byCategory.get(top!)! },
    ignored: rest.map((category) => ({ category, names: grouped.byCategory.get(category)! })),
  };
}
