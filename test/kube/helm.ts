/**
 * What the Helm scenarios on the one-node cluster share (helm.test.ts, certmanager.test.ts,
 * release.test.ts): helm run against the cluster, the checkout's chart installed or upgraded
 * with the CI image, Spiderpool's ConfigMap and the dry run that shows whether the webhook
 * guards it, the fault loop's load around a step (its calls, failures and worst latency
 * printed and written to helm-runs.json in the cluster directory) with the check that
 * none failed, and the check that an uninstall left nothing.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { until } from '../helpers/until.js';
import { CRD_FILE, CRD_NAME } from '../e2e/cluster/harness.js';
import { runProcess, type Finished } from '../e2e/cluster/processes.js';
import type { EnforcementAction } from '../../src/admission/enforcement.js';
import { CHART_DIR, helmBinary, RELEASE } from '../e2e/helm.js';
import { runFaults, type Fault, type FaultRunResult } from './faults.js';
import { ApiClient, clusterDir, getJson, kubectl, mustKubectl } from './kube.js';

export const NS = 'spiderpool-iaas-webhook';
export const WEBHOOK_CONFIGURATION = 'spiderpool-iaas-webhook';
/** The image image/build.sh builds and the node's containerd holds (no registry). */
const IMAGE = { 'image.repository': 'localhost/spiderpool-iaas-webhook', 'image.tag': 'ci' };
const IAAS_ANNOTATION = 'ipam.spidernet.io/iaas-provider';

/** `helm ARGS` against the cluster (its kubeconfig); a result, never a throw. */
export async function helmCmd(args: readonly string[], timeoutMs = 300_000): Promise<Finished> {
  const dir = clusterDir();
  return runProcess(await helmBinary(), [`--kubeconfig=${path.join(dir, 'kubeconfig')}`, ...args], { timeoutMs });
}
/** Like {@link helmCmd}, but throws with helm's output when it fails; returns stdout. */
export async function mustHelm(args: readonly string[], timeoutMs?: number): Promise<string> {
  const r = await helmCmd(args, timeoutMs);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/**
 * `helm install` (into a namespace it creates) or `helm upgrade` of the checkout's chart
 * with the CI image and `values` (each a `--set`), `--wait` up to 4 minutes; helm's stdout.
 */
export function helmChart(verb: 'install' | 'upgrade', values: Readonly<Record<string, string>> = {}): Promise<string> {
  const set = Object.entries({ ...IMAGE, ...values }).flatMap(([key, value]) => ['--set', `${key}=${value}`]);
  return mustHelm([verb, RELEASE, CHART_DIR, '-n', NS, ...(verb === 'install' ? ['--create-namespace'] : []), '--wait', '--timeout=4m', ...set]);
}

/** The names of the webhook pods not being deleted. */
export async function livePods(): Promise<string[]> {
  return (await getJson('pods', undefined, NS)).items.filter((p: any) => p.metadata.deletionTimestamp === undefined).map((p: any) => p.metadata.name as string);
}

/** Spiderpool's ConfigMap `name` in `namespace`, its provider on, with `timeout`. */
export function conf(namespace: string, name: string, timeout: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data: { 'conf.yml': `iaasNetworkProvider:\n  serverUrl: "http://iaas-provider.kube-system.svc:80"\n  httpRequestTimeout: "${timeout}"\n` },
  };
}
/** `kubectl apply --dry-run=server` of `manifest`: exit 1 and the API server's message when a webhook refuses it. */
export const applyDryRun = (manifest: Record<string, unknown>) => kubectl(['apply', '--dry-run=server', '-f', '-'], { stdin: stringify(manifest) });

