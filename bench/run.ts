/**
 * `npm run bench`: this webhook, the express floor (one bare express route), the bare
 * `node:https` ceiling and the controller-runtime Go reference, driven side by side over
 * HTTPS keep-alive on 127.0.0.1 by a separate load-generator process (loadgen.ts), with
 * the bodies of bodies.ts.
 *
 * Each round starts the four servers afresh (start-to-ready is measured then), checks
 * that every server answers every body correctly, and measures every figure on all four
 * in rotating order (A B C D, B C D A, C D A B, ...) so that a noisy neighbour hurts all
 * alike; ratios are taken within a round.
 *
 * Flags: `--quick` (seconds-long smoke run: one short round; fails only on a wrong
 * answer, never on timing), `--compare` (against bench/results/baseline.json as it was
 * before this run; exit 1 when a figure is more than 10% worse), `--save-baseline`,
 * `--rounds N`, `--profile` (see profile.ts), `--paired` (see paired.ts; with `--quick`, one
 * short run of each pair, nothing written), `--admission` (see admission.ts: the latency
 * the API server adds with the ValidatingAdmissionPolicy and the webhook; needs the e2e
 * API server built), `--scale` (the pool cache at Spiderpool's scale against the e2e
 * kube-apiserver, beside the Go reference's cache: see scale.ts), `--through-apiserver` (the
 * latency this webhook and the Go reference, registered alike, add to an allowed UPDATE through
 * the e2e kube-apiserver: see through-apiserver.ts), `--isolation` (the refusing
 * webhooks' latency under warn-only load, worker against in-process: see isolation.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchBodies, nearLimitBody } from './bodies.js';
import { checkAnswer, makeCertificates, post, startLoadGenerator } from './harness.js';
import type { LoadJob, PacedResult, ThroughputResult } from './loadgen.js';
import type { MicroResult } from './micro.js';
import { measureAdmission } from './admission.js';
import { measurePaired } from './paired.js';
import { profileWebhook } from './profile.js';
import { runScale } from './scale.js';
import { measureThroughApiServer } from './through-apiserver.js';
import { compare, comparisonText, resultsTable, targetsTable } from './report.js';
import { CONNECTIONS, CPU_CONNECTIONS, type BenchResults, type BodyResults, type PerServer } from './results.js';
import { serverSpecs, startBenchServer, type BenchServer, type ServerId } from './servers.js';

const REPO_DIR = new URL('../../', import.meta.url).pathname;
const RESULTS_DIR = join(REPO_DIR, 'bench/results');
const GO_DIR = join(REPO_DIR, 'bench/go-reference');
const GO_BINARY = join(GO_DIR, 'go-reference');

/** How long each measurement lasts; the full run takes a few minutes, the quick one seconds. */
const PLAN = {
  // Five rounds, so that the median is a middle round and two disturbed rounds do not move it
  // (with three, one round of a neighbour's build moved a ratio by a third on these shared machines).
  full: { rounds: 5, throughputS: 1.5, warmupS: 0.5, latencyS: 2, rate: 500, rateLarge: 25, settleMs: 1000, microMs: 500 },
  quick: { rounds: 1, throughputS: 0.3, warmupS: 0, latencyS: 0.6, rate: 200, rateLarge: 10, settleMs: 200, microMs: 100 },
};
type Plan = (typeof PLAN)['full'];

/** Builds the Go reference unless a binary built from the same sources is there. */
function buildGoReference(): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(GO_DIR, file)));
  const digest = hash.digest('hex');
  const stamp = `${GO_BINARY}.sha256`;
  if (existsSync(GO_BINARY) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return goVersion();
  console.error('building the Go reference (first time: downloads controller-runtime through the module proxy)...');
  execFileSync('go', ['build', '-trimpath', '-o', GO_BINARY, '.'], { cwd: GO_DIR, stdio: 'inherit' });
  writeFileSync(stamp, digest);
  return goVersion();
}

function goVersion(): string {
  return execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).trim();
}

