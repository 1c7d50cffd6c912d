/** PoolIndex.ofVersion: the per-version lists the candidate-pool rules read. */
import { poolObject } from '../spiderpool/candidate-pools.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import type { Slicing } from '../../src/store/slices.js';

const synced = () => {
  const index = new PoolIndex();
  index.replaceAll([poolObject('a', { iaas: true }), poolObject('b'), poolObject('c6', { version: 6 })]);
  return index;
};

describe('PoolIndex.ofVersion', () => {
  test("lists each version's pools", () => {
    const index = synced();
    expect(index.ofVersion(4).map((e) => e.name)).toEqual(['a', 'b']);
    expect(index.ofVersion(6).map((e) => e.name)).toEqual(['c6']);
  });

  test('a status-only update (an allocation) keeps the lists', () => {
    const index = synced();
    const before = index.ofVersion(4);
    expect(index.upsert({ ...poolObject('b'), status: { allocatedIPCount: 3 } })).toBe(true);
    expect(index.ofVersion(4)).toBe(before);
    expect(index.get('b')).toBeDefined();
  });

  test('a status-only update changes the stored pool in place: the lists read the new status and resourceVersion, no older copy is kept', () => {
    const index = synced();
    const stored = index.get('b');
    const listed = index.ofVersion(4).find((e) => e.name === 'b')!.pool;
    index.upsert({
      ...poolObject('b'),
      metadata: { ...poolObject('b').metadata, resourceVersion: '7', labels: { team: 'x' } },
      status: { allocatedIPCount: 3 },
    });
    expect(index.get('b')).toBe(stored);
    expect(listed).toBe(stored);
    expect(index.get('b')).toMatchObject({ metadata: { resourceVersion: '7', labels: { team: 'x' } }, status: { allocatedIPCount: 3 } });
    index.upsert(poolObject('b')); // the allocations released: no status left
    expect(index.get('b')?.status).toBeUndefined();
  });

  test('an update the readers see replaces the stored pool', () => {
    const index = synced();
    const stored = index.get('b');
    index.upsert(poolObject('b', { isDefault: true }));
    expect(index.get('b')).not.toBe(stored);
    expect(index.get('b')?.spec?.default).toBe(true);
  });

  test.each([
    ['a new pool', (i: PoolIndex) => i.upsert(poolObject('d'))],
    ['a pool removed', (i: PoolIndex) => i.remove('b')],
    ['the IaaS annotation added', (i: PoolIndex) => i.upsert(poolObject('b', { iaas: true }))],
    ['a pair annotation added', (i: PoolIndex) => i.upsert(poolObject('a', { iaas: true, pair: 'c6' }))],
    ['spec.default set', (i: PoolIndex) => i.upsert(poolObject('b', { isDefault: true }))],
    ['the IP version changed', (i: PoolIndex) => i.upsert(poolObject('b', { version: 6 }))],
    ['a malformed object under a stored name', (i: PoolIndex) => i.upsert({ metadata: { name: 'b' }, spec: { nodeName: 'x' } })],
  ])('%s rebuilds them', (_what, change) => {
    const index = synced();
    const before = index.ofVersion(4);
    change(index);
    expect(index.ofVersion(4)).not.toBe(before);
  });
});

describe('PoolIndex.replaceAll', () => {
  test('reads its objects in order, as upserts: a malformed copy drops an earlier one, a later well-formed copy stands (review2: it was dropped too)', () => {
    const index = new PoolIndex();
    const malformed = { metadata: { name: 'a' }, spec: { nodeName: 'x' } };
    expect(index.replaceAll([malformed, poolObject('a')])).toEqual(['a']);
    expect(index.get('a')).toBeDefined();
    expect(index.replaceAll([poolObject('a'), malformed])).toEqual(['a']);
    expect(index.get('a')).toBeUndefined();
  });

  test("a name listed twice keeps only the later copy's pair link; a relist keeps no link of the list before", () => {
    const index = new PoolIndex();
    index.replaceAll([poolObject('a', { pair: 'x' }), poolObject('b', { pair: 'x' }), poolObject('a', { pair: 'y' })]);
    expect(index.pairedWith('x').map((p) => p.metadata.name)).toEqual(['b']);
    expect(index.pairedWith('y').map((p) => p.metadata.name)).toEqual(['a']);
    index.replaceAll([poolObject('c', { pair: 'y' })]);
    expect(index.pairedWith('x')).toEqual([]);
    expect(index.pairedWith('y').map((p) => p.metadata.name)).toEqual(['c']);
    expect(index.size).toBe(1);
  });

  test('a name listed twice whose later copy names no pair leaves no link', () => {
    const index = new PoolIndex();
    index.replaceAll([poolObject('a', { pair: 'x' }), poolObject('a')]);
    expect(index.pairedWith('x')).toEqual([]);
  });
});

describe('PoolIndex.replaceAllInSlices', () => {
  /** Every slice one pool long; each pause lets the test read the index. */
  const everyPool = (onPause: () => void): Slicing => {
    let now = 0;
    return { sliceMs: 1, now: () => now++, pause: async () => onPause() };
  };

  test('readers see the pools as they were until the whole list is stored, then the new list at once', async () => {
    const index = new PoolIndex();
    index.replaceAll([poolObject('old', { pair: 'x' })]);
    const told: unknown[] = [];
    index.onChange((touched) => told.push(touched));
    const seen: string[][] = [];
    const listed = [poolObject('a', { pair: 'x' }), { metadata: { name: 'bad' }, spec: { nodeName: 'x' } }, poolObject('b')];
    const refused = await index.replaceAllInSlices(
      listed,
      everyPool(() => seen.push([...index.entries()].map(([name]) => name))),
    );
    expect(seen.length).toBeGreaterThan(0);
    for (const names of seen) expect(names).toEqual(['old']);
    expect(refused).toEqual(['bad']);
    expect([...index.entries()].map(([name]) => name)).toEqual(['a', 'b']);
    expect(index.pairedWith('x').map((p) => p.metadata.name)).toEqual(['a']);
    expect(index.hasSynced()).toBe(true);
    expect(told).toEqual(['all']);
  });

  test('stores what replaceAll stores', async () => {
    const listed = [poolObject('a', { pair: 'x' }), poolObject('b', { pair: 'x' }), poolObject('a', { pair: 'y' }), poolObject('c6', { version: 6 })];
    const sliced = new PoolIndex();
    await sliced.replaceAllInSlices(
      listed,
      everyPool(() => undefined),
    );
    const whole = new PoolIndex();
    whole.replaceAll(listed);
    expect([...sliced.entries()]).toEqual([...whole.entries()]);
    for (const target of ['x', 'y']) expect(sliced.pairedWith(target)).toEqual(whole.pairedWith(target));
    expect(sliced.ofVersion(6)).toEqual(whole.ofVersion(6));
  });
});
