/**
 * `npm run bench -- --admission [--quick]`: the latency the API server adds to a
 * SpiderIPPool UPDATE with no guard, the ValidatingAdmissionPolicy only (in-process CEL),
 * the webhook only (an HTTPS call to the project's server on 127.0.0.1) and both, side by
 * side on one kube-apiserver (test/e2e/apiserver, built by `npm run test:e2e`'s pretest;
 * Spiderpool's own CRD from ../shared/spiderpool/crds/).
 *
 * Each round measures every guard setting in a rotating order, with two writes: an
 * allowed UPDATE (an unrelated annotation changed, so every rule runs and passes) and a
 * refused one (`spec.nodeName` removed). Each is a server-side dry run (`dryRun=All`:
 * admission runs, nothing is stored) sent at a fixed rate over keep-alive HTTPS, timed
 * from when it was due (no coordinated omission). Reported: p50/p99 per setting (the
 * median over rounds), what each guard adds to the no-guard p50, and the ratio
 * webhook / policy of that added latency. Written to bench/results/admission.json (not
 * with --quick).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { apiClient, type ApiClient } from '../test/e2e/cluster/api-client.js';
import { clusterGuards, POOLS_PATH, type GuardState } from '../test/e2e/cluster/guards.js';
import { startCluster } from '../test/e2e/cluster/harness.js';
import { median, quantile } from './results.js';

const PLAN = {
  full: { rounds: 3, ratePerS: 40, durationS: 6, warmupS: 1 },
  quick: { rounds: 1, ratePerS: 20, durationS: 1, warmupS: 0.3 },
};

const SETTINGS = {
  none: { policy: false, webhook: false },
  policy: { policy: true, webhook: false },
  webhook: { policy: false, webhook: true },
  both: { policy: true, webhook: true },
} satisfies Record<string, GuardState>;
type Setting = keyof typeof SETTINGS;

const NAME = 'bench-node-pool';
const nodePool = (note: string, nodeName: string[] | undefined, resourceVersion?: string) => ({
  apiVersion: 'spiderpool.spidernet.io/v2beta1',
  kind: 'SpiderIPPool',
  metadata: {
    name: NAME,
    ...(resourceVersion ? { resourceVersion } : {}),
    annotations: { 'ipam.spidernet.io/iaas-provider': 'cloud', 'ipam.spidernet.io/parent-nic': 'eth0', 'example.com/note': note },
  },
  spec: { subnet: '10.6.0.0/16', ips: ['10.6.0.10-10.6.0.20'], ...(nodeName ? { nodeName } : {}) },
});
const WRITES = {
  allowed: { title: 'allowed UPDATE (an unrelated annotation changed)', body: (rv: string) => nodePool('changed', ['w1'], rv), status: 200 },
  refused: { title: 'refused UPDATE (spec.nodeName removed)', body: (rv: string) => nodePool('stored', undefined, rv), status: 422 },
};
type Write = keyof typeof WRITES;

export interface AdmissionResults {
  date: string;
  loadAverage: [number, number];
  plan: (typeof PLAN)['full'];
  /** Per write and setting: p50 and p99 in ms, the median over rounds. */
  latency: Record<Write, Record<Setting, { p50Ms: number; p99Ms: number }>>;
}

