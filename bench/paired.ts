/**
 * `npm run bench -- --paired`: two servers measured at the same time, each driven by its
 * own load generator at 16 connections, and the ratio of their CPU µs per request taken
 * within each run. A neighbour that slows the machine slows both alike, so the ratio
 * sees differences of a few percent that the full run's one-server-at-a-time figures,
 * which move by a third between rounds here, cannot. An A/A pair (the express floor
 * twice) shows what the method itself scatters.
 *
 * The target is the webhook against the express floor. The other pairs split a review's
 * cost over the Node ceiling (bare `node:https`, as the webhook's reviews skip express): the
 * answer floor (answer-floor.ts: the webhook's own answer and log line, no review) ÷ the
 * ceiling is what answering costs, the webhook ÷ the answer floor what deciding and the
 * webhook's own bookkeeping cost. Every server runs with `npm start`'s Node flags. Results go to
 * bench/results/paired.json and the terminal.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { benchBodies, type BenchBody } from './bodies.js';
import { checkAnswer, type LoadGenerator } from './harness.js';
import type { ThroughputResult } from './loadgen.js';
import { median } from './results.js';
import { nodeServerSpecs, startBenchServer, startNodeFlags, type BenchServer, type ServerSpec } from './servers.js';

type PairedId = 'webhook' | 'floor' | 'ceiling' | 'answer-floor';

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
  { body: 'a', base: 'ceiling', other: 'answer-floor' },
  { body: 'a', base: 'answer-floor', other: 'webhook' },
  { body: 'a', base: 'floor', other: 'webhook' },
  { body: 'b', base: 'ceiling', other: 'answer-floor' },
  { body: 'b', base: 'answer-floor', other: 'webhook' },
  { body: 'b', base: 'floor', other: 'webhook' },
];

const CONNECTIONS = 16;
const PLAN = {
  full: { runs: 6, warmupS: 1, measureS: 4 },
  quick: { runs: 1, warmupS: 0.2, measureS: 0.5 },
};

const TITLES: Record<PairedId, string> = { webhook: 'this webhook', floor: 'express floor', ceiling: 'Node ceiling', 'answer-floor': 'answer floor' };

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
  return ['| Body | Pair | CPU µs/request, median (both at once) | CPU ratio, median (range) | req/s ratio, median |', '|---|---|--:|--:|--:|', ...rows].join(
    '\n',
  );
}

export interface PairedOptions {
  repoDir: string;
  certDir: string;
  ca: Buffer;
  logDir: string;
  resultsDir: string;
  quick: boolean;
  loaders: [LoadGenerator, LoadGenerator];
  /** The 1-minute load average before the run, for the record. */
  loadBefore: number;
}

/** The webhook's answer to `body`, checked and written to a file for the answer floor. */
async function webhookAnswerFile(spec: ServerSpec, body: BenchBody, options: PairedOptions): Promise<string> {
  const server = await startBenchServer(spec, options.logDir, options.ca);
  try {
    const { review } = await checkAnswer(server, body, options.ca);
    const file = join(options.logDir, `answer-${body.id}.json`);
    writeFileSync(file, JSON.stringify(review));
    return file;
  } finally {
    await server.stop();
  }
}

/**
 * Starts both servers of a run (both, or neither: one that started is stopped when the
 * other fails) and checks that each answers `body` as it should.
 */
async function startPair(specs: ServerSpec<string>[], body: BenchBody, options: PairedOptions): Promise<BenchServer<string>[]> {
  const started = await Promise.allSettled(specs.map((spec) => startBenchServer(spec, options.logDir, options.ca)));
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    for (const server of servers) await checkAnswer(server, body, options.ca);
    return servers;
  } catch (e) {
    await Promise.all(servers.map((server) => server.stop()));
    throw e;
  }
}

/**
 * Runs every pair of {@link PAIRS}; prints the table and (not with `quick`) writes it to
 * paired.json. Every server runs with `npm start`'s Node flags, so that a ratio is the
 * code's and not the flags'.
 *
 * @throws Error when a server does not start, answers a body wrongly or fails a request.
 */
export async function measurePaired(options: PairedOptions): Promise<PairedResult[]> {
  const plan = options.quick ? PLAN.quick : PLAN.full;
  const [webhook, floor, ceiling] = nodeServerSpecs(options.repoDir, options.certDir);
  const flags = startNodeFlags(options.repoDir);
  const bodies = new Map(benchBodies().map((b) => [b.id, b]));
  const answerFiles = new Map<string, string>();
  const spec = async (id: PairedId, body: BenchBody, slot: 'base' | 'other'): Promise<ServerSpec<string>> => {
    if (id === 'webhook') return { ...webhook!, id: `webhook-${slot}`, title: `${TITLES[id]} (${slot})` };
    if (id === 'floor' || id === 'ceiling') {
      const reference = id === 'floor' ? floor! : ceiling!;
      return { ...reference, id: `${id}-${slot}`, title: `${TITLES[id]} (${slot})`, args: [...flags, ...reference.args] };
    }
    if (!answerFiles.has(body.id)) answerFiles.set(body.id, await webhookAnswerFile(webhook!, body, options));
    const args = [...flags, join(options.repoDir, 'dist-bench/bench/answer-floor.js'), options.certDir, answerFiles.get(body.id)!];
    return { id: `answer-floor-${slot}`, title: `${TITLES[id]} (${slot})`, command: process.execPath, args, allowsAll: false };
  };
  const results: PairedResult[] = [];
  for (const pair of PAIRS) {
    const body = bodies.get(pair.body)!;
    const runs: PairedRun[] = [];
    for (let i = 0; i < plan.runs; i++) {
      const servers = await startPair([await spec(pair.base, body, 'base'), await spec(pair.other, body, 'other')], body, options);
      try {
        // Each load generator drives the base in one run and the other server in the next.
        const loaders = i % 2 === 0 ? options.loaders : [options.loaders[1], options.loaders[0]];
        const both = (durationS: number) =>
          Promise.all(
            servers.map((s, k) => loaders[k]!.run<ThroughputResult>({ op: 'throughput', port: s.port, bodyId: body.id, connections: CONNECTIONS, durationS })),
          );
        await both(plan.warmupS);
        const before = servers.map((s) => s.cpuSeconds());
        const loads = await both(plan.measureS);
        const cpu = servers.map((s, k) => ((s.cpuSeconds() - before[k]!) * 1e6) / loads[k]!.requests);
        loads.forEach((r, k) => {
          if (r.failures > 0) throw new Error(`${servers[k]!.spec.title}: ${r.failures} failed requests for body (${body.id})`);
        });
        runs.push({ cpuUsPerRequest: { base: cpu[0]!, other: cpu[1]! }, requestsPerS: { base: loads[0]!.requestsPerS, other: loads[1]!.requestsPerS } });
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
    results.push(summarize(pair, runs));
  }
  if (!options.quick) {
    const meta = {
      date: new Date().toISOString(),
      node: process.version,
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      loadBefore: options.loadBefore,
      loadAfter: loadavg()[0]!,
    };
    writeFileSync(
      join(options.resultsDir, 'paired.json'),
      `${JSON.stringify({ meta, connections: CONNECTIONS, ...plan, nodeFlags: flags, results }, null, 2)}\n`,
    );
  }
  console.log(pairedTable(results));
  return results;
}