/** Resolves once the API server sends spiderpool-conf writes to the webhook (a refusal by the rule). */
export async function guarded(): Promise<void> {
  let last = '';
  await until(
    async () => {
      const r = await applyDryRun(conf('kube-system', 'spiderpool-conf', '100s'));
      last = r.stderr;
      return r.code === 1 && r.stderr.includes('data[conf.yml].iaasNetworkProvider.httpRequestTimeout: Invalid value: "100s"');
    },
    'the webhook configuration to guard spiderpool-conf',
    { timeoutMs: 180_000, intervalMs: 1000, describe: () => last },
  );
}

/** Resolves once none of `pods` exists, terminating ones included (they may answer reviews until they are gone). */
export async function podsGone(pods: readonly string[]): Promise<void> {
  let left: string[] = [];
  await until(
    async () => (left = (await getJson('pods', undefined, NS)).items.map((p: any) => p.metadata.name).filter((p: string) => pods.includes(p))).length === 0,
    'the pods from before to be gone',
    { timeoutMs: 120_000, intervalMs: 1000, describe: () => left.join(', ') },
  );
}

/** How the fault loop judges the rule-breaking writes (faults.ts): `unguardedOk`, and the `actions` due (default `Deny`). */
export interface LoadOptions {
  unguardedOk?: boolean;
  actions?: () => readonly EnforcementAction[];
}

/** Runs `faults` under the fault loop's load, prints and records the result as `name`. */
export async function loaded(name: string, faults: Fault[], options: LoadOptions = {}): Promise<FaultRunResult> {
  const client = new ApiClient();
  let result: FaultRunResult;
  try {
    result = await runFaults(client, { ratePerSecond: 10, faults, ...options });
  } finally {
    client.close();
  }
  // Every test file adds its runs to the one file.
  const file = path.join(clusterDir(), 'helm-runs.json');
  const runs: Record<string, FaultRunResult> = JSON.parse(await readFile(file, 'utf8').catch(() => '{}'));
  runs[name] = result;
  await writeFile(file, JSON.stringify(runs, null, 2));
  console.log(
    `${name}: ${result.calls} admission calls (${result.allowed} allowed, ${result.refused} refused, ${result.warned} warned, ${result.audited} audited, ${result.unguarded} unguarded while no webhook configuration existed) in ${result.seconds} s at ${result.ratePerSecond}/s, ${result.failed} failed, latency p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, worst ${result.latencyMs.max} ms${result.failures.length ? `\nfailures: ${JSON.stringify(result.failures.slice(0, 10))}` : ''}`,
  );
  return result;
}

/**
 * A loaded step of the calling `describe` block: a `beforeAll` that runs `fault` under the
 * fault loop's load (recorded as `runName`) and the test that no write was refused but by
 * the rules and none failed. Returns the run's result, for the block's other tests.
 */
export function underLoad(runName: string, fault: Fault, options: LoadOptions = {}): () => FaultRunResult {
  let result: FaultRunResult | undefined;
  beforeAll(async () => {
    result = await loaded(runName, [fault], options);
  }, 600_000);
  it('no write was refused but by the rules, none failed', () => {
    expect(result?.failures).toEqual([]);
    expect(result?.failed).toBe(0);
  });
  return () => {
    if (result === undefined) throw new Error(`the loaded step "${runName}" did not run`);
    return result;
  };
}

/**
 * What the release left: every object of every listable kind in `namespaces` (but the
 * ServiceAccount and CA ConfigMap Kubernetes puts in every namespace, and Events), and
 * every cluster-scoped object whose name holds iaas-webhook (the webhook's and the policy's).
 */
