/** ClusterState: manifests sorted by kind; the pools as a synced PoolDirectory with a reverse pair index. */
import { ClusterState } from '../../src/store/state.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import { spiderIPPool } from '../helpers/pools.js';
import type { KubeObject } from '../../src/kubernetes/build.js';

const pool = (name: string, pair?: string): KubeObject => spiderIPPool(name, { provider: 'c', ...(pair ? { pair } : {}) });

describe('ClusterState', () => {
  it('sorts objects by kind: pools into a synced index, others by kind, namespace and name', () => {
    const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    const conf: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'spiderpool-conf', namespace: 'kube-system' } };
    const { state, refused } = ClusterState.of([pool('a'), namespace, conf]);
    expect(refused).toEqual([]);
    expect(state.pools.unavailable()).toBeUndefined();
    expect(state.pools.get('a')?.metadata.name).toBe('a');
    expect(state.get({ group: '', kind: 'Namespace' }, 'shop')).toBe(namespace);
    expect(state.get({ group: '', kind: 'ConfigMap' }, 'spiderpool-conf', 'kube-system')).toBe(conf);
    expect(state.get({ group: '', kind: 'ConfigMap' }, 'spiderpool-conf', 'default')).toBeUndefined();
    expect(state.list({ group: '', kind: 'Namespace' })).toEqual([namespace]);
    expect(state.stored(pool('a'))).toEqual(pool('a'));
  });

  it('refuses, with the reason, objects without a name and pools of the wrong shape', () => {
    const broken = { ...pool('b'), spec: { nodeName: 'not-a-list' } };
    const { state, refused } = ClusterState.of([broken, { apiVersion: 'v1', kind: 'Namespace', metadata: {} }]);
    expect(refused.map((r) => r.reason)).toEqual(['it has no metadata.name', expect.stringContaining('pair checks treat it as absent')]);
    expect(state.pools.get('b')).toBeUndefined();
  });

  it('keeps the later of two objects of one kind and name, and says so (found by hostile testing: audit counted one pool silently)', () => {
    const first = pool('a');
    const { state, refused } = ClusterState.of([first, pool('a', 'b'), pool('c')]);
    expect(refused).toEqual([{ object: first, reason: 'a later object of the same kind and name replaces it, as a cluster holds only one' }]);
    expect(state.pools.get('a')?.metadata.annotations?.['ipam.spidernet.io/pair-pool']).toBe('b');
  });

  it('keeps a well-formed pool that replaces a malformed one of its name, refusing only the earlier (review2: the later was dropped and refused too)', () => {
    const broken = { ...pool('a'), spec: { nodeName: 'not-a-list' } };
    const later = pool('a', 'b');
    const { state, refused } = ClusterState.of([broken, later]);
    expect(refused).toEqual([{ object: broken, reason: 'a later object of the same kind and name replaces it, as a cluster holds only one' }]);
    expect(state.pools.get('a')?.metadata.annotations?.['ipam.spidernet.io/pair-pool']).toBe('b');
  });

  it('records accepted writes', () => {
    const { state } = ClusterState.of([]);
    state.record('CREATE', pool('a', 'b'));
    expect(state.pools.pairedWith('b').map((p) => p.metadata.name)).toEqual(['a']);
    state.record('DELETE', pool('a'));
    expect(state.pools.pairedWith('b')).toEqual([]);
  });
});

describe('PoolIndex reverse pair index', () => {
  it('follows pair-pool changes and tells the listener which pools a change touches', () => {
    const index = new PoolIndex();
    const seen: (string[] | 'all')[] = [];
    index.onChange((touched) => seen.push(touched === 'all' ? 'all' : [...touched].sort()));
    index.replaceAll([pool('a', 'x'), pool('b', 'x')]);
    expect(
      index
        .pairedWith('x')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['a', 'b']);
    index.upsert(pool('a', 'y'));
    expect(index.pairedWith('x').map((p) => p.metadata.name)).toEqual(['b']);
    expect(index.pairedWith('y').map((p) => p.metadata.name)).toEqual(['a']);
    index.upsert(pool('x'));
    index.remove('b');
    expect(seen).toEqual(['all', ['a', 'x', 'y'], ['b', 'x'], ['b', 'x']]);
  });

  it('keeps one namer, several and none alike (a lone namer is held without a Set)', () => {
    const index = new PoolIndex();
    const names = () =>
      index
        .pairedWith('x')
        .map((p) => p.metadata.name)
        .sort();
    index.replaceAll([pool('a', 'x')]);
    expect(names()).toEqual(['a']);
    index.upsert(pool('b', 'x'));
    index.upsert(pool('c', 'x'));
    expect(names()).toEqual(['a', 'b', 'c']);
    index.remove('a');
    index.upsert(pool('b'));
    expect(names()).toEqual(['c']);
    index.upsert(pool('a', 'x'));
    expect(names()).toEqual(['a', 'c']);
    index.remove('c');
    index.remove('a');
    expect(names()).toEqual([]);
    index.upsert(pool('c', 'x'));
    expect(names()).toEqual(['c']);
  });
});
