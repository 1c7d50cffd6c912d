/**
 * Generated (old, new) SpiderIPPool pairs for the differentials between the webhook and its
 * ValidatingAdmissionPolicy: every rule's boundary, absent, empty and changed values, with the
 * stored pool's status. Used on the real API server (test/e2e/admission-policy.test.ts) and
 * with a CEL evaluator (test/rules/admission-policy-cel.test.ts).
 */
import fc from 'fast-check';

const PROVIDER = 'ipam.spidernet.io/iaas-provider';
const NIC = 'ipam.spidernet.io/parent-nic';
const PAIR = 'ipam.spidernet.io/pair-pool';
/** Stands for the pool's own name in a generated pair-pool annotation. */
const SELF: unique symbol = Symbol('self');

// The values each field takes: every rule's boundary, absent, empty and changed.
const PROVIDERS = [undefined, 'cloud', 'other-cloud', ''];
const NODES = [undefined, [], ['w1'], ['w2'], ['w1', 'w2'], [''], ['', 'w1'], ['w1', ''], ['', ''], ['w1', 'w2', 'w3', 'w4']];
const NICS = [
  undefined,
  'eth0',
  'eth1',
  '',
  ' ',
  '\t',
  'eth0,eth1',
  ',',
  'eth 0',
  'eth0\u00a0',
  'eth0\u0085',
  '\u3000',
  'eth0\ufeff',
  'abcdefghijklmno',
  'abcdefghijklmnop',
  'ééééééé',
  'éééééééé',
  'ééééééé\u00e9x',
  '.',
  '..',
  '...',
  'e/1',
  'e:1',
  'e\u00000',
];
const PAIR_POOLS: (string | typeof SELF | undefined)[] = [undefined, '', SELF, 'partner-not-stored'];
const COUNTS = [undefined, 0, 3];
const ALLOCATED_IPS = [
  undefined,
  '',
  ' ',
  '\u00a0',
  '\ufeff',
  '{}',
  ' { } ',
  '[]',
  '[\n]',
  'null',
  '0',
  '-1.5e3',
  '01',
  'true',
  '""',
  '"{}"',
  '" null "',
  '"\u00a0"',
  '"x"',
  '{"10.0.0.2/24":{"pod":"default/a"}}',
  '["10.0.0.2"]',
  'garbage',
  '\u00a0{}',
  '{} x',
];

interface PoolShape {
  provider: string | undefined;
  nodes: string[] | undefined;
  nic: string | undefined;
  pair: string | typeof SELF | undefined;
  other: string | undefined;
}
export interface Pair {
  old: PoolShape;
  next: PoolShape;
  status: { count: number | undefined; ips: string | undefined };
}

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
const shape: fc.Arbitrary<PoolShape> = fc.record({
  provider: pick(PROVIDERS),
  nodes: pick(NODES),
  nic: pick(NICS),
  pair: pick(PAIR_POOLS),
  other: pick([undefined, 'x', 'y']),
});
/** A new pool from the old one: each field kept, or (one time in three) drawn afresh. */
export const pair: fc.Arbitrary<Pair> = fc
  .tuple(shape, shape, fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 5, maxLength: 5 }), pick(COUNTS), pick(ALLOCATED_IPS))
  .map(([old, drawn, keep, count, ips]) => {
    const keys = ['provider', 'nodes', 'nic', 'pair', 'other'] as const;
    const next = Object.fromEntries(keys.map((k, i) => [k, keep[i] === 0 ? drawn[k] : old[k]])) as unknown as PoolShape;
    return { old, next, status: { count, ips } };
  });

/** The SpiderIPPool of `shape`, named `name` (replacing `resourceVersion` when given). */
export function manifest(name: string, s: PoolShape, resourceVersion?: string): Record<string, unknown> {
  const annotations: Record<string, string> = {};
  if (s.provider !== undefined) annotations[PROVIDER] = s.provider;
  if (s.nic !== undefined) annotations[NIC] = s.nic;
  if (s.pair !== undefined) annotations[PAIR] = s.pair === SELF ? name : s.pair;
  if (s.other !== undefined) annotations['example.com/note'] = s.other;
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, ...(resourceVersion !== undefined ? { resourceVersion } : {}), ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    spec: { subnet: '10.6.0.0/16', ips: ['10.6.0.10-10.6.0.20'], ...(s.nodes !== undefined ? { nodeName: s.nodes } : {}) },
  };
}
