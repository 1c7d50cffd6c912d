/**
 * The in-memory SpiderIPPool index the pair rules read (a {@link PoolDirectory}): fed by
 * the informer in pool-cache.ts (or by manifests and cluster lists, state.ts), read by
 * reviews. Pure data, no I/O, so the request path never waits on the API server. It keeps
 * each pool slimmed ({@link slimPool}: what the rules read, ~1 KB whatever its allocations),
 * never the object as listed. A reverse index from pair-pool target to the pools naming it
 * answers {@link PoolIndex.pairedWith} without a scan, and tells a listener which pools a
 * change can affect (pool-violations.ts); a change the readers cannot see (Spiderpool's
 * allocation writes to the status) tells no one.
 */
import { compiled } from '../kubernetes/fast-schema.js';
import { inSlices, type Slicing } from './slices.js';
import { nameOf } from '../kubernetes/metadata.js';
import type { PoolEntry } from '../spiderpool/candidate-categories.js';
import type { IPVersion } from '../spiderpool/ip-ranges.js';
import type { PoolDirectory } from '../rules/pool-pair.js';
import { PAIR_POOL_ANNOTATION, SpiderIPPoolSchema, allocationStatus, annotation, iaasProvider, ipVersionOf, type SpiderIPPool } from '../spiderpool/pool.js';

/** Why cross-pool checks are skipped before the first complete list. */
export const NOT_SYNCED_REASON = 'the SpiderIPPool cache has not synced with the API server yet';

/**
 * Told after each change: the names of the pools whose judgement the change can alter
 * (the pool itself, the pools it named before and after, the pools naming it), or
 * `'all'` after a complete list.
 */
export type PoolChangeListener = (touched: ReadonlySet<string> | 'all') => void;

/**
 * A SpiderIPPool as the cache keeps it, the one statement of that shape: the output of
 * {@link SpiderIPPoolSchema} (the fields the rules read, their annotations only), with
 * `apiVersion`, `kind`, `metadata.resourceVersion`, `metadata.uid` (what a report names) and
 * `metadata.labels` (what a webhook's `objectSelector` reads of an old object) beside it, and the status reduced to what `allocations` reads
 * (`allocationStatus`). Judged, it decides as the object it came from.
 */
export type StoredPool = SpiderIPPool & {
  apiVersion?: string;
  kind?: string;
  metadata: SpiderIPPool['metadata'] & { labels?: Record<string, string>; resourceVersion?: string; uid?: string };
};

/** One copy of each `apiVersion` and `kind` (every listed pool brings its own: ~80 bytes a pool). */
const sharedStrings = new Map<string, string>();
const shared = (text: string): string => {
  const known = sharedStrings.get(text);
  if (known !== undefined) return known;
  if (sharedStrings.size < 16) sharedStrings.set(text, text); // bounded: a stray value is kept as it came
  return text;
};

/** The objects {@link slimPool} made, which it returns as they are. */
const slimmed = new WeakSet<object>();

const isStringMap = (value: unknown): value is Record<string, string> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');

/**
 * `object` as the cache keeps it ({@link StoredPool}), or `undefined` when it is not shaped
 * like a SpiderIPPool (a field the rules read has the wrong type) or has no name.
 */
export function slimPool(object: unknown): StoredPool | undefined {
  if (typeof object === 'object' && object !== null && slimmed.has(object)) return object as StoredPool;
  const parsed = compiled(SpiderIPPoolSchema).safeParse(object);
  if (!parsed.success || parsed.data.metadata.name === undefined) return undefined;
  const { apiVersion, kind, metadata } = object as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata: { labels?: unknown; resourceVersion?: unknown; uid?: unknown };
  };
  const status = allocationStatus(parsed.data);
  const pool: StoredPool = {
    ...(typeof apiVersion === 'string' ? { apiVersion: shared(apiVersion) } : {}),
    ...(typeof kind === 'string' ? { kind: shared(kind) } : {}),
    metadata: {
      ...parsed.data.metadata,
      ...(typeof metadata.resourceVersion === 'string' ? { resourceVersion: metadata.resourceVersion } : {}),
      ...(typeof metadata.uid === 'string' ? { uid: metadata.uid } : {}),
      ...(isStringMap(metadata.labels) ? { labels: metadata.labels } : {}),
    },
    ...(parsed.data.spec === undefined ? {} : { spec: parsed.data.spec }),
    ...(status === undefined ? {} : { status }),
  };
  slimmed.add(pool);
  return pool;
}

