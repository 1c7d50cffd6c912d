/**
 * The in-memory SpiderIPPool index the pair rules read (a {@link PoolDirectory}): fed by
 * the informer in pool-cache.ts, read by reviews. Pure data, no I/O, so the request path
 * never waits on the API server.
 */
import type { PoolEntry } from '../candidates/categories.js';
import type { IPVersion } from '../ip/ranges.js';
import type { PoolDirectory } from '../rules/pool-pair.js';
import { PAIR_POOL_ANNOTATION, SpiderIPPoolSchema, annotation, ipVersionOf, type SpiderIPPool } from '../rules/pool.js';

/** Why cross-pool checks are skipped before the first complete list. */
export const NOT_SYNCED_REASON = 'the SpiderIPPool cache has not synced with the API server yet';

/** SpiderIPPools by name, parsed once when stored; see {@link PoolDirectory} for the reads. */
export class PoolIndex implements PoolDirectory {
  private readonly pools = new Map<string, SpiderIPPool>();
  private synced = false;
  /** {@link ofVersion}'s lists, built on first read after a change (reviews read far more often than pools change). */
  private byVersion: Map<IPVersion, PoolEntry[]> | undefined;

  /**
   * Stores or replaces a pool as listed or watched.
   *
   * @returns false when the object is not shaped like a SpiderIPPool (not stored; any
   *   older copy under its name is dropped, so it is never judged on stale fields).
   */
  upsert(object: unknown): boolean {
    this.byVersion = undefined;
    const parsed = SpiderIPPoolSchema.safeParse(object);
    if (!parsed.success || parsed.data.metadata.name === undefined) {
      this.pools.delete(nameOf(object));
      return false;
    }
    this.pools.set(parsed.data.metadata.name, parsed.data);
    return true;
  }

  /**
   * Replaces everything with a complete list (the informer's list, before it watches) and
   * marks the index synced.
   *
   * @returns the names of objects that were not shaped like a SpiderIPPool (not stored).
   */
  replaceAll(objects: readonly unknown[]): string[] {
    this.pools.clear();
    this.byVersion = undefined;
    const refused = objects.filter((object) => !this.upsert(object)).map(nameOf);
    this.synced = true;
    return refused;
  }

  /** Drops the pool of that name (the informer saw it deleted); no-op when it is not stored. */
  remove(name: string): void {
    this.byVersion = undefined;
    this.pools.delete(name);
  }

  /** True once a complete list has been stored; like client-go's `HasSynced`, it stays true across re-lists. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** How many pools are stored. */
  get size(): number {
    return this.pools.size;
  }

  unavailable(): string | undefined {
    return this.synced ? undefined : NOT_SYNCED_REASON;
  }

  get(name: string): SpiderIPPool | undefined {
    return this.pools.get(name);
  }

  ofVersion(version: IPVersion): readonly PoolEntry[] {
    if (this.byVersion === undefined) {
      const lists = new Map<IPVersion, PoolEntry[]>([[4, []], [6, []]]);
      for (const [name, pool] of this.pools) {
        const v = ipVersionOf(pool);
        if (v !== undefined) lists.get(v)!.push({ name, pool });
      }
      this.byVersion = lists;
    }
    return this.byVersion.get(version)!;
  }

  /** A scan of every stored pool: pools number in the thousands at most, and this runs in memory. */
  pairedWith(name: string): SpiderIPPool[] {
    return [...this.pools.values()].filter((pool) => annotation(pool, PAIR_POOL_ANNOTATION) === name);
  }
}

/** An object's `metadata.name` when it is a string, else `""`. */
export function nameOf(object: unknown): string {
  const name = (object as { metadata?: { name?: unknown } } | null | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : '';
}
