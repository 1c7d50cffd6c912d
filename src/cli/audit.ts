/**
 * `audit [--pools PATH… | --kubeconfig FILE] [-o json]`: the stored pools that break the
 * rules (pools created before the webhook, or let through by ratcheting), judged by the
 * same code as the webhook's CREATE and the server's violation gauges.
 */
import { PoolViolationTracker, type PoolViolation } from '../store/pool-violations.js';
import type { ClusterState } from '../store/state.js';
import { quoteGoString } from '../go/strconv-quote.js';
import { iaasProvider } from '../spiderpool/pool.js';
import type { CommandResult } from './review-file.js';
import { loadState, UsageError } from './cluster-state.js';
import { ManifestError, manifestFiles, listItems, parseDocuments, readText } from '../kubernetes/manifests.js';
import { printed, type OutputFormat } from './kubectl-output.js';

/** What `audit` found, as `-o json` prints it. */
export interface AuditReport {
  /** SpiderIPPools in the state, and how many of them are IaaS pools (the ones judged). */
  pools: number;
  iaasPools: number;
  /** IaaS pools with at least one violation. */
  violatingPools: number;
  /** Dual-stack pairs with at least one violation between their two pools. */
  brokenPairs: number;
  violations: PoolViolation[];
}

/** Judges every pool of `state`; violations sorted by pool name, in rule order within a pool. */
export function auditState(state: ClusterState): AuditReport {
  const tracker = new PoolViolationTracker(state.pools);
  const violations = tracker.violations().sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
  let iaasPools = 0;
  for (const [, pool] of state.pools.entries()) if (iaasProvider(pool) !== undefined) iaasPools++;
  return { pools: state.pools.size, iaasPools, violatingPools: new Set(violations.map((v) => v.pool)).size, brokenPairs: tracker.brokenPairs(), violations };
}

/** The report as a person reads it: violations grouped by pool, then a summary line. */
export function renderAudit(report: AuditReport): string {
  let out = '';
  let current: string | undefined;
  for (const v of report.violations) {
    if (v.pool !== current) out += `SpiderIPPool ${quoteGoString((current = v.pool))}:\n`;
    out += `  ${v.field}: ${v.message}\n`;
  }
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const pairs = report.brokenPairs > 0 ? `, ${plural(report.brokenPairs, 'broken dual-stack pair')}` : '';
  const summary =
    report.violations.length === 0
      ? `no violations in ${plural(report.iaasPools, 'IaaS pool')} (${plural(report.pools, 'SpiderIPPool')} in all)`
      : `${plural(report.violations.length, 'violation')} in ${report.violatingPools} of ${plural(report.iaasPools, 'IaaS pool')}${pairs} (${plural(report.pools, 'SpiderIPPool')} in all)`;
  return `${out}${summary}\n`;
}

export interface AuditArguments {
  pools: string[];
  kubeconfig?: string;
  output?: OutputFormat;
}

/**
 * `audit` from its command-line arguments.
 *
 * @returns exit 0 when no pool breaks a rule, 1 when one does, 2 when the state cannot be
 *   read, or `--pools` holds no SpiderIPPool and no empty `List` (an empty file, a failed
 *   `kubectl get … > file`, the wrong file: a CI gate must not pass on it).
 */
export async function auditFromArguments(args: AuditArguments): Promise<CommandResult> {
  let loaded: Awaited<ReturnType<typeof loadState>>;
  try {
    loaded = await loadState({ pools: args.pools, ...(args.kubeconfig !== undefined ? { kubeconfig: args.kubeconfig } : {}) });
  } catch (e) {
    if (e instanceof UsageError || e instanceof ManifestError) return { exitCode: 2, stdout: '', stderr: `error: ${e.message}\n` };
    throw e;
  }
  if (loaded === undefined) return { exitCode: 2, stdout: '', stderr: 'error: give the pools to audit: --pools PATH (manifests) or --kubeconfig FILE (a cluster)\n' };
  const report = auditState(loaded.state);
  const stderr = loaded.warnings.map((w) => `warning: ${w}\n`).join('');
  if (report.pools === 0 && args.kubeconfig === undefined && !(await holdEmptyList(args.pools))) {
    return { exitCode: 2, stdout: '', stderr: `${stderr}error: ${args.pools.join(', ')} ${noPools(loaded.state)}; give SpiderIPPools, e.g. kubectl get spiderippools -o yaml > pools.yaml (an empty List there is fine)\n` };
  }
  const stdout = args.output === undefined ? renderAudit(report) : printed(report, args.output);
  return { exitCode: report.violations.length > 0 ? 1 : 0, stdout, stderr };
}

/** `holds no SpiderIPPool (found …)`: what `--pools` held instead, in one line. */
function noPools(state: ClusterState): string {
  const kinds = state.otherKinds();
  const found = [...kinds].map(([kind, n]) => `${n} ${kind}`).slice(0, 4).join(', ');
  return `holds no SpiderIPPool (found ${found === '' ? 'no object' : found}${kinds.size > 4 ? ', …' : ''})`;
}

/** Whether a file of `paths` holds a `kind: List` with no items: what `kubectl get` prints for none. */
async function holdEmptyList(paths: readonly string[]): Promise<boolean> {
  for (const given of paths) {
    for (const file of await manifestFiles(given)) {
      if (parseDocuments(await readText(file), file).some((value) => { const items = listItems(value); return Array.isArray(items) && items.length === 0; })) return true;
    }
  }
  return false;
}
