/**
 * What the rollout of helm.test.ts (Audit, then Warn, then Deny; docs/operations.md,
 * "Rolling out" and "Reports") reads and writes on the one-node cluster: OpenReports' CRDs
 * (read from ../shared/openreports/crds/, never copied), pools stored before the install
 * that break pool rules, the webhook's ClusterReports, the decisions the live pods counted
 * and the pod holding the reports Lease.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { REPORTS_LEASE_NAME } from '../../src/defaults.js';
import { CLUSTER_REPORTS, REPORT_LABELS } from '../../src/store/pool-reports.js';
import { REPO_ROOT } from '../e2e/helm.js';
import { spiderIPPool } from '../helpers/pools.js';
import { livePods, NS } from './helm.js';
import { getJson, kubectl, mustKubectl } from './kube.js';
import { podRaw } from './webhook-install.js';

const CRDS = path.resolve(REPO_ROOT, '../shared/openreports/crds/');
const SOURCE = REPORT_LABELS['app.kubernetes.io/managed-by'];
const REPORT_SELECTOR = `app.kubernetes.io/managed-by=${SOURCE}`;
const STORED_LABEL = ['rollout-test', 'stored-before'] as const;

/** An IaaS pool with the parent NIC annotation `nic` (a node pool with `nodeName`), labelled {@link STORED_LABEL}. */
const legacy = (name: string, nic: string, nodeName?: string[]) => {
  const pool = spiderIPPool(name, { provider: 'example-cloud', nic, subnet: '10.9.0.0/16', ips: ['10.9.0.10-10.9.0.20'], ...(nodeName ? { nodeName } : {}) });
  return { ...pool, metadata: { ...pool.metadata, labels: { [STORED_LABEL[0]]: STORED_LABEL[1] } } };
};

/** A pool stored before the install and the pool rule it breaks (`audit` names it so). */
export interface StoredPool {
  pool: string;
  rule: string;
}

/** The pools stored before the install; the first is the one fixed ({@link fixedPool}). */
export const STORED_BEFORE: readonly StoredPool[] = [
  { pool: 'rollout-two-nics-a', rule: 'parent-nic-one' },
  { pool: 'rollout-two-nics-b', rule: 'parent-nic-one' },
  { pool: 'rollout-two-nodes', rule: 'nodes-count' },
];

/** The first pool of {@link STORED_BEFORE}, repaired: one parent NIC. */
export const fixedPool = () => legacy('rollout-two-nics-a', 'eth0');

/** OpenReports' CRDs, established, and the pools of {@link STORED_BEFORE} stored while no webhook configuration exists. */
export async function storeBrokenPools(): Promise<void> {
  await mustKubectl(['apply', '-f', CRDS]);
  await mustKubectl(['wait', '--for=condition=Established', `crd/${CLUSTER_REPORTS.plural}.${CLUSTER_REPORTS.group}`, '--timeout=60s']);
  const manifests = [
    legacy('rollout-two-nics-a', 'eth0,eth1'),
    legacy('rollout-two-nics-b', 'eth0,eth1'),
    legacy('rollout-two-nodes', 'eth0', ['worker-1', 'worker-2']),
  ];
  await mustKubectl(['apply', '-f', '-'], { stdin: manifests.map((m) => `---\n${stringify(m)}`).join('') });
}

/** Deletes what {@link storeBrokenPools} made, so that the other files find the cluster as before. */
export async function removeBrokenPools(): Promise<void> {
  await mustKubectl(['delete', 'spiderippools', '-l', STORED_LABEL.join('='), '--ignore-not-found']);
  await mustKubectl(['delete', '-f', CRDS, '--ignore-not-found', '--timeout=60s'], { timeoutMs: 90_000 });
}

/** One result of a report: the rule, the pool and `fail` or `warn`. */
export interface Reported {
  rule: string;
  pool: string;
  result: string;
}

/** The webhook's ClusterReports: every result, and each report's summary (`fail`, `warn`) by its rule. */
export async function reported(): Promise<{ results: Reported[]; summaries: Map<string, { fail: number; warn: number }> }> {
  const items = JSON.parse(await mustKubectl(['get', CLUSTER_REPORTS.plural, '-l', REPORT_SELECTOR, '-o', 'json'])).items as any[];
  return {
    results: items.flatMap((r) => (r.results ?? []).map((x: any) => ({ rule: x.rule, pool: x.resources[0].name, result: x.result }))),
    summaries: new Map(items.map((r) => [r.metadata.name.slice(SOURCE.length + 1), { fail: r.summary.fail, warn: r.summary.warn }])),
  };
}

/** A result as one line, `<pool> <rule> <result>`: what the rollout compares. */
export const resultLine = (r: Reported): string => `${r.pool} ${r.rule} ${r.result}`;

/** The results of {@link reported} for the pools of {@link STORED_BEFORE}, as sorted {@link resultLine}s. */
export const storedBeforeResults = (results: readonly Reported[]): string[] =>
  results
    .filter((r) => STORED_BEFORE.some((p) => p.pool === r.pool))
    .map(resultLine)
    .sort();

/** `spiderpool_iaas_webhook_decisions_total` of every live pod, summed by `<rule> <action>` (`action` lower case). */
export async function decisions(): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  for (const pod of await livePods()) {
    for (const line of (await podRaw(pod, 'metrics')).split('\n')) {
      const series = /^spiderpool_iaas_webhook_decisions_total\{(.*)\} (\S+)$/.exec(line);
      if (!series) continue;
      const labels = Object.fromEntries([...series[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      const key = `${labels['rule']} ${labels['action']}`;
      sums.set(key, (sums.get(key) ?? 0) + Number(series[2]));
    }
  }
  return sums;
}

/** The decisions of {@link decisions} with `action`, summed over the rules. */
export const decisionsWith = (counted: ReadonlyMap<string, number>, action: string): number =>
  [...counted].filter(([key]) => key.endsWith(` ${action}`)).reduce((sum, [, n]) => sum + n, 0);

/** The pod holding the reports Lease (`holderIdentity` is `<pod name>_<uuid>`); undefined when none does. */
export async function reportsLeader(): Promise<string | undefined> {
  const r = await kubectl(['-n', NS, 'get', 'lease', REPORTS_LEASE_NAME, '-o', 'json', '--ignore-not-found']);
  const holder: string | undefined = r.stdout.trim() === '' ? undefined : JSON.parse(r.stdout).spec?.holderIdentity;
  return holder ? holder.slice(0, holder.lastIndexOf('_')) : undefined;
}

/** The ValidatingAdmissionPolicyBindings of the install (named after it). */
export async function policyBindings(): Promise<string[]> {
  return (await getJson('validatingadmissionpolicybindings')).items
    .map((b: any) => b.metadata.name as string)
    .filter((n: string) => n.includes('iaas-webhook'));
}

/** The Deployment's `terminationGracePeriodSeconds`: how long a deleted leader may still hold the Lease, in seconds. */
export async function gracePeriodSeconds(): Promise<number> {
  return (await getJson('deployment', 'spiderpool-iaas-webhook', NS)).spec.template.spec.terminationGracePeriodSeconds;
}
