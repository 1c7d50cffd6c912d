/**
 * `audit [--pools PATH… | --kubeconfig FILE] [--context NAME] [-o json|yaml]`: the stored pools
 * (from manifests, else from the cluster kubectl would use) that break the
 * rules (pools created before the webhook, or let through by ratcheting), judged by the
 * same code as the webhook's CREATE and the server's violation gauges.
 */
import { PoolViolationTracker, type PoolViolation } from '../store/pool-violations.js';
import type { ClusterState } from '../store/state.js';
import { quoteGoString } from '../go/strconv-quote.js';
import { iaasProvider } from '../spiderpool/pool.js';
import type { CommandResult } from './review-file.js';
import { clusterFlags, loadState, UsageError } from './cluster-state.js';
import { ManifestError, manifestFiles, listItems, parseDocuments, readText } from '../kubernetes/manifests.js';
import { printed, type OutputFormat } from './kubectl-output.js';
import { countByAction, enforcementTable } from './enforcement-notes.js';
import { actionsOf, type EnforcementTable } from '../rules/enforcement-table.js';

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
  context?: string;
  output?: OutputFormat;
  /** `--enforcement` values (checked as parsed): each violation shown with its rule's action. */
  enforcement?: string[];
}

/**
 * `audit` from its command-line arguments.
 *
 * @returns exit 0 when no pool breaks a rule, 1 when one does, 2 when the state cannot be
 *   read, or `--pools` holds no SpiderIPPool and no empty `List` (an empty file, a failed
 *   `kubectl get … > file`, the wrong file: a CI gate must not pass on it).
 */
export async function auditFromArguments(args: AuditArguments): Promise<CommandResult> {
  let loaded: NonNullable<Awaited<ReturnType<typeof loadState>>>;
  try {
    // Without --pools, the cluster kubectl would use: audit runs in the pod, as the runbooks send the operator there.
    const cluster = args.pools.length === 0 ? { ...clusterFlags(args) } : clusterFlags(args);
    loaded = (await loadState({ pools: args.pools, ...(cluster !== undefined ? { cluster } : {}) }))!; // a source is always given
  } catch (e) {
    if (e instanceof UsageError || e instanceof ManifestError) return { exitCode: 2, stdout: '', stderr: `error: ${e.message}\n` };
    throw e;
  }
  const report = auditState(loaded.state);
  const stderr = loaded.warnings.map((w) => `warning: ${w}\n`).join('');
  if (report.pools === 0 && args.pools.length > 0 && !(await holdEmptyList(args.pools))) {
    return {
      exitCode: 2,
      stdout: '',
      stderr: `${stderr}error: ${args.pools.join(', ')} ${noPools(loaded.state)}; give SpiderIPPools, e.g. kubectl get spiderippools -o yaml > pools.yaml (an empty List there is fine)\n`,
    };
  }
  const table = enforcementTable(args.enforcement);
  if (table !== undefined) return withActions(report, table, args.output, stderr);
  const stdout = args.output === undefined ? renderAudit(report) : printed(report, args.output);
  return { exitCode: report.violations.length > 0 ? 1 : 0, stdout, stderr };
}

/**
 * The report with `--enforcement`: each violation with the `action` a write breaking its
 * rule would get, and the count by action; exit 1 only for a violation of a `Deny` rule.
 */
function withActions(report: AuditReport, table: EnforcementTable, output: OutputFormat | undefined, stderr: string): CommandResult {
  const actionOf = actionsOf(table);
  const actions = report.violations.map((v) => actionOf(v.rule));
  const exitCode = actions.includes('Deny') ? 1 : 0;
  if (output !== undefined)
    return { exitCode, stdout: printed({ ...report, violations: report.violations.map((v, i) => ({ ...v, action: actions[i] })) }, output), stderr };
  const byAction = actions.length === 0 ? '' : `by action: ${countByAction(actions)}\n`;
  return { exitCode, stdout: renderAudit(report) + byAction, stderr };
}

/** `holds no SpiderIPPool (found …)`: what `--pools` held instead, in one line. */
function noPools(state: ClusterState): string {
  const kinds = state.otherKinds();
  const found = [...kinds]
    .map(([kind, n]) => `${n} ${kind}`)
    .slice(0, 4)
    .join(', ');
  return `holds no SpiderIPPool (found ${found === '' ? 'no object' : found}${kinds.size > 4 ? ', …' : ''})`;
}

/** Whether a file of `paths` holds a `kind: List` with no items: what `kubectl get` prints for none. */
async function holdEmptyList(paths: readonly string[]): Promise<boolean> {
  for (const given of paths) {
    for (const file of await manifestFiles(given)) {
      if (
        parseDocuments(await readText(file), file).some((value) => {
          const items = listItems(value);
          return Array.isArray(items) && items.length === 0;
        })
      )
        return true;
    }
  }
  return false;
}
