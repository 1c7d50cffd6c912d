/**
 * `node --expose-gc dist-bench/bench/cache-memory.js [N] [K]`: what the pool cache costs per
 * pool, part by part, measured as live-heap deltas (`process.memoryUsage().heapUsed` after
 * a full GC) over N synthetic pools (default 10 000) with K allocations each (default 64),
 * each parsed from its own JSON text as the list reader parses it (so no string is shared by
 * accident) and slimmed as the cache slims it. Prints bytes per pool for: the slim pools
 * alone, the index over them (its Map and reverse pair index), the violation tracker, the
 * candidate lists by IP version, and what a status update leaves behind. In-process, no
 * cluster; the numbers are heap only (RSS adds the runtime and the collector's slack).
 */
import { PoolViolationTracker } from '../src/store/pool-violations.js';
import { PoolIndex, slimPool } from '../src/store/pool-index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with node --expose-gc');
  process.exit(2);
}
/** The live heap after full collections, a turn of the event loop between them (some garbage goes only then). */
const heap = async (): Promise<number> => {
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc();
  }
  return process.memoryUsage().heapUsed;
};

const n = Number(process.argv[2] ?? 10_000);
const k = Number(process.argv[3] ?? 64);

/** Pool i as the API server lists it (the bench's dual-stack node pools, managedFields and all). */
function listed(i: number, allocations: number): string {
  const node = i >> 1;
  const v6 = (i & 1) === 1;
  const [a, b] = [(node >> 8) & 255, node & 255];
  const name = (j: number) => `node-${j >> 1}-${(j & 1) === 1 ? 'v6' : 'v4'}`;
  const record: Record<string, unknown> = {};
  for (let j = 0; j < allocations; j++)
    record[v6 ? `fd00:${a}:${b}::${(16 + j).toString(16)}` : `10.${a}.${b}.${10 + j}`] = {
      interface: 'eth0',
      pod: `default/web-${i}-${j}`,
      podUid: `6a0e1d2c-3b4f-4a5e-8d7c-${String(i * 1000 + j).padStart(12, '0')}`,
    };
  return JSON.stringify({
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: {
      name: name(i),
      uid: `0b6c7d2e-1f3a-4b5c-9d8e-${String(i).padStart(12, '0')}`,
      resourceVersion: String(100_000 + i),
      generation: 1,
      creationTimestamp: '2026-12-02T04:00:00Z',
      annotations: { 'ipam.spidernet.io/iaas-provider': 'openstack', 'ipam.spidernet.io/parent-nic': 'eth0', 'ipam.spidernet.io/pair-pool': name(i ^ 1) },
      managedFields: [
        {
          manager: 'bench',
          operation: 'Update',
          apiVersion: 'spiderpool.spidernet.io/v2beta1',
          time: '2026-12-02T04:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:annotations': {} }, 'f:spec': {} },
        },
      ],
    },
    spec: v6
      ? {
          ipVersion: 6,
          subnet: `fd00:${a}:${b}::/64`,
          ips: [`fd00:${a}:${b}::10-fd00:${a}:${b}::100`],
          nodeName: [`node-${node}`],
          default: false,
          disable: false,
        }
      : { ipVersion: 4, subnet: `10.${a}.${b}.0/24`, ips: [`10.${a}.${b}.10-10.${a}.${b}.250`], nodeName: [`node-${node}`], default: false, disable: false },
    status:
      allocations === 0
        ? { allocatedIPCount: 0, totalIPCount: 241 }
        : { allocatedIPCount: allocations, totalIPCount: 241, allocatedIPs: JSON.stringify(record) },
  });
}

const perPool = (bytes: number): string => `${(bytes / n).toFixed(0)} B/pool`;
const rows: [string, number][] = [];
let mark = await heap();
const step = async (what: string) => {
  const now = await heap();
  rows.push([what, now - mark]);
  mark = now;
};

const pools = Array.from({ length: n }, (_, i) => slimPool(JSON.parse(listed(i, k)))!);
await step('slim pools (what the rules read)');
const index = new PoolIndex();
index.replaceAll(pools);
await step('index: Map by name + reverse pair index');
const tracker = new PoolViolationTracker(index);
await step('violation tracker');
const violating = new Set(tracker.violations().map((v) => v.pool)).size;
mark = await heap(); // what listing the violations left is not the tracker's
index.ofVersion(4);
index.ofVersion(6);
await step('candidate lists by IP version');
pools.length = 0; // the index holds the only copy: what an update replaces becomes garbage
await step("(the script's own array of the pools dropped)");
for (let i = 0; i < n; i++) index.upsert(JSON.parse(listed(i, k + 1)));
await step('after one status update of every pool');

let total = 0;
for (const [what, bytes] of rows) {
  total += what.startsWith('after') ? 0 : bytes;
  console.log(`${what.padEnd(48)} ${perPool(bytes).padStart(12)}`);
}
console.log(`${`total held (N=${n}, K=${k}, ${violating} pools violating)`.padEnd(48)} ${perPool(total).padStart(12)}`);
pools.length = 0;
