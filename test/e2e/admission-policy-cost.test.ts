/**
 * What the ValidatingAdmissionPolicy costs the API server. The API server estimates no
 * cost when a policy is created (its expressions are compiled against dynamic types); it
 * counts the cost while evaluating, and a validation over `PerCallLimit` (1 000 000) or a
 * binding over `RuntimeCELCostBudget` (10 000 000, validations and messages together)
 * fails, which failurePolicy Fail turns into a refusal. test/e2e/apiserver/policycost
 * compiles and evaluates the policy with the API server's own code and reports that cost
 * per validation, per messageExpression and in total, printed here for typical writes and
 * for the largest objects the API server stores (annotations at their 256 KiB limit, a
 * 1 MB status, node lists of 300 000 entries): each must stay under a tenth of its limit.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { POLICY_FILE } from './cluster/guards.js';
import { ROOT } from './cluster/webhook.js';

const MODULE = path.join(ROOT, 'test/e2e/apiserver');
const TOOL = path.join(MODULE, 'bin/policycost');

const A = { 'ipam.spidernet.io/iaas-provider': 'cloud', 'ipam.spidernet.io/parent-nic': 'eth0' };
const pool = (annotations: Record<string, string>, nodeName?: string[], status?: Record<string, unknown>) => ({
  apiVersion: 'spiderpool.spidernet.io/v2beta1',
  kind: 'SpiderIPPool',
  metadata: { name: 'p', annotations },
  spec: { subnet: '10.6.0.0/16', ...(nodeName ? { nodeName } : {}) },
  ...(status ? { status } : {}),
});
const big = 'x'.repeat(250_000);
const manyNodes = Array.from({ length: 100_000 }, (_, i) => `w${i}`);
const manyEmpty = Array.from({ length: 300_000 }, () => '');
const INPUTS = [
  { name: 'CREATE of a node pool', operation: 'CREATE', object: pool(A, ['w1']) },
  {
    name: 'allowed UPDATE of a pool in use',
    operation: 'UPDATE',
    object: pool({ ...A, 'example.com/n': '2' }, ['w1'], { allocatedIPCount: 3 }),
    oldObject: pool(A, ['w1'], { allocatedIPCount: 3 }),
  },
  {
    name: 'refused UPDATE: node removed, NIC changed, in use',
    operation: 'UPDATE',
    object: pool({ ...A, 'ipam.spidernet.io/parent-nic': 'eth1' }),
    oldObject: pool(A, ['w1'], { allocatedIPCount: 3, allocatedIPs: '{"10.6.0.10":{}}' }),
  },
  {
    name: '250 kB parent-nic changed, 1 MB allocatedIPs',
    operation: 'UPDATE',
    object: pool({ ...A, 'ipam.spidernet.io/parent-nic': big }, ['w1'], { allocatedIPs: `${' '.repeat(1_000_000)}x` }),
    oldObject: pool({ ...A, 'ipam.spidernet.io/parent-nic': big.slice(1) }, ['w1'], { allocatedIPs: `${' '.repeat(1_000_000)}x` }),
  },
  {
    name: '250 kB provider, 4 kB parent-nic, global pool',
    operation: 'CREATE',
    object: pool({ 'ipam.spidernet.io/iaas-provider': big, 'ipam.spidernet.io/parent-nic': big.slice(0, 4000) }),
  },
  { name: '100 000 node names', operation: 'UPDATE', object: pool(A, manyNodes), oldObject: pool(A, manyNodes) },
  { name: '300 000 empty node names', operation: 'UPDATE', object: pool(A, manyEmpty), oldObject: pool(A, manyEmpty) },
];

interface Measured {
  perCallLimit: number;
  budget: number;
  inputs: { name: string; validations: number[]; messages: number[]; total: number; totalMicros: number; errors: string[] }[];
}

test("every expression of the policy stays far inside the API server's cost limits, even on the largest objects", () => {
  execFileSync('go', ['build', '-o', TOOL, './policycost'], { cwd: MODULE, stdio: 'inherit' });
  const measured = JSON.parse(execFileSync(TOOL, [POLICY_FILE], { input: JSON.stringify(INPUTS), maxBuffer: 16 * 1024 * 1024 }).toString()) as Measured;
  const rows = measured.inputs.map(
    (i) => `| ${i.name} | ${i.validations.join(' ')} | ${i.messages.join(' ')} | ${i.total} | ${(i.totalMicros / 1000).toFixed(1)} |`,
  );
  console.log(
    `ValidatingAdmissionPolicy cost as the API server counts it (limits: ${measured.perCallLimit} per expression, ${measured.budget} per binding):\n` +
      '| write | validations, in policy order | messageExpressions | total | ms |\n|---|---|---|---|---|\n' +
      rows.join('\n'),
  );
  for (const i of measured.inputs) {
    expect({ input: i.name, errors: i.errors }).toEqual({ input: i.name, errors: [] });
    expect(Math.max(...i.validations, ...i.messages)).toBeLessThan(measured.perCallLimit / 10);
    expect(i.total).toBeLessThan(measured.budget / 10);
  }
}, 300_000);
