/** PoolIndex.ofVersion: the per-version lists the candidate-pool rules read. */
import { poolObject } from '../candidates/pools.js';
import { PoolIndex } from '../../src/state/pool-index.js';

const synced = () => {
  const index = new PoolIndex();
  index.replaceAll([poolObject('a', { iaas: true }), poolObject('b'), poolObject('c6', { version: 6 })]);
  return index;
};

describe('PoolIndex.ofVersion', () => {
  test('lists each version\'s pools', () => {
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
    index.upsert({ ...poolObject('b'), metadata: { ...poolObject('b').metadata, resourceVersion: '7', labels: { team: 'x' } }, status: { allocatedIPCount: 3 } });
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

  test('a name listed twice keeps only the later copy\'s pair link; a relist keeps no link of the list before', () => {
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
