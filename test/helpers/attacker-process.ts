/**
 * attackers.ts as a program of its own: its source transpiled (TypeScript's
 * `transpileModule`, no type check) with a last line that runs the plan given as its
 * first argument. The same script runs on loopback (`spawnAttacker`) and in the cluster
 * test's attacker pod (`attackerScript`, mounted from a ConfigMap).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { AttackPlan, PlanReport } from './attackers.js';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'attackers.ts');

/**
 * The TypeScript module at `source` (Node builtins only, no relative import) as one ES
 * module whose last line is `main`, e.g. `await run(JSON.parse(process.argv[2]));`.
 */
export function moduleScript(source: string, main: string): string {
  const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  return `${outputText}\n${main}\n`;
}

/** The attacker as one ES module: `node attacker.mjs '<AttackPlan as JSON>'`. */
export function attackerScript(): string {
  return moduleScript(SOURCE, 'await runPlan(JSON.parse(process.argv[2]));');
}

export interface AttackerProcess {
  /** The last report printed so far (undefined before the first). */
  last(): PlanReport | undefined;
  /** Stops the attack (SIGTERM), waits for the process to exit, and returns its final report. */
  stop(): Promise<PlanReport>;
}

/** Runs `plan` in a child Node process; it ends by itself after `plan.durationMs`. */
export async function spawnAttacker(plan: AttackPlan): Promise<AttackerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'webhook-attacker-'));
  const script = join(dir, 'attacker.mjs');
  await writeFile(script, attackerScript());
  const child = spawn(process.execPath, [script, JSON.stringify(plan)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last: PlanReport | undefined;
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) if (line.startsWith('{')) last = JSON.parse(line) as PlanReport;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    last: () => last,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
      if (last?.final !== true) throw new Error(`the attacker exited without a final report (exit ${child.exitCode}, signal ${child.signalCode})`);
      return last;
    },
  };
}
