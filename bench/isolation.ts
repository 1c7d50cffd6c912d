/**
 * `npm run bench -- --isolation`: the refusing webhooks' latency while tenants load the
 * warn-only ones (docs/adr/0001-warn-only-worker-thread.md). One server with 10 000 pools
 * (isolation-server.ts) per mode: the warn-only webhooks in the worker (what `serve` runs)
 * and in-process (before the worker), each measured in three phases, in one run:
 *
 * - quiet: the refusing bodies alone (pool UPDATE (a), spiderpool-conf UPDATE (c), paced);
 * - pods: the same while another load generator sends 1 000 ordinary Pod reviews/s;
 * - hostile: the same with the Pods plus a hostile mix (~6 MiB Pods, JSON nested 10^6 deep,
 *   and, against the worker only, a backtracking wildcard pattern: in-process it would hold
 *   the event loop for hours at 10 000 pools, so the phase would never end).
 *
 * Target: the refusing p99 under load at most 2× quiet. Latency is charged from each
 * request's due time (loadgen.ts `paced`). Also the server's RSS (worker thread included)
 * after start and at its peak. Writes bench/results/isolation.json (not with `--quick`, a
 * seconds-long smoke run of the worker mode at 2 000 pools that fails only on a refused or
 * failed refusing review).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeCertificates, startLoadGenerator, type LoadGenerator } from './harness.js';
import type { PacedJob, PacedResult } from './loadgen.js';
import { startBenchServer, startNodeFlags, type BenchServer } from './servers.js';

const REPO_DIR = new URL('../../', import.meta.url).pathname;
const MODES = ['worker', 'in-process'] as const;
type Mode = (typeof MODES)[number];
const PHASES = ['quiet', 'pods', 'hostile'] as const;
type Phase = (typeof PHASES)[number];
const REFUSING = ['a', 'c'] as const;

const PLAN = {
  full: { modes: MODES, latencyS: 5, refusingPerS: 50, podsPerS: 1_000, settleMs: 1_500, backgroundSettleMs: 2_000, warmupS: 1, pools: 10_000 },
  quick: { modes: ['worker'] as const, latencyS: 1, refusingPerS: 50, podsPerS: 200, settleMs: 500, backgroundSettleMs: 300, warmupS: 0.2, pools: 2_000 },
};

/** Background load per phase: body and offered rate. */
function background(phase: Phase, mode: Mode, podsPerS: number): { bodyId: string; ratePerS: number }[] {
  if (phase === 'quiet') return [];
  const pods = [{ bodyId: 'iso-pod', ratePerS: podsPerS }];
  if (phase === 'pods') return pods;
  return [
    ...pods,
    { bodyId: 'iso-large', ratePerS: 2 },
    { bodyId: 'iso-deep', ratePerS: 2 },
    ...(mode === 'worker' ? [{ bodyId: 'iso-wildcard', ratePerS: 1 }] : []),
  ];
}

export interface IsolationRow {
  mode: Mode;
  phase: Phase;
  body: string;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  failures: number;
  /** Background bodies answered 200 and not, per body id. */
  background: Record<string, { answered: number; failures: number }>;
}

async function measurePhase(
  server: BenchServer<string>,
  mode: Mode,
  phase: Phase,
  plan: (typeof PLAN)['full'] | (typeof PLAN)['quick'],
  loaders: LoadGenerator[],
): Promise<IsolationRow[]> {
  const [measurer, ...others] = loaders;
  const load = background(phase, mode, plan.podsPerS);
  const durationS = REFUSING.length * plan.latencyS + plan.backgroundSettleMs / 1000 + 1;
  const jobs = load.map((b, i) => others[i]!.run<PacedResult>({ op: 'paced', port: server.port, durationS, ...b } satisfies PacedJob));
  // The background's connections open first (TLS handshakes by the dozen): measured from its steady state.
  if (load.length > 0) await sleep(plan.backgroundSettleMs);
  const rows: IsolationRow[] = [];
  for (const body of REFUSING) {
    const r = await measurer!.run<PacedResult>({ op: 'paced', port: server.port, bodyId: body, ratePerS: plan.refusingPerS, durationS: plan.latencyS });
    rows.push({ mode, phase, body, p50Ms: r.p50Ms, p99Ms: r.p99Ms, maxMs: r.maxMs, failures: r.failures, background: {} });
  }
  const results = await Promise.all(jobs);
  const summary = Object.fromEntries(load.map((b, i) => [b.bodyId, { answered: results[i]!.count, failures: results[i]!.failures }]));
  for (const row of rows) row.background = summary;
  return rows;
}

