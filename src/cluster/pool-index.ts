/**
 * The in-memory SpiderIPPool index the pair rules read (a {@link PoolDirectory}): fed by
 * the informer in pool-cache.ts, read by reviews. Pure data, no I/O, so the request path
 * never waits on the API server.
 */
import type { PoolDirectory } from '../rules/pool-pair.js';
import { PAIR_POOL_ANNOTATION, SpiderIPPoolSchema, annotation, type SpiderIPPool } from '../rules/pool.js';

/** Why cross-pool checks are skipped before the first complete list. */
export const NOT_SYNCED_REASON = 'the SpiderIPPool cache has not synced with the API server yet';

export class PoolIndex implements PoolDirectory {
  private readonly pools = new Map<string, SpiderIPPool>();
  private synced = false;

  /**
   * Stores or replaces a pool as listed or watched.
   *
   * @returns false when the object is not shaped like a SpiderIPPool (not stored; any
   *   older copy under its name is dropped, so it is never judged on stale fields).
   */
  upsert(object: unknown): boolean {
    const parsed = SpiderIPPoolSchema.safeParse(object);
    const name = (object as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    if (!parsed.success || parsed.data.metadata.name === undefined) {
      if (typeof name === 'string') this.pools.delete(name);
      return false;
    }
    this.pools.set(parsed.data.metadata.name, parsed.data);
    return true;
  }

  remove(name: string): void {
    this.pools.delete(name);
  }

  /** Called once a complete list has been stored (client-go's `HasSynced`: it stays true across re-lists). */
  markSynced(): void {
    this.synced = true;
  }

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

  /** A scan of every stored pool: pools number in the thousands at most, and this runs in memory. */
  pairedWith(name: string): SpiderIPPool[] {
    return [...this.pools.values()].filter((pool) => annotation(pool, PAIR_POOL_ANNOTATION) === name);
  }
}
