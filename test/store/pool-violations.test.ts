/**
 * The violations of stored pools, kept current incrementally: the counts always
 * equal a full re-judgement, and one event re-judges only the pools it touches.
 */
import fc from 'fast-check';
import { PoolViolationTracker } from '../../src/store/pool-violations.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import type { Slicing } from '../../src/store/slices.js';
import { spiderIPPool } from '../helpers/pools.js';

type Spec = { name: string; iaas: boolean; version: 4 | 6; pair?: string | undefined; nic?: string | undefined; ips?: readonly string[] | undefined };

function pool({ name, iaas, version, pair, nic, ips }: Spec) {
  return spiderIPPool(name, {
    ...(iaas ? { provider: 'cloud' } : {}),
    ...(pair ? { pair } : {}),
    ...(nic !== undefined ? { nic } : {}),
    version,
    ips: ips ? [...ips] : version === 4 ? ['10.0.0.1-10.0.0.10'] : ['fd00::1-fd00::a'],
  });
}

/** What a full judgement from scratch finds: the reference the incremental counts must equal. */
function fromScratch(index: PoolIndex) {
  const fresh = new PoolIndex();
  fresh.replaceAll([...index.entries()].map(([name]) => index.get(name)));
  const tracker = new PoolViolationTracker(fresh);
  return { counts: Object.fromEntries(tracker.counts()), brokenPairs: tracker.brokenPairs() };
}

const snapshot = (tracker: PoolViolationTracker) => ({ counts: Object.fromEntries(tracker.counts()), brokenPairs: tracker.brokenPairs() });