/** Dry runs of `write` at `ratePerS` for `durationS`; latencies (ms, ascending) from when each was due. @throws on an unexpected status. */
async function paced(api: ApiClient, write: Write, resourceVersion: string, status: number, ratePerS: number, durationS: number): Promise<number[]> {
  const body = WRITES[write].body(resourceVersion);
  const total = Math.max(1, Math.round(ratePerS * durationS));
  const latencies: number[] = [];
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / ratePerS;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      api.request('PUT', `${POOLS_PATH}/${NAME}?dryRun=All`, body).then((answer) => {
        if (answer.status !== status) throw new Error(`${write}: status ${answer.status}, expected ${status}: ${JSON.stringify(answer.body)}`);
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(pending);
  return latencies.sort((a, b) => a - b);
}

/** Runs the admission benchmark; prints the table, and writes `resultsDir`/admission.json unless `quick`. */
export async function measureAdmission({ quick, resultsDir }: { quick: boolean; resultsDir: string }): Promise<void> {
  const plan = quick ? PLAN.quick : PLAN.full;
  const loadBefore = loadavg()[0]!;
  const cluster = await startCluster();
  const api = await apiClient(cluster.apiServer.kubeconfig, 64);
  try {
    const stored = await api.request('POST', POOLS_PATH, nodePool('stored', ['w1']));
    if (stored.status !== 201) throw new Error(`storing ${NAME}: ${stored.status} ${JSON.stringify(stored.body)}`);
    const version: string = stored.body.metadata.resourceVersion;
    const guards = await clusterGuards(cluster, api);
    const settings = Object.keys(SETTINGS) as Setting[];
    const runs: Record<Write, Record<Setting, { p50Ms: number[]; p99Ms: number[] }>> = { allowed: {} as never, refused: {} as never };
    for (const write of Object.keys(WRITES) as Write[]) for (const s of settings) runs[write][s] = { p50Ms: [], p99Ms: [] };
    for (let round = 0; round < plan.rounds; round++) {
      for (const setting of [...settings.slice(round % settings.length), ...settings.slice(0, round % settings.length)]) {
        await guards.set(SETTINGS[setting]);
        for (const write of Object.keys(WRITES) as Write[]) {
          // Without a guard the refused write is allowed (a dry run: still nothing is stored).
          const status = setting === 'none' ? 200 : WRITES[write].status;
          await paced(api, write, version, status, plan.ratePerS, plan.warmupS);
          const latencies = await paced(api, write, version, status, plan.ratePerS, plan.durationS);
          runs[write][setting].p50Ms.push(quantile(latencies, 0.5));
          runs[write][setting].p99Ms.push(quantile(latencies, 0.99));
        }
      }
    }
    const latency = Object.fromEntries(
      (Object.keys(WRITES) as Write[]).map((w) => [
        w,
        Object.fromEntries(settings.map((s) => [s, { p50Ms: median(runs[w][s].p50Ms), p99Ms: median(runs[w][s].p99Ms) }])),
      ]),
    ) as AdmissionResults['latency'];
    const results: AdmissionResults = { date: new Date().toISOString(), loadAverage: [loadBefore, loadavg()[0]!], plan, latency };
    console.log(admissionTable(results));
    if (!quick) {
      const file = join(resultsDir, 'admission.json');
      writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
      console.log(`\nWritten to ${file}.`);
    }
  } finally {
    api.close();
    await cluster.stop();
  }
}

const ms = (v: number) => v.toFixed(2);

/** The Markdown table of `results`: p50/p99 per setting, the p50 each guard adds, and webhook / policy. */
export function admissionTable(results: AdmissionResults): string {
  const rows = [
    `${results.plan.rounds} round(s) × ${results.plan.durationS} s at ${results.plan.ratePerS}/s per write and setting; load average ${results.loadAverage.map((l) => l.toFixed(1)).join(' → ')}`,
    '',
    '| write | no guard p50 / p99 ms | policy only | webhook only | both | added p50: policy / webhook / both | webhook ÷ policy (added p50) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [write, { title }] of Object.entries(WRITES) as [Write, (typeof WRITES)[Write]][]) {
    const l = results.latency[write];
    const added = (s: Setting) => l[s].p50Ms - l.none.p50Ms;
    const cell = (s: Setting) => `${ms(l[s].p50Ms)} / ${ms(l[s].p99Ms)}`;
    rows.push(
      `| ${title} | ${cell('none')} | ${cell('policy')} | ${cell('webhook')} | ${cell('both')} | ${ms(added('policy'))} / ${ms(added('webhook'))} / ${ms(added('both'))} | ${(added('webhook') / Math.max(added('policy'), 0.01)).toFixed(1)}× |`,
    );
  }
  return rows.join('\n');
}
