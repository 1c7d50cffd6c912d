/**
 * `npm run bench -- --paired`: two servers measured at the same time, each driven by its
 * own load generator at 16 connections, and the ratio of their CPU µs per request taken
 * within each run. A neighbour that slows the machine slows both alike, so the ratio
 * sees differences of a few percent that the full run's one-server-at-a-time figures,
 * which move by a third between rounds here, cannot. An A/A pair (the express floor
 * twice) shows what the method itself scatters.
 *
 * The pairs split a review's cost against the express floor: the answer floor
 * (answer-floor.ts: the webhook's own answer and log line, no review) ÷ the floor is what
 * answering costs, the webhook ÷ the answer floor what deciding costs. Results go to
 * bench/results/paired.json and the terminal.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchBodies, type BenchBody } from './bodies.js';
import { post, type LoadGenerator } from './harness.js';
import type { ThroughputResult } from './loadgen.js';
import { median } from './results.js';
import { nodeServerSpecs, startBenchServer, type BenchServer, type ServerSpec } from './servers.js';

type PairedId = 'webhook' | 'floor' | 'answer-floor';

/** One pair: `other` measured against `base` with `body`. */
export interface Pair {
  body: string;
  base: PairedId;
  other: PairedId;
}

/** One simultaneous run of a pair. */
export interface PairedRun {
  cpuUsPerRequest: { base: number; other: number };
  requestsPerS: { base: number; other: number };
}

export interface PairedResult extends Pair {
  runs: PairedRun[];
  /** Median over the runs of other ÷ base CPU µs per request, and its range. */
  cpuRatio: number;
  cpuRatioRange: [number, number];
  /** Median over the runs of other ÷ base req/s. */
  requestsPerSRatio: number;
}

export const PAIRS: Pair[] = [
  { body: 'a', base: 'floor', other: 'floor' },
  { body: 'a', base: 'floor', other: 'answer-floor' },
  { body: 'a', base: 'answer-floor', other: 'webhook' },
  { body: 'a', base: 'floor', other: 'webhook' },
  { body: 'b', base: 'floor', other: 'answer-floor' },
  { body: 'b', base: 'answer-floor', other: 'webhook' },
  { body: 'b', base: 'floor', other: 'webhook' },
];

const CONNECTIONS = 16;
const PLAN = {
  full: { runs: 6, warmupS: 1, measureS: 4 },
  quick: { runs: 1, warmupS: 0.2, measureS: 0.5 },
};

const TITLES: Record<PairedId, string> = { webhook: 'this webhook', floor: 'express floor', 'answer-floor': 'answer floor' };

/** Medians and range of the per-run ratios other ÷ base. */
export function summarize(pair: Pair, runs: PairedRun[]): PairedResult {
  if (runs.length === 0) throw new Error('summarize needs at least one run');
  const cpu = runs.map((r) => r.cpuUsPerRequest.other / r.cpuUsPerRequest.base);
  const rps = runs.map((r) => r.requestsPerS.other / r.requestsPerS.base);
  return { ...pair, runs, cpuRatio: median(cpu), cpuRatioRange: [Math.min(...cpu), Math.max(...cpu)], requestsPerSRatio: median(rps) };
}

/** The Markdown table of `results`: one row per pair. */
export function pairedTable(results: PairedResult[]): string {
  const rows = results.map((r) => {
    const cpuBase = median(r.runs.map((x) => x.cpuUsPerRequest.base));
    const cpuOther = median(r.runs.map((x) => x.cpuUsPerRequest.other));
    const [lo, hi] = r.cpuRatioRange;
    return `| (${r.body}) | ${TITLES[r.other]} ÷ ${TITLES[r.base]} | ${cpuOther.toPrecision(3)} / ${cpuBase.toPrecision(3)} | ${r.cpuRatio.toFixed(3)}× (${lo.toFixed(2)}–${hi.toFixed(2)}) | ${r.requestsPerSRatio.toFixed(3)}× |`;
  });
  return [
    '| Body | Pair | CPU µs/request, median (both at once) | CPU ratio, median (range) | req/s ratio, median |',
    '|---|---|--:|--:|--:|',
    ...rows,
  ].join('\n');
}