function table(rows: IsolationRow[]): string {
  const lines = ['mode        phase    body  p50 ms  p99 ms  max ms  failed  background answered/failed'];
  for (const r of rows) {
    const bg = Object.entries(r.background)
      .map(([id, b]) => `${id} ${b.answered}/${b.failures}`)
      .join(', ');
    lines.push(
      `${r.mode.padEnd(11)} ${r.phase.padEnd(8)} ${r.body.padEnd(5)} ${r.p50Ms.toFixed(1).padStart(6)}  ${r.p99Ms.toFixed(1).padStart(6)}  ${r.maxMs.toFixed(1).padStart(6)}  ${String(r.failures).padStart(6)}  ${bg}`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const plan = quick ? PLAN.quick : PLAN.full;
  const work = mkdtempSync(join(tmpdir(), 'webhook-isolation-'));
  const certDir = join(work, 'certs');
  const ca = makeCertificates(REPO_DIR, certDir);
  const loaders = Array.from({ length: 5 }, () => startLoadGenerator(REPO_DIR, certDir));
  const loadBefore = loadavg()[0]!;
  const rows: IsolationRow[] = [];
  const memory: Record<string, { idleMiB: number; peakMiB: number }> = {};
  try {
    for (const mode of plan.modes) {
      const args = [...startNodeFlags(REPO_DIR), join(REPO_DIR, 'dist-bench/bench/isolation-server.js'), certDir, mode, String(plan.pools)];
      const server = await startBenchServer(
        { id: `isolation-${mode}`, title: `isolation server (${mode})`, command: process.execPath, args, allowsAll: false },
        work,
        ca,
      );
      try {
        await sleep(plan.settleMs);
        const idleMiB = server.memory().rssMiB;
        // Warm-up, not recorded: the first phase must not pay for the JIT.
        for (const bodyId of [...REFUSING, 'iso-pod'])
          await loaders[0]!.run<PacedResult>({ op: 'paced', port: server.port, bodyId, ratePerS: plan.refusingPerS, durationS: plan.warmupS });
        for (const phase of PHASES) rows.push(...(await measurePhase(server, mode, phase, plan, loaders)));
        memory[mode] = { idleMiB, peakMiB: server.memory().peakMiB };
      } finally {
        await server.stop();
      }
    }
  } finally {
    for (const loader of loaders) loader.child.kill();
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `${table(rows)}\n\nRSS MiB: ${Object.entries(memory)
      .map(([m, v]) => `${m} idle ${v.idleMiB.toFixed(0)}, peak ${v.peakMiB.toFixed(0)}`)
      .join('; ')}`,
  );
  // In-process, the hostile phase refuses some (429 after waiting for room): the reason for the worker, not a failed run.
  const failed = rows.filter((r) => r.mode === 'worker' && r.failures > 0);
  if (failed.length > 0) throw new Error(`refusing reviews failed with the worker: ${failed.map((r) => `${r.phase} (${r.body}) ${r.failures}`).join(', ')}`);
  if (quick) return;
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    loadBefore,
    loadAfter: loadavg()[0]!,
    plan,
  };
  const file = join(REPO_DIR, 'bench/results/isolation.json');
  writeFileSync(file, `${JSON.stringify({ meta, memory, rows }, null, 2)}\n`);
  console.log(`Written to ${file}.`);
}

main().catch((e: unknown) => {
  console.error(`bench isolation: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
