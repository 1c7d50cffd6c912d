/**
 * What the cache keeps of a SpiderIPPool (slimPool): the rules' schema output, its labels
 * and resourceVersion, and the status as `allocations` reads it. Every field the rules
 * read survives (a rule reading a field the schema lacks does not compile; one the schema
 * gains is kept by construction, which the first test checks field by field), and the
 * judgement of the slimmed pool is the judgement of the whole one.
 */
import fc from 'fast-check';
import { SpiderIPPoolSchema, allocations, type SpiderIPPool } from '../../src/spiderpool/pool.js';
import { judgePool } from '../../src/rules/pool-judgement.js';
import { PoolIndex, slimPool } from '../../src/store/pool-index.js';
import { loadPool } from '../fixtures/load.js';
import { allocatedIPs } from '../cluster/fake-api-server.js';

/** pool-a-v6 with every field a Spiderpool pool carries, allocations and managedFields included. */
function fullPool(count: number) {
  const pool = loadPool('pool-a-v6');
  return {
    ...pool,
    metadata: {
      ...pool['metadata'],
      uid: '0d6f',
      labels: { team: 'net' },
      annotations: { ...pool['metadata'].annotations, 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(2000) },
      managedFields: [{ manager: 'spiderpool-controller', fieldsV1: { 'f:status': {} } }],
    },
    spec: { ...pool['spec'], excludeIPs: ['fd00:6::11'], default: false, vlan: 0, routes: [], multusName: ['macvlan'] },
    status: { allocatedIPCount: count, allocatedIPs: allocatedIPs(count), totalIPCount: 200 },
  };
}

describe('slimPool', () => {
  it('keeps every field the rules read, as the schema reads them, and nothing else', () => {
    const full = fullPool(64);
    const slim = slimPool(full)!;
    const { status: _fullStatus, ...fullRead } = SpiderIPPoolSchema.parse(full);
    const { status: _slimStatus, ...slimRead } = SpiderIPPoolSchema.parse(slim);
    expect(slimRead).toEqual(fullRead);
    expect(allocations(slim)).toBe(allocations(full as SpiderIPPool));
    expect(slim).toEqual({
      apiVersion: 'spiderpool.spidernet.io/v2beta1',
      kind: 'SpiderIPPool',
      metadata: { ...fullRead.metadata, resourceVersion: '4812', uid: '0d6f', labels: { team: 'net' } },
      spec: fullRead.spec,
      status: { allocatedIPCount: 64 },
    });
  });

  it('is the same size whatever the allocations', () => {
    expect(JSON.stringify(slimPool(fullPool(128))).length).toBe(JSON.stringify(slimPool(fullPool(1))).length + 2);
    expect(JSON.stringify(slimPool(fullPool(128))).length).toBeLessThan(JSON.stringify(fullPool(128)).length / 20);
  });

  it('is judged as the whole pool, for any allocation status', () => {
    const status = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.record(
        {
          allocatedIPCount: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
          allocatedIPs: fc.oneof(fc.string(), fc.constant('{}'), fc.constant('[]'), fc.constant(allocatedIPs(2)), fc.dictionary(fc.string(), fc.string())),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(status, fc.boolean(), (s, node) => {
        const full = { ...fullPool(0), status: s, spec: { ...fullPool(0).spec, nodeName: node ? ['worker-1'] : [] } };
        const slim = slimPool(full)!;
        expect(allocations(slim)).toBe(allocations(full as SpiderIPPool));
        const index = new PoolIndex();
        index.replaceAll([]);
        expect(judgePool(slim, 'pool-a-v6', index)).toEqual(judgePool(SpiderIPPoolSchema.parse(full), 'pool-a-v6', index));
      }),
    );
  });

  it('is idempotent, and refuses what the schema refuses or what has no name', () => {
    const slim = slimPool(fullPool(3))!;
    expect(slimPool(slim)).toBe(slim);
    expect(slimPool(JSON.parse(JSON.stringify(slim)))).toEqual(slim);
    expect(slimPool({ metadata: { name: 'x' }, spec: { nodeName: 'not-a-list' } })).toBeUndefined();
    expect(slimPool({ metadata: {} })).toBeUndefined();
  });
});

describe('PoolIndex: an update that changes nothing the readers read', () => {
  const pairA = {
    ...fullPool(0),
    metadata: { ...fullPool(0).metadata, name: 'pool-a' },
    spec: { ipVersion: 4, ips: ['10.0.0.10-10.0.0.209'], nodeName: ['worker-1'] },
  };

  it('replaces the stored pool without telling any listener (no re-judgement) or rebuilding the lists', () => {
    const index = new PoolIndex();
    index.replaceAll([fullPool(0), pairA]);
    const told: unknown[] = [];
    index.onChange((touched) => told.push(touched));
    const lists = index.ofVersion(6);
    for (let count = 1; count <= 5; count++)
      index.upsert({ ...fullPool(count), metadata: { ...fullPool(count).metadata, resourceVersion: String(5000 + count) } });
    expect(told).toEqual([]);
    expect(index.ofVersion(6)).toBe(lists);
    expect(index.get('pool-a-v6')!.status).toEqual({ allocatedIPCount: 5 });
    expect(index.get('pool-a-v6')!.metadata.resourceVersion).toBe('5005');
  });

  it('tells the listeners of a change they read (an annotation, a spec field)', () => {
    const index = new PoolIndex();
    index.replaceAll([fullPool(0), pairA]);
    const told: unknown[] = [];
    index.onChange((touched) => told.push(touched));
    index.upsert({ ...fullPool(0), spec: { ...fullPool(0).spec, ips: ['fd00:6::10-fd00:6::20'] } });
    const full = fullPool(0);
    index.upsert({ ...full, metadata: { ...full.metadata, annotations: { ...full.metadata.annotations, 'ipam.spidernet.io/parent-nic': 'eth1' } } });
    expect(told).toHaveLength(2);
  });
});
