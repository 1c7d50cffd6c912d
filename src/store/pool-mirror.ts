/**
 * A copy of what the candidate-pool rules read of the SpiderIPPools, for a thread that
 * reviews without the pool cache (the warn-only reviews' worker, docs/adr/0001-warn-only-worker-thread.md):
 * per pool its name, IP version and the two annotations `classify` reads
 * (src/spiderpool/candidate-categories.ts), ~100 bytes, never the object. The main thread turns the
 * {@link PoolIndex}'s changes into small messages ({@link mirrorMessages}); the worker
 * applies them to a {@link PoolMirror}, a {@link PoolCatalog} like the index. Pure data, no I/O.
 */
import { z } from 'zod';
import type { DualStack, PoolCatalog, PoolEntry } from '../spiderpool/candidate-categories.js';
import type { IPVersion } from '../spiderpool/ip-ranges.js';
import { byIpVersion } from './pool-index.js';
import { IAAS_PROVIDER_ANNOTATION, PAIR_POOL_ANNOTATION, annotation, ipVersionOf, type SpiderIPPool } from '../spiderpool/pool.js';

/** One pool as mirrored: the fields the candidate rules read, nothing else. */
const MirroredPoolSchema = z.object({
  name: z.string(),
  /** `ipVersionOf`: absent when neither `spec.ipVersion` nor `spec.subnet` tells. */
  version: z.union([z.literal(4), z.literal(6)]).optional(),
  iaasProvider: z.string().optional(),
  pairPool: z.string().optional(),
});
type MirroredPool = z.infer<typeof MirroredPoolSchema>;

const DualStackSchema = z.union([z.object({ known: z.literal(true), enableIPv6: z.boolean() }), z.object({ known: z.literal(false), reason: z.string() })]);

/** A change of the mirrored state, as posted to the worker. */
export const MirrorMessageSchema = z.discriminatedUnion('type', [
  /** Every pool at once (start, a complete list); `unavailable` as `PoolCatalog.unavailable()`. */
  z.object({ type: z.literal('reset'), pools: z.array(MirroredPoolSchema), unavailable: z.string().optional() }),
  z.object({ type: z.literal('upsert'), pool: MirroredPoolSchema }),
  z.object({ type: z.literal('delete'), name: z.string() }),
  z.object({ type: z.literal('dualStack'), dualStack: DualStackSchema }),
]);
export type MirrorMessage = z.infer<typeof MirrorMessageSchema>;

/** What the mirror is fed from: a {@link PoolIndex} (or a directory that never changes). */
export interface MirrorSource {
  unavailable(): string | undefined;
  get(name: string): SpiderIPPool | undefined;
  entries(): Iterable<[string, SpiderIPPool]>;
}

/** `pool` reduced to what the candidate rules read. */
function mirroredPool(name: string, pool: SpiderIPPool): MirroredPool {
  const version = ipVersionOf(pool);
  const iaasProvider = annotation(pool, IAAS_PROVIDER_ANNOTATION);
  const pairPool = annotation(pool, PAIR_POOL_ANNOTATION);
  return { name, ...(version ? { version } : {}), ...(iaasProvider === undefined ? {} : { iaasProvider }), ...(pairPool === undefined ? {} : { pairPool }) };
}

/** Every pool of `source` and its availability: the worker's first message, and the one after a complete list. */
export function snapshot(source: MirrorSource): MirrorMessage {
  const pools = [...source.entries()].map(([name, pool]) => mirroredPool(name, pool));
  const unavailable = source.unavailable();
  return { type: 'reset', pools, ...(unavailable === undefined ? {} : { unavailable }) };
}

/** The messages for a change of `source` that touched `touched` (a `PoolChangeListener`'s argument). */
export function mirrorMessages(source: MirrorSource, touched: ReadonlySet<string> | 'all'): MirrorMessage[] {
  if (touched === 'all') return [snapshot(source)];
  return [...touched].map((name): MirrorMessage => {
    const pool = source.get(name);
    return pool === undefined ? { type: 'delete', name } : { type: 'upsert', pool: mirroredPool(name, pool) };
  });
}

/** A mirrored pool as the candidate rules read a SpiderIPPool. */
function asPool({ name, version, iaasProvider, pairPool }: MirroredPool): SpiderIPPool {
  const annotations = {
    ...(iaasProvider === undefined ? {} : { [IAAS_PROVIDER_ANNOTATION]: iaasProvider }),
    ...(pairPool === undefined ? {} : { [PAIR_POOL_ANNOTATION]: pairPool }),
  };
  return { metadata: { name, annotations }, ...(version === undefined ? {} : { spec: { ipVersion: version } }) };
}

/** The worker's catalog: what {@link PoolIndex} answers the candidate rules, from messages. */
export class PoolMirror implements PoolCatalog {
  private pools = new Map<string, SpiderIPPool>();
  private unavailableReason: string | undefined;
  private byVersion: Map<IPVersion, PoolEntry[]> | undefined;
  private dual: DualStack;

  /** Empty and unavailable for `reason` until the first `reset`. */
  constructor(reason: string, dualStack: DualStack) {
    this.unavailableReason = reason;
    this.dual = dualStack;
  }

  apply(message: MirrorMessage): void {
    if (message.type === 'dualStack') return void (this.dual = message.dualStack);
    this.byVersion = undefined; // the candidate rules' memo is keyed by these lists: a new list drops it
    if (message.type === 'reset') {
      this.pools = new Map(message.pools.map((pool) => [pool.name, asPool(pool)]));
      this.unavailableReason = message.unavailable;
    } else if (message.type === 'upsert') this.pools.set(message.pool.name, asPool(message.pool));
    else this.pools.delete(message.name);
  }

  dualStack(): DualStack {
    return this.dual;
  }

  unavailable(): string | undefined {
    return this.unavailableReason;
  }

  get(name: string): SpiderIPPool | undefined {
    return this.pools.get(name);
  }

  ofVersion(version: IPVersion): readonly PoolEntry[] {
    this.byVersion ??= byIpVersion(this.pools);
    return this.byVersion.get(version)!;
  }
}