/** What the index's readers (pair, candidate and violation rules) read of a stored pool: its annotations and spec (never its status, labels or resourceVersion). */
const readerView = (pool: StoredPool): string => JSON.stringify([pool.metadata.annotations, pool.spec]);

/** SpiderIPPools by name, parsed once when stored; see {@link PoolDirectory} for the reads. */
export class PoolIndex implements PoolDirectory {
  private pools = new Map<string, StoredPool>();
  /**
   * pair-pool value → the name of the stored pool carrying it, or their Set when several do
   * (one pool names each target in a healthy cluster: a Set each would cost ~150 bytes a pool).
   */
  private namedBy = new Map<string, string | Set<string>>();
  private synced = false;
  /** {@link ofVersion}'s lists, built on first read after a change (reviews read far more often than pools change). */
  private byVersion: Map<IPVersion, PoolEntry[]> | undefined;
  private readonly listeners: PoolChangeListener[] = [];

  /** Calls `listener` after every later change. */
  onChange(listener: PoolChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Stores or replaces a pool as listed or watched (slimmed: {@link slimPool}). A change
   * that leaves what the readers read as it was (a status update: an allocation) only
   * updates the stored pool's metadata and status in place: no listener is told, no list
   * is rebuilt, nothing else keeps the older copy.
   *
   * @returns false when the object is not shaped like a SpiderIPPool (not stored; any
   *   older copy under its name is dropped, so it is never judged on stale fields).
   */
  upsert(object: unknown): boolean {
    const pool = slimPool(object);
    if (pool === undefined) {
      this.byVersion = undefined;
      this.remove(nameOf(object));
      return false;
    }
    const name = pool.metadata.name!;
    const before = this.pools.get(name);
    if (before !== undefined && readerView(before) === readerView(pool)) {
      // In place: the candidate lists and the rules' per-object caches (keyed by the stored
      // object) stay valid and hold no superseded copy, and the new object is garbage at once.
      before.metadata = pool.metadata;
      before.status = pool.status;
      return true;
    }
    // The candidate rules' lists (and what was worked out from them) stand when what they read is unchanged.
    if (before === undefined || candidateShape(before) !== candidateShape(pool)) this.byVersion = undefined;
    const touched = this.unlink(name);
    this.pools.set(name, pool);
    this.link(name, pool, touched);
    this.notify(touched);
    return true;
  }

  /**
   * Replaces everything with a complete list (the informer's list, before it watches) and
   * marks the index synced.
   *
   * @returns the names of objects that were not shaped like a SpiderIPPool (not stored).
   */
  replaceAll(objects: readonly unknown[]): string[] {
    const next = new PoolIndex();
    const refused: string[] = [];
    for (const object of objects) next.storeListed(object, refused);
    this.adopt(next);
    return refused;
  }

  /**
   * {@link replaceAll} built in time slices (`slicing`, between them other work runs), so
   * that a list of 50 000 pools never blocks the event loop: meanwhile readers see the
   * pools as they were, and the new list takes their place in one step at the end.
   *
   * @returns the names of objects that were not shaped like a SpiderIPPool (not stored).
   */
  async replaceAllInSlices(objects: readonly unknown[], slicing: Slicing): Promise<string[]> {
    const next = new PoolIndex();
    const refused: string[] = [];
    await inSlices(objects, (object) => next.storeListed(object, refused), slicing);
    this.adopt(next);
    return refused;
  }

  /**
   * Stores one object of a list into this fresh index: in order, as upserts (a malformed
   * object drops an earlier copy under its name, a later one stands), but with a few map
   * writes and no one told: the listeners hear 'all' when the list is adopted.
   */
  private storeListed(object: unknown, refused: string[]): void {
    const pool = slimPool(object);
    const key = pool?.metadata.name ?? nameOf(object);
    if (this.pools.has(key)) this.unlink(key); // only a name listed twice has links to undo
    if (pool === undefined) {
      refused.push(key);
      this.pools.delete(key);
      return;
    }
    this.pools.set(key, pool);
    this.link(key, pool);
  }

  /** Takes the pools and links of `listed` (a complete list) in place of this index's, and marks it synced. */
  private adopt(listed: PoolIndex): void {
    this.pools = listed.pools;
    this.namedBy = listed.namedBy;
    this.byVersion = undefined;
    this.synced = true;
    for (const listener of this.listeners) listener('all');
  }

  /** Drops the pool of that name (the informer saw it deleted); no-op when it is not stored. */
  remove(name: string): void {
    if (!this.pools.has(name)) return;
    this.byVersion = undefined;
    const touched = this.unlink(name);
    this.pools.delete(name);
    this.notify(touched);
  }

  /** Takes `name` out of the reverse index; the pools a change of it touches so far. */
  private unlink(name: string): Set<string> {
    const touched = new Set([name, ...this.namers(name)]);
    const before = this.pools.get(name);
    const target = before === undefined ? undefined : annotation(before, PAIR_POOL_ANNOTATION);
    if (target !== undefined) {
      touched.add(target);
      const names = this.namedBy.get(target);
      if (names === name) this.namedBy.delete(target);
      else if (typeof names === 'object') {
        names.delete(name);
        if (names.size === 1) this.namedBy.set(target, names.values().next().value!);
      }
    }
    return touched;
  }

  /** Puts `name` into the reverse index; adds the pool it names to `touched`, when given. */
  private link(name: string, pool: SpiderIPPool, touched?: Set<string>): void {
    const target = annotation(pool, PAIR_POOL_ANNOTATION);
    if (target === undefined) return;
    touched?.add(target);
    const names = this.namedBy.get(target);
    if (names === undefined || names === name) this.namedBy.set(target, name);
    else if (typeof names === 'string') this.namedBy.set(target, new Set([names, name]));
    else names.add(name);
  }

  /** The names of the stored pools naming `target` as their pair pool. */
  private namers(target: string): Iterable<string> {
    const names = this.namedBy.get(target);
    return names === undefined ? [] : typeof names === 'string' ? [names] : names;
  }

  private notify(touched: ReadonlySet<string>): void {
    if (!this.synced) return; // judgements start with the complete list
    for (const listener of this.listeners) listener(touched);
  }

  /** True once a complete list has been stored; like client-go's `HasSynced`, it stays true across re-lists. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** How many pools are stored. */
  get size(): number {
    return this.pools.size;
  }

  /** Every stored pool by name. */
  entries(): IterableIterator<[string, SpiderIPPool]> {
    return this.pools.entries();
  }

  unavailable(): string | undefined {
    return this.synced ? undefined : NOT_SYNCED_REASON;
  }

  get(name: string): StoredPool | undefined {
    return this.pools.get(name);
  }

  ofVersion(version: IPVersion): readonly PoolEntry[] {
    this.byVersion ??= byIpVersion(this.pools);
    return this.byVersion.get(version)!;
  }

  /** From the reverse index: as many reads as there are such pools. */
  pairedWith(name: string): SpiderIPPool[] {
    return [...this.namers(name)].map((other) => this.pools.get(other)!);
  }
}

/** `pools` by IP version (`ipVersionOf`; pools of neither are left out), in their order: `PoolCatalog.ofVersion`'s lists. */
export function byIpVersion(pools: Iterable<[string, SpiderIPPool]>): Map<IPVersion, PoolEntry[]> {
  const lists = new Map<IPVersion, PoolEntry[]>([
    [4, []],
    [6, []],
  ]);
  for (const [name, pool] of pools) {
    const v = ipVersionOf(pool);
    if (v !== undefined) lists.get(v)!.push({ name, pool });
  }
  return lists;
}

/** What {@link PoolIndex.ofVersion}'s readers (the candidate-pool rules) read of a pool. */
function candidateShape(pool: SpiderIPPool): string {
  return JSON.stringify([ipVersionOf(pool), iaasProvider(pool) !== undefined, annotation(pool, PAIR_POOL_ANNOTATION) ?? null, pool.spec?.default === true]);
}
