/** Moving replicas apart again, judged without I/O: who leaves a shared node, and only for a node that could take it. */
import { couldTake, shouldLeave, tolerates, type NodeView, type PodPlacement, type ReplicaView } from '../../src/cluster/placement-verdict.js';

const replica = (name: string, nodeName: string, createdMs: number, extra: Partial<ReplicaView> = {}): ReplicaView => ({
  name,
  nodeName,
  ready: true,
  terminating: false,
  createdMs,
  ...extra,
});
const node = (name: string, extra: Partial<NodeView> = {}): NodeView => ({
  name,
  labels: { 'kubernetes.io/hostname': name },
  unschedulable: false,
  ready: true,
  taints: [],
  ...extra,
});
/** As deploy/base's pod: the 10 s NoExecute tolerations, no selector, no affinity. */
const POD: PodPlacement = {
  nodeSelector: {},
  tolerations: [
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  ],
  requiredTerms: [],
};
/** Both on node b (the replacement came while a was down); a is back. */
const SHARED = [replica('old', 'b', 1_000), replica('new', 'b', 5_000)];

describe('shouldLeave', () => {
  it('the youngest of two replicas on one node leaves for a node that holds none', () => {
    expect(shouldLeave('new', SHARED, [node('a'), node('b')], POD)).toBe(true);
    expect(shouldLeave('old', SHARED, [node('a'), node('b')], POD)).toBe(false);
  });

  it('the name breaks a tie of creation times, so exactly one leaves', () => {
    const tie = [replica('x', 'b', 1_000), replica('y', 'b', 1_000)];
    expect(['x', 'y'].filter((self) => shouldLeave(self, tie, [node('a'), node('b')], POD))).toEqual(['y']);
  });

  it.each([
    ['a one-node cluster', SHARED, [node('b')]],
    ['the other node is cordoned (a drain)', SHARED, [node('a', { unschedulable: true }), node('b')]],
    ['the other node is not ready (still down)', SHARED, [node('a', { ready: false }), node('b')]],
    [
      'the other node is tainted unreachable (NoSchedule is not tolerated)',
      SHARED,
      [node('a', { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }] }), node('b')],
    ],
    ['the other node is a control plane', SHARED, [node('a', { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] }), node('b')]],
    ['the free node already holds a replica', [...SHARED, replica('third', 'a', 9_000)], [node('a'), node('b')]],
    ['a replica is not ready', [SHARED[0]!, replica('new', 'b', 5_000, { ready: false })], [node('a'), node('b')]],
    ['a replica is leaving', [replica('old', 'b', 1_000, { terminating: true }), SHARED[1]!], [node('a'), node('b')]],
    ['the replicas are on distinct nodes', [replica('old', 'a', 1_000), replica('new', 'b', 5_000)], [node('a'), node('b'), node('c')]],
    ['it is the only replica', [replica('new', 'b', 5_000)], [node('a'), node('b')]],
  ])('nobody leaves when %s', (_what, replicas, nodes) => {
    expect(replicas.filter((r) => shouldLeave(r.name, replicas, nodes, POD))).toEqual([]);
  });

  it("follows the pod's nodeSelector and required node affinity", () => {
    const nodes = [node('a', { labels: { zone: 'z1', role: 'infra' } }), node('b')];
    expect(shouldLeave('new', SHARED, nodes, { ...POD, nodeSelector: { role: 'infra' } })).toBe(true);
    expect(shouldLeave('new', SHARED, nodes, { ...POD, nodeSelector: { role: 'edge' } })).toBe(false);
    expect(
      shouldLeave('new', SHARED, nodes, { ...POD, requiredTerms: [[{ key: 'zone', operator: 'In', values: ['z2'] }], [{ key: 'role', operator: 'Exists' }]] }),
    ).toBe(true);
    expect(shouldLeave('new', SHARED, nodes, { ...POD, requiredTerms: [[{ key: 'zone', operator: 'NotIn', values: ['z1'] }]] })).toBe(false);
  });
});

describe('couldTake', () => {
  it.each([
    ['Gt', ['3'], { cores: '4' }, true],
    ['Gt', ['4'], { cores: '4' }, false],
    ['Lt', ['5'], { cores: '4' }, true],
    ['Lt', ['x'], { cores: '4' }, false],
    ['DoesNotExist', [], { cores: '4' }, false],
    ['Unknown', ['4'], { cores: '4' }, false],
  ] as const)('%s %j on %j: %s', (operator, values, labels, expected) => {
    expect(couldTake(node('a', { labels }), { ...POD, requiredTerms: [[{ key: 'cores', operator, values }]] })).toBe(expected);
  });
});

describe('tolerates', () => {
  const taint = { key: 'dedicated', value: 'infra', effect: 'NoSchedule' };
  it.each([
    [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }, true],
    [{ key: 'dedicated', value: 'infra' }, true],
    [{ key: 'dedicated', operator: 'Exists' }, true],
    [{ operator: 'Exists' }, true],
    [{ key: 'dedicated', operator: 'Equal', value: 'edge' }, false],
    [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, false],
    [{ key: 'other', operator: 'Exists' }, false],
  ])('%j: %s', (toleration, expected) => {
    expect(tolerates(toleration, taint)).toBe(expected);
  });
});