describe('PoolViolationTracker', () => {
  it('counts violations by rule and broken pairs once the index is synced', () => {
    const index = new PoolIndex();
    const tracker = new PoolViolationTracker(index);
    index.upsert(pool({ name: 'early', iaas: true, version: 4, nic: 'a,b' }));
    expect(tracker.counts().get('parent-nic-one')).toBe(0); // not synced: nothing judged yet
    index.replaceAll([
      pool({ name: 'a', iaas: true, version: 4, nic: 'a,b' }),
      pool({ name: 'v4', iaas: true, version: 4, pair: 'v6' }),
      pool({ name: 'v6', iaas: true, version: 4 }),
    ]);
    expect(tracker.counts().get('parent-nic-one')).toBe(1);
    expect(tracker.counts().get('pair-ipVersion')).toBe(2); // each side of the pair reports it
    expect(tracker.brokenPairs()).toBe(1);
    expect(tracker.violations().map((v) => [v.pool, v.rule, v.field])).toEqual([
      ['a', 'parent-nic-one', 'metadata.annotations[ipam.spidernet.io/parent-nic]'],
      ['v4', 'pair-ipVersion', 'spec.ipVersion'],
      ['v6', 'pair-ipVersion', 'spec.ipVersion'],
    ]);
    index.upsert(pool({ name: 'v6', iaas: true, version: 6 }));
    expect(tracker.counts().get('pair-ipVersion')).toBe(0);
    expect(tracker.brokenPairs()).toBe(0);
  });

  it('a traditional pool created as the sibling of an IaaS pool is a broken pair (it never reaches the webhook)', () => {
    const index = new PoolIndex();
    const tracker = new PoolViolationTracker(index);
    index.replaceAll([pool({ name: 'v4', iaas: true, version: 4, pair: 'v6' })]);
    expect(tracker.brokenPairs()).toBe(0); // the sibling does not exist yet
    index.upsert(pool({ name: 'v6', iaas: false, version: 6 }));
    expect(tracker.counts().get('pair-not-iaas')).toBe(1);
    expect(tracker.brokenPairs()).toBe(1);
    index.remove('v6');
    expect(tracker.brokenPairs()).toBe(0);
  });

  it('one event re-judges only the pools it touches, however many pools there are', () => {
    const index = new PoolIndex();
    const tracker = new PoolViolationTracker(index);
    const pools = [];
    for (let i = 0; i < 2000; i++)
      pools.push(pool({ name: `v4-${i}`, iaas: true, version: 4, pair: `v6-${i}` }), pool({ name: `v6-${i}`, iaas: true, version: 6 }));
    index.replaceAll(pools);
    expect(tracker.judgements).toBe(4000);
    const before = tracker.judgements;
    index.upsert(pool({ name: 'v6-7', iaas: true, version: 4 })); // breaks one pair: v6-7 and v4-7
    expect(tracker.judgements - before).toBe(2);
    expect(tracker.brokenPairs()).toBe(1);
    const moved = tracker.judgements;
    index.upsert(pool({ name: 'v4-8', iaas: true, version: 4, pair: 'v6-9' })); // v4-8, its old and new targets
    expect(tracker.judgements - moved).toBe(3);
    const removed = tracker.judgements;
    index.remove('v6-1');
    expect(tracker.judgements - removed).toBe(2); // v6-1 and v4-1, which names it
    expect(snapshot(tracker)).toEqual(fromScratch(index));
  });

  it('incremental counts always equal a judgement from scratch (random event sequences)', () => {
    const names = ['a', 'b', 'c', 'd'];
    const spec = fc.record({
      name: fc.constantFrom(...names),
      iaas: fc.boolean(),
      version: fc.constantFrom(4 as const, 6 as const),
      pair: fc.option(fc.constantFrom(...names), { nil: undefined }),
      nic: fc.option(fc.constantFrom('eth0', 'a,b', ''), { nil: undefined }),
      ips: fc.option(fc.constantFrom(['10.0.0.1-10.0.0.50'], ['fd00::1']), { nil: undefined }),
    });
    const event = fc.oneof(
      spec.map((s) => ({ upsert: s })),
      fc.constantFrom(...names).map((name) => ({ remove: name })),
    );
    fc.assert(
      fc.property(fc.array(spec, { maxLength: 4 }), fc.array(event, { maxLength: 12 }), (initial, events) => {
        const index = new PoolIndex();
        const tracker = new PoolViolationTracker(index);
        index.replaceAll(initial.map(pool));
        for (const e of events) {
          if ('upsert' in e) index.upsert(pool(e.upsert));
          else index.remove(e.remove);
        }
        expect(snapshot(tracker)).toEqual(fromScratch(index));
      }),
      { numRuns: 300 },
    );
  });

  describe('in slices (the server: the pass after a list yields to the event loop)', () => {
    /** A slicing that pauses after every `every` judgements until `step()` lets it go on. */
    function stepped(every: number) {
      let judged = 0;
      const waiting: (() => void)[] = [];
      const slicing: Slicing = { sliceMs: every, now: () => judged++, pause: () => new Promise((resolve) => waiting.push(resolve)) };
      const step = async () => {
        waiting.shift()?.();
        await new Promise((resolve) => setImmediate(resolve));
      };
      return { slicing, step, paused: () => waiting.length > 0 };
    }
    const pairs = (n: number, broken: (i: number) => boolean) =>
      Array.from({ length: n }, (_, i) => [
        pool({ name: `v4-${i}`, iaas: true, version: 4, pair: `v6-${i}` }),
        pool({ name: `v6-${i}`, iaas: true, version: broken(i) ? 4 : 6 }),
      ]).flat();

    it('judges part of the pools per slice and ends with the counts of a judgement from scratch', async () => {
      const index = new PoolIndex();
      const { slicing, step, paused } = stepped(10);
      const tracker = new PoolViolationTracker(index, slicing);
      index.replaceAll(pairs(50, (i) => i % 10 === 0));
      expect(tracker.judgements).toBeLessThan(100); // not in one piece
      expect(paused()).toBe(true);
      while (paused()) await step();
      await tracker.judged();
      expect(tracker.judgements).toBe(100);
      expect(snapshot(tracker)).toEqual(fromScratch(index));
      expect(tracker.brokenPairs()).toBe(5);
    });

    it('without a slicing the pass is done when replaceAll returns', () => {
      const index = new PoolIndex();
      const tracker = new PoolViolationTracker(index);
      index.replaceAll(pairs(50, (i) => i % 10 === 0));
      expect(tracker.judgements).toBe(100);
      expect(tracker.brokenPairs()).toBe(5);
    });

    it('a pass that throws is handed to its handler and counted, never an unhandled rejection; the counts stay right and the next list judges again', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const index = new PoolIndex();
        const { slicing, step, paused } = stepped(10);
        const failures: unknown[] = [];
        const tracker = new PoolViolationTracker(index, slicing, (error) => failures.push(error));
        index.replaceAll(pairs(20, () => true));
        while (paused()) await step();
        await tracker.judged();
        const judgedBefore = snapshot(tracker);
        // A rule that throws on the 30th pool it reads: the pass ends there, the pools judged before keep their judgement.
        let reads = 0;
        const pairedWith = index.pairedWith.bind(index);
        index.pairedWith = (name: string) => {
          if (++reads === 30) throw new Error('a rule failed');
          return pairedWith(name);
        };
        index.replaceAll(pairs(20, (i) => i % 5 === 0));
        while (paused()) await step();
        await expect(tracker.judged()).resolves.toBeUndefined();
        await new Promise((resolve) => setImmediate(resolve));
        expect(unhandled).toEqual([]);
        expect(failures).toEqual([new Error('a rule failed')]);
        expect(tracker.failedJudgements).toBe(1);
        expect(snapshot(tracker)).not.toEqual(judgedBefore); // the first pools of the pass were judged
        for (const count of tracker.counts().values()) expect(count).toBeGreaterThanOrEqual(0);
        index.replaceAll(pairs(20, (i) => i % 5 === 0)); // the next list: every pool judged again
        while (paused()) await step();
        await tracker.judged();
        expect(snapshot(tracker)).toEqual(fromScratch(index));
        expect(tracker.failedJudgements).toBe(1);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });

    it('a newer list abandons the older pass; events between slices and pools gone from the list leave the counts right', async () => {
      const index = new PoolIndex();
      const { slicing, step, paused } = stepped(10);
      const tracker = new PoolViolationTracker(index, slicing);
      index.replaceAll(pairs(50, () => true));
      await step();
      index.upsert(pool({ name: 'v6-49', iaas: true, version: 6 })); // between slices: judged at once
      index.replaceAll(pairs(20, (i) => i === 3)); // 60 pools of the first list are gone
      const first = tracker.judgements;
      while (paused()) await step();
      await tracker.judged();
      expect(snapshot(tracker)).toEqual(fromScratch(index));
      expect(tracker.brokenPairs()).toBe(1);
      expect(
        tracker
          .violations()
          .map((v) => v.pool)
          .sort(),
      ).toEqual(['v4-3', 'v6-3']);
      // The abandoned pass stopped: the second judged the rest of its 40 pools and the few gone ones judged before.
      expect(tracker.judgements - first).toBeLessThanOrEqual(40); // the older pass, going on, would judge the 40 again
    });
  });
});