async function leftovers(namespaces: string[]): Promise<string[]> {
  const kinds = async (namespaced: boolean) =>
    (await mustKubectl(['api-resources', '--verbs=list', `--namespaced=${namespaced}`, '-o', 'name']))
      .split('\n')
      .filter((k) => k !== '' && !/^events(\.|$)/.test(k));
  const left: string[] = [];
  const namespaced = await kinds(true);
  for (const ns of namespaces) {
    const out = await mustKubectl(['get', namespaced.join(','), '-n', ns, '-o', 'name', '--ignore-not-found']);
    const kubeOwn = [`serviceaccount/default`, `configmap/kube-root-ca.crt`];
    left.push(
      ...out
        .split('\n')
        .filter((line) => line !== '' && !kubeOwn.includes(line) && (ns === NS || line.includes('iaas-webhook')))
        .map((l) => `${ns}: ${l}`),
    );
  }
  const cluster = await mustKubectl(['get', (await kinds(false)).join(','), '-o', 'name']);
  // The release namespace itself is helm's --create-namespace, not the release's: deleted by the caller.
  // iaas-webhook: spiderpool-iaas-webhook, and the policy's spiderippool.iaas-webhook.spidernet.io.
  left.push(...cluster.split('\n').filter((line) => line.includes('iaas-webhook') && !line.startsWith('namespace/')));
  return left;
}

/** Waits until {@link leftovers} finds nothing in `namespaces`, then checks that every guarded write is accepted. */
export async function expectNothingLeft(namespaces: string[]): Promise<void> {
  // Pods and the ReplicaSet go a little after helm returns (garbage collection).
  let left: string[] = [];
  await until(async () => (left = await leftovers(namespaces)).length === 0, 'nothing of the release to be left', {
    timeoutMs: 120_000,
    intervalMs: 2000,
    describe: () => left.join(', '),
  });
  // Every write is accepted again: nothing is guarded.
  expect((await applyDryRun(conf('kube-system', 'spiderpool-conf', '100s'))).code).toBe(0);
}

/**
 * The step both scenario files end with, as `describe(title)`: `helm uninstall --wait`
 * under the fault loop's load (recorded as `runName`), no write refused but by the rules
 * and none failed; then nothing of the release left in the release namespace and
 * kube-system (`leftTitle` names what the file expects gone), every write accepted, and
 * the release namespace deleted.
 */
export function describeUninstallUnderLoad(title: string, runName: string, leftTitle: string): void {
  describe(title, () => {
    underLoad(
      runName,
      { name: 'helm uninstall --wait', run: () => mustHelm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout=4m']).then(() => undefined) },
      { unguardedOk: true },
    );

    it(leftTitle, async () => {
      await expectNothingLeft([NS, 'kube-system']);
      await mustKubectl(['delete', 'namespace', NS, '--timeout=2m'], { timeoutMs: 150_000 });
    });
  });
}

/**
 * What every scenario needs first: helm built, the release namespace gone (the kustomize
 * install before, install.test.ts, deletes it at its end; helm cannot create the release's
 * Secret in it while it is still terminating), Spiderpool's CRD, a valid spiderpool-conf
 * and the pool the fault loop writes (faults.ts).
 */
export async function prepareCluster(): Promise<void> {
  await helmBinary();
  await until(async () => (await kubectl(['get', 'namespace', NS, '--ignore-not-found', '-o', 'name'])).stdout.trim() === '', `namespace ${NS} to be gone`, {
    timeoutMs: 180_000,
    intervalMs: 1000,
  });
  await mustKubectl(['apply', '-f', CRD_FILE]);
  await mustKubectl(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']);
  await mustKubectl(['apply', '-f', '-'], { stdin: stringify(conf('kube-system', 'spiderpool-conf', '50s')) });
  // The pool the fault loop writes (faults.ts).
  await mustKubectl(['apply', '-f', '-'], {
    stdin: stringify({
      apiVersion: 'spiderpool.spidernet.io/v2beta1',
      kind: 'SpiderIPPool',
      metadata: { name: 'fault-pool', annotations: { [IAAS_ANNOTATION]: 'example-cloud', 'ipam.spidernet.io/parent-nic': 'eth0' } },
      spec: { ipVersion: 4, subnet: '10.6.0.0/16', ips: ['10.6.0.10-10.6.0.20'], gateway: '10.6.0.1', nodeName: ['worker-1'] },
    }),
  });
}
