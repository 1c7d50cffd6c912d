/**
 * `npm run bench` (first part): the pool judgement at cluster scale.
 *
 * - `audit` of 10 000 SpiderIPPools, 1 000 of them dual-stack pairs (2 000 pools), IaaS
 *   pools with realistic ranges: loading the state and judging every pool, median of 5.
 * - The pool cache's violation upkeep per watch event, with 1 000 and with 10 000 pools
 *   stored: time and pools re-judged per event. O(pairs touched) means both stay the same
 *   as the pool count grows tenfold.
 *
 * Prints a table and writes bench/results/pools.json (not with `--quick`, the smoke run:
 * run.ts starts this first). Timing is reported, never asserted
 * (a unit test asserts the re-judgement count: test/store/pool-violations.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { KubeObject } from '../src/kubernetes/build.js';
import { PoolViolationTracker } from '../src/store/pool-violations.js';
import { auditState } from '../src/cli/audit.js';
import { PoolIndex } from '../src/store/pool-index.js';
import { ClusterState } from '../src/store/state.js';

const REPO_DIR = new URL('../../', import.meta.url).pathname;

function pool(name: string, i: number, { version = 4, pair }: { version?: 4 | 6; pair?: string } = {}): KubeObject {
  const octet2 = Math.floor(i / 250) % 250;
  const octet3 = i % 250;
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: {
      name,
      annotations: {
        'ipam.spidernet.io/iaas-provider': 'cloud',
        'ipam.spidernet.io/parent-nic': i % 97 === 0 ? 'eth0,eth1' : 'eth0',
        ...(pair ? { 'ipam.spidernet.io/pair-pool': pair } : {}),
      },
    },
    spec: {
      ipVersion: version,
      nodeName: [`worker-${i % 500}`],
      podAffinity: { matchLabels: { app: `app-${i}` } },
      ips: version === 4 ? [`10.${octet2}.${octet3}.10-10.${octet2}.${octet3}.200`] : [`fd00:${octet2}:${octet3}::10-fd00:${octet2}:${octet3}::ff`],
      excludeIPs: version === 4 ? [`10.${octet2}.${octet3}.100`] : [],
    },
  };
}

/** `total` pools, `pairs` of them dual-stack pairs (two pools each). */
function pools(total: number, pairs: number): KubeObject[] {
  const out: KubeObject[] = [];
  for (let i = 0; i < pairs; i++) {
    out.push(pool(`pair-${i}-v4`, i, { pair: `pair-${i}-v6` }));
    out.push(pool(`pair-${i}-v6`, i, { version: 6 }));
  }
  for (let i = out.length; i < total; i++) out.push(pool(`single-${i}`, i));
  return out;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function benchAudit(objects: KubeObject[]): { ms: number; violations: number } {
  const times: number[] = [];
  let violations = 0;
  for (let run = 0; run < 5; run++) {
    const start = performance.now();
    const report = auditState(ClusterState.of(objects).state);
    times.push(performance.now() - start);
    violations = report.violations.length;
  }
  return { ms: median(times), violations };
}

/**
 * Upkeep per event: updates spread over paired and single pools, each a real change (the
 * pool's stored NIC flips: an update that changes nothing the rules read re-judges nothing).
 */
function benchUpkeep(total: number): { usPerEvent: number; judgementsPerEvent: number } {
  const objects = pools(total, Math.floor(total / 10));
  const index = new PoolIndex();
  const tracker = new PoolViolationTracker(index);
  index.replaceAll(objects);
  const events = 20_000;
  const before = tracker.judgements;
  const start = performance.now();
  for (let e = 0; e < events; e++) {
    const at = (e * 7919) % objects.length;
    const object = objects[at]!;
    const metadata = object.metadata as { annotations: Record<string, string> };
    const nic = metadata.annotations['ipam.spidernet.io/parent-nic'] === 'eth1' ? 'eth0' : 'eth1';
    objects[at] = { ...object, metadata: { ...metadata, annotations: { ...metadata.annotations, 'ipam.spidernet.io/parent-nic': nic } } };
    index.upsert(objects[at]);
  }
  const us = ((performance.now() - start) * 1000) / events;
  return { usPerEvent: us, judgementsPerEvent: (tracker.judgements - before) / events };
}

const audit = benchAudit(pools(10_000, 1_000));
const small = benchUpkeep(1_000);
const large = benchUpkeep(10_000);
const results = {
  date: new Date().toISOString(),
  node: process.version,
  audit10000Pools1000Pairs: { medianMs: Number(audit.ms.toFixed(1)), violations: audit.violations },
  upkeepPerEvent: {
    pools1000: { us: Number(small.usPerEvent.toFixed(2)), judgements: small.judgementsPerEvent },
    pools10000: { us: Number(large.usPerEvent.toFixed(2)), judgements: large.judgementsPerEvent },
    timeRatio10000To1000: Number((large.usPerEvent / small.usPerEvent).toFixed(2)),
  },
};
if (!process.argv.includes('--quick')) writeFileSync(join(REPO_DIR, 'bench/results/pools.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('pool judgement at scale (bench/pools.ts)');
console.log(`  audit of 10 000 pools (1 000 pairs): ${results.audit10000Pools1000Pairs.medianMs} ms (median of 5; ${audit.violations} violations)`);
console.log(`  cache upkeep per pool event, 1 000 pools:  ${results.upkeepPerEvent.pools1000.us} µs, ${small.judgementsPerEvent} pools re-judged`);
console.log(
  `  cache upkeep per pool event, 10 000 pools: ${results.upkeepPerEvent.pools10000.us} µs, ${large.judgementsPerEvent} pools re-judged (time ×${results.upkeepPerEvent.timeRatio10000To1000} for ×10 pools)`,
);