export interface PairedOptions {
  repoDir: string;
  certDir: string;
  ca: Buffer;
  logDir: string;
  resultsDir: string;
  quick: boolean;
  loaders: [LoadGenerator, LoadGenerator];
}

/** The webhook's answer to `body`, asked of a webhook started for it, to file. */
async function webhookAnswerFile(spec: ServerSpec, body: BenchBody, options: PairedOptions): Promise<string> {
  const server = await startBenchServer(spec, options.logDir, options.ca);
  try {
    const { status, review } = await post(server.port, body, options.ca);
    if (status !== 200 || review?.response?.uid !== body.uid) throw new Error(`this webhook answered body (${body.id}) with HTTP ${status}`);
    const file = join(options.logDir, `answer-${body.id}.json`);
    writeFileSync(file, JSON.stringify(review));
    return file;
  } finally {
    await server.stop();
  }
}

/** Runs every pair of {@link PAIRS}; prints and writes the table. */
export async function measurePaired(options: PairedOptions): Promise<PairedResult[]> {
  const plan = options.quick ? PLAN.quick : PLAN.full;
  const node = nodeServerSpecs(options.repoDir, options.certDir);
  const webhook = node.find((s) => s.id === 'webhook')!;
  const floor = node.find((s) => s.id === 'floor')!;
  const bodies = new Map(benchBodies().map((b) => [b.id, b]));
  const answerFiles = new Map<string, string>();
  const spec = async (id: PairedId, body: BenchBody, slot: string): Promise<ServerSpec<string>> => {
    if (id === 'webhook') return { ...webhook, id: `webhook-${slot}` };
    if (id === 'floor') return { ...floor, id: `floor-${slot}` };
    if (!answerFiles.has(body.id)) answerFiles.set(body.id, await webhookAnswerFile(webhook, body, options));
    const args = [join(options.repoDir, 'dist-bench/bench/answer-floor.js'), options.certDir, answerFiles.get(body.id)!];
    return { id: `answer-floor-${slot}`, title: TITLES['answer-floor'], command: process.execPath, args, allowsAll: false };
  };
  const results: PairedResult[] = [];
  for (const pair of PAIRS) {
    const body = bodies.get(pair.body)!;
    const runs: PairedRun[] = [];
    for (let i = 0; i < plan.runs; i++) {
      const servers = await Promise.all([spec(pair.base, body, 'base'), spec(pair.other, body, 'other')].map(async (s) => startBenchServer(await s, options.logDir, options.ca)));
      try {
        // Each load generator drives the base in one run and the other server in the next.
        const [first, second] = i % 2 === 0 ? options.loaders : [options.loaders[1], options.loaders[0]];
        const both = (durationS: number) =>
          Promise.all([first, second].map((loader, k) => loader.run<ThroughputResult>({ op: 'throughput', port: servers[k]!.port, bodyId: body.id, connections: CONNECTIONS, durationS })));
        await both(plan.warmupS);
        const before = servers.map((s) => s.cpuSeconds());
        const [base, other] = await both(plan.measureS);
        const cpu = servers.map((s, k) => ((s.cpuSeconds() - before[k]!) * 1e6) / [base!, other!][k]!.requests);
        for (const [k, r] of [base!, other!].entries()) if (r.failures > 0) throw new Error(`${servers[k]!.spec.title}: ${r.failures} failed requests for body (${body.id})`);
        runs.push({ cpuUsPerRequest: { base: cpu[0]!, other: cpu[1]! }, requestsPerS: { base: base!.requestsPerS, other: other!.requestsPerS } });
      } finally {
        await Promise.all(servers.map((s: BenchServer<string>) => s.stop()));
      }
      await sleep(200);
    }
    results.push(summarize(pair, runs));
  }
  const table = pairedTable(results);
  if (!options.quick) writeFileSync(join(options.resultsDir, 'paired.json'), JSON.stringify({ date: new Date().toISOString(), connections: CONNECTIONS, ...plan, results }, null, 2) + '\n');
  console.log(table);
  return results;
}
