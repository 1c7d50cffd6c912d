/**
 * What the one-node cluster tests that install deploy/ share: the objects the load writes
 * (an IaaS SpiderIPPool, Spiderpool's ConfigMap), the cluster prepared as one that runs
 * Spiderpool, a copy of deploy/ with the test overlay (test/kube/overlay: only the image
 * differs), and ways to look at the installed webhook (its pods, their own endpoints
 * through the API server's pod proxy, whether the API server calls it).
 */
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { until } from '../helpers/until.js';
import { CRD_FILE, CRD_NAME } from '../e2e/cluster/harness.js';
import { ROOT } from '../e2e/cluster/webhook.js';
import type { FaultRunResult } from './faults.js';
import { clusterDir, getJson, kubectl, mustKubectl } from './kube.js';

export const NS = 'spiderpool-iaas-webhook';
export const DEPLOYMENT = 'deployment/spiderpool-iaas-webhook';
const IAAS_ANNOTATION = 'ipam.spidernet.io/iaas-provider';
const PARENT_NIC_ANNOTATION = 'ipam.spidernet.io/parent-nic';

/** An IaaS SpiderIPPool; a node pool (with its parent NIC) when `nodeName` is given. */
export function pool(name: string, nodeName?: string[]): Record<string, unknown> {
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, annotations: { [IAAS_ANNOTATION]: 'example-cloud', ...(nodeName ? { [PARENT_NIC_ANNOTATION]: 'eth0' } : {}) } },
    spec: { ipVersion: 4, subnet: '10.6.0.0/16', ips: ['10.6.0.10-10.6.0.20'], gateway: '10.6.0.1', ...(nodeName ? { nodeName } : {}) },
  };
}

/** Spiderpool's ConfigMap in kube-system with the given provider settings. */
export function spiderpoolConf(serverUrl: string, timeout?: string): Record<string, unknown> {
  const timeoutLine = timeout === undefined ? '' : `  httpRequestTimeout: "${timeout}"\n`;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
    data: { 'conf.yml': `ipamUnixSocketPath: /var/run/spidernet/spiderpool.sock\niaasNetworkProvider:\n  serverUrl: "${serverUrl}"\n${timeoutLine}` },
  };
}

export const apply = (manifest: Record<string, unknown>, extra: string[] = []) => kubectl(['apply', '-f', '-', ...extra], { stdin: stringify(manifest) });

/**
 * The cluster as one that runs Spiderpool, before the webhook: the SpiderIPPool CRD,
 * Spiderpool's ConfigMap and the node pool the fault load writes (nothing guards it yet).
 * Idempotent.
 */
export async function prepareSpiderpool(): Promise<void> {
  await mustKubectl(['apply', '-f', CRD_FILE]);
  await mustKubectl(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']);
  await mustKubectl(['apply', '-f', '-'], { stdin: stringify(spiderpoolConf('http://iaas-provider.kube-system.svc:80', '50s')) });
  const r = await apply(pool('fault-pool', ['worker-1']));
  if (r.code !== 0) throw new Error(`the fault pool was not created: ${r.stderr}`);
}

/**
 * Copies deploy/ (without deploy/tls) and the test overlay side by side under the
 * cluster's directory and returns the overlay's path; `args` are added to the webhook
 * container's args in the copy.
 */
export async function copyOverlay(args: readonly string[] = []): Promise<string> {
  const dir = await mkdtemp(path.join(clusterDir(), 'install-'));
  await cp(path.join(ROOT, 'deploy'), path.join(dir, 'deploy'), { recursive: true, filter: (src) => !src.startsWith(path.join(ROOT, 'deploy/tls')) });
  await cp(path.join(ROOT, 'test/kube/overlay'), path.join(dir, 'overlay'), { recursive: true });
  const overlay = path.join(dir, 'overlay');
  if (args.length > 0) {
    const kustomization = path.join(overlay, 'kustomization.yaml');
    const added = args.map((value) => ({ op: 'add', path: '/spec/template/spec/containers/0/args/-', value }));
    await writeFile(
      kustomization,
      `${await readFile(kustomization, 'utf8')}patches:\n  - target: { kind: Deployment, name: spiderpool-iaas-webhook }\n    patch: '${JSON.stringify(added)}'\n`,
    );
  }
  return overlay;
}

/**
 * `kubectl wait` for the Deployment to be Available (3 minutes); when it is not, throws
 * with what an operator would look at: the pods, their events and their last log lines.
 */
export async function waitAvailable(): Promise<void> {
  const r = await kubectl(['-n', NS, 'wait', '--for=condition=Available', DEPLOYMENT, '--timeout=3m'], { timeoutMs: 200_000 });
  if (r.code === 0) return;
  const seen = await Promise.all([
    kubectl(['-n', NS, 'get', 'deploy,rs,pods,endpointslices,secrets,leases', '-o', 'wide']),
    kubectl(['-n', NS, 'get', 'events', '--sort-by=.lastTimestamp']),
    kubectl(['-n', NS, 'describe', 'pods']),
    kubectl(['-n', NS, 'logs', '-l', 'app.kubernetes.io/name=spiderpool-iaas-webhook', '--all-containers', '--prefix', '--tail=40']),
  ]);
  throw new Error(`${DEPLOYMENT} did not become Available: ${r.stderr.trim()}\n${seen.map((s) => s.stdout + s.stderr).join('\n')}`);
}

/** The webhook's pods that are not being deleted. */
export async function webhookPods(): Promise<any[]> {
  const pods = (await getJson('pods', undefined, NS)).items as any[];
  return pods.filter((p) => p.metadata.deletionTimestamp === undefined);
}

/** The pod's own endpoint through the API server's pod proxy (HTTPS to the pod IP). */
export const podRaw = (pod: string, what: string) => mustKubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/https:${pod}:8443/proxy/${what}`]);

/** Resolves once the API server calls the webhook (a dry run refused by it, not by "failed calling webhook"). */
export async function webhookAnswers(): Promise<void> {
  let last = '';
  await until(
    async () => {
      const r = await apply(spiderpoolConf('http://probe:80', 'not-a-duration'), ['--dry-run=server']);
      last = r.stderr;
      return r.code !== 0 && r.stderr.includes('The ConfigMap "spiderpool-conf" is invalid: data[conf.yml].iaasNetworkProvider.httpRequestTimeout: ');
    },
    'the API server to call the webhook',
    { timeoutMs: 60_000, intervalMs: 1000, describe: () => last },
  );
}

/** Prints one line about a fault run: calls, outcomes, latencies, faults, the first failures. */
export function report(what: string, result: FaultRunResult): void {
  console.log(
    `${what}: ${result.calls} admission calls (${result.allowed} allowed, ${result.refused} refused, ${result.unguarded} unguarded) in ${result.seconds} s at ${result.ratePerSecond}/s, ${result.failed} failed, latency p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, worst ${result.latencyMs.max} ms; faults: ${result.faults.map((f) => `${f.name} (${f.seconds} s)`).join(', ')}${result.failures.length ? `\nfailures: ${JSON.stringify(result.failures.slice(0, 10))}` : ''}`,
  );
}