/** `items` rotated left by `n`: the order the servers take turns in. */
function rotate<T>(items: readonly T[], n: number): T[] {
  const k = n % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

const perServer = (): PerServer => ({ webhook: [], floor: [], ceiling: [], go: [] });

async function main(): Promise<void> {
  // The cache at scale is its own run (scale.ts), with its own flags.
  // The refusing path under warn-only load is its own run too (isolation.ts).
  if (process.argv.includes('--isolation')) {
    execFileSync(process.execPath, [join(REPO_DIR, 'dist-bench/bench/isolation.js'), ...(process.argv.includes('--quick') ? ['--quick'] : [])], {
      stdio: 'inherit',
    });
    return;
  }
  if (process.argv.includes('--scale')) {
    buildGoReference();
    return runScale(
      process.argv.slice(2).filter((a) => a !== '--scale'),
      GO_BINARY,
    );
  }
  const { values: flags } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      compare: { type: 'boolean', default: false },
      'save-baseline': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      profile: { type: 'boolean', default: false },
      paired: { type: 'boolean', default: false },
      admission: { type: 'boolean', default: false },
      'through-apiserver': { type: 'boolean', default: false },
    },
  });
  if (flags.admission) {
    await measureAdmission({ quick: flags.quick, resultsDir: RESULTS_DIR });
    return;
  }
  if (flags['through-apiserver']) {
    const go = buildGoReference();
    await measureThroughApiServer({ repoDir: REPO_DIR, goBinary: GO_BINARY, go, quick: flags.quick, resultsDir: RESULTS_DIR });
    return;
  }
  if (flags.rounds !== undefined && !/^[1-9][0-9]*$/.test(flags.rounds)) throw new Error(`--rounds must be a positive whole number, not ${flags.rounds}`);
  const mode = flags.profile ? '--profile' : flags.paired ? '--paired' : undefined;
  const fullRunOnly = (['compare', 'save-baseline', 'rounds'] as const).filter((f) => flags[f] !== undefined && flags[f] !== false);
  if (flags.profile && flags.paired) throw new Error('--profile and --paired are separate runs: give one');
  if (mode !== undefined && fullRunOnly.length > 0) throw new Error(`${fullRunOnly.map((f) => `--${f}`).join(', ')} belong to the full run, not to ${mode}`);
  const loadBefore = loadavg()[0]!;
  const plan: Plan = flags.quick ? PLAN.quick : { ...PLAN.full, rounds: flags.rounds ? Number(flags.rounds) : PLAN.full.rounds };
  const work = mkdtempSync(join(tmpdir(), 'webhook-bench-'));
  const certDir = join(work, 'certs');
  const ca = makeCertificates(REPO_DIR, certDir);
  const loader = startLoadGenerator(REPO_DIR, certDir);
  try {
    if (flags.profile) {
      await profileWebhook({ repoDir: REPO_DIR, certDir, ca, logDir: work, resultsDir: RESULTS_DIR, runLoad: loader.run });
      return;
    }
    if (flags.paired) {
      const second = startLoadGenerator(REPO_DIR, certDir);
      try {
        await measurePaired({
          repoDir: REPO_DIR,
          certDir,
          ca,
          logDir: work,
          resultsDir: RESULTS_DIR,
          quick: flags.quick,
          loaders: [loader, second],
          loadBefore,
        });
      } finally {
        second.child.kill();
      }
      return;
    }
    // First part: the pool judgement at scale; with --quick it writes no result file, so the
    // smoke run (CI) leaves the committed bench/results/pools.json alone.
    execFileSync(process.execPath, [join(REPO_DIR, 'dist-bench/bench/pools.js'), ...(flags.quick ? ['--quick'] : [])], { stdio: 'inherit' });
    // The smoke run covers the isolation bench's worker mode too (seconds; only a wrong answer fails it).
    if (flags.quick) execFileSync(process.execPath, [join(REPO_DIR, 'dist-bench/bench/isolation.js'), '--quick'], { stdio: 'inherit' });
    const go = buildGoReference();
    // Read first: --save-baseline replaces it, and the targets and --compare judge against the old one.
    const baselineFile = join(RESULTS_DIR, 'baseline.json');
    const baseline = existsSync(baselineFile) ? (JSON.parse(readFileSync(baselineFile, 'utf8')) as BenchResults) : undefined;
    const results = await measure(plan, flags.quick, go, work, certDir, ca, loader.run);
    const file = join(RESULTS_DIR, flags.quick ? 'quick.json' : 'latest.json');
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    if (flags['save-baseline']) writeFileSync(baselineFile, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`${resultsTable(results)}\n\n${targetsTable(results, baseline)}\n\nWritten to ${file}.`);
    if (flags.compare) {
      if (baseline === undefined) throw new Error(`--compare needs ${baselineFile}`);
      const comparison = compare(results, baseline);
      console.log(`\n${comparisonText(comparison)}`);
      if (comparison.regressions.length > 0) process.exitCode = 1;
    }
  } finally {
    loader.child.kill();
    rmSync(work, { recursive: true, force: true });
  }
}

async function measure(
  plan: Plan,
  quick: boolean,
  go: string,
  work: string,
  certDir: string,
  ca: Buffer,
  runLoad: <R>(job: LoadJob) => Promise<R>,
): Promise<BenchResults> {
  const bodies = benchBodies();
  const specs = serverSpecs(REPO_DIR, certDir, GO_BINARY);
  const loadBefore = loadavg()[0]!;
  const bodyResults: BodyResults[] = bodies.map((b) => ({
    id: b.id,
    title: b.title,
    bytes: Buffer.byteLength(b.json),
    requestsPerS: Object.fromEntries(CONNECTIONS.map((c) => [c, perServer()])),
    cpuUsPerRequest: perServer(),
    ratePerS: b.id === 'd' ? plan.rateLarge : plan.rate,
    p50Ms: perServer(),
    p99Ms: perServer(),
    maxMs: perServer(),
  }));
  const memory = { idleMiB: perServer(), peakSmallMiB: perServer(), peakMiB: perServer() };
  const readyMs = perServer();
  const limit = nearLimitBody();
  const limitProbe = { bytes: Buffer.byteLength(limit.json), status: { webhook: 0, floor: 0, ceiling: 0, go: 0 } as Record<ServerId, number> };

  for (let round = 0; round < plan.rounds; round++) {
    const servers: BenchServer[] = [];
    try {
      for (const spec of rotate(specs, round)) {
        const server = await startBenchServer(spec, work, ca);
        servers.push(server);
        readyMs[spec.id].push(server.readyMs);
      }
      await sleep(plan.settleMs);
      for (const s of servers) memory.idleMiB[s.spec.id].push(s.memory().rssMiB);
      for (const s of servers) for (const body of bodies) await checkAnswer(s, body, ca);
      if (round === 0) for (const s of servers) limitProbe.status[s.spec.id] = (await post(s.port, limit, ca)).status;

      let turn = round;
      for (const [i, body] of bodies.entries()) {
        const out = bodyResults[i]!;
        for (const connections of CONNECTIONS) {
          for (const s of rotate(servers, turn++)) {
            const job = { op: 'throughput', port: s.port, bodyId: body.id, connections } as const;
            if (plan.warmupS > 0) await runLoad<ThroughputResult>({ ...job, durationS: plan.warmupS });
            const cpuBefore = s.cpuSeconds();
            const r = await runLoad<ThroughputResult>({ ...job, durationS: plan.throughputS });
            const cpuS = s.cpuSeconds() - cpuBefore;
            if (r.failures > 0) throw new Error(`${s.spec.title}: ${r.failures} failed requests for body (${body.id}) at ${connections} connections`);
            out.requestsPerS[connections]![s.spec.id].push(r.requestsPerS);
            if (connections === CPU_CONNECTIONS) out.cpuUsPerRequest![s.spec.id].push((cpuS * 1e6) / r.requests);
          }
        }
        for (const s of rotate(servers, turn++)) {
          const r = await runLoad<PacedResult>({ op: 'paced', port: s.port, bodyId: body.id, ratePerS: out.ratePerS, durationS: plan.latencyS });
          if (r.failures > 0) throw new Error(`${s.spec.title}: ${r.failures} failed requests for body (${body.id}) at ${out.ratePerS}/s`);
          out.p50Ms[s.spec.id].push(r.p50Ms);
          out.p99Ms[s.spec.id].push(r.p99Ms);
          out.maxMs[s.spec.id].push(r.maxMs);
        }
        if (body.id === 'c') for (const s of servers) memory.peakSmallMiB[s.spec.id].push(s.memory().peakMiB);
      }
      for (const s of servers) memory.peakMiB[s.spec.id].push(s.memory().peakMiB);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }

  const micro = JSON.parse(
    execFileSync(process.execPath, [join(REPO_DIR, 'dist-bench/bench/micro.js'), String(plan.microMs)], { encoding: 'utf8' }),
  ) as MicroResult[];
  return {
    meta: {
      date: new Date().toISOString(),
      quick,
      rounds: plan.rounds,
      node: process.version,
      go,
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      loadBefore,
      loadAfter: loadavg()[0]!,
      throughputSeconds: plan.throughputS,
      latencySeconds: plan.latencyS,
    },
    bodies: bodyResults,
    memory,
    readyMs,
    micro,
    limitProbe,
  };
}

main().catch((e: unknown) => {
  console.error(`bench: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
