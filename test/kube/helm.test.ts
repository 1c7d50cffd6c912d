/**
 * The Helm chart (deploy/helm/spiderpool-iaas-webhook) on the one-node cluster, with the
 * image built from the Dockerfile and helm built from its Go module. In order, on one
 * cluster:
 *
 *   1  helm install with the defaults (tls.method auto) while guarded writes keep coming:
 *      none refused for a reason other than the rules, none failed; the webhook
 *      configuration appears once a pod is Ready and the writes are judged from then on
 *   2  helm upgrade that rolls the pods, under the same load: 0 failed admission calls
 *   3  helm uninstall under the same load: the pre-delete hook removes the webhook
 *      configuration before the pods go; nothing the release made is left, every write
 *      is accepted afterwards
 *   4  helm install with tls.method provided: the pods register the operator's CA; then
 *      uninstalled, nothing left
 *   5  helm install with spiderpool.namespace=spiderpool, spiderpool.configName=my-conf:
 *      a bad my-conf in spiderpool is refused, the same in kube-system is not looked at;
 *      then uninstalled, nothing left
 *
 * Calls, failures and the worst latency of each loaded step are printed as the fault run
 * of install.test.ts prints them, and written to helm-runs.json in the cluster directory.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { generateCertificates } from '../../src/certs/generate.js';
import { until } from '../helpers/until.js';
import { CRD_FILE, CRD_NAME } from '../e2e/cluster/harness.js';
import { runProcess, type Finished } from '../e2e/cluster/processes.js';
import { CHART_DIR, helmBinary, RELEASE } from '../e2e/helm.js';
import { runFaults, type Fault, type FaultRunResult } from './faults.js';
import { ApiClient, clusterDir, getJson, kubectl, mustKubectl } from './kube.js';

const NS = 'spiderpool-iaas-webhook';
const WEBHOOK_CONFIGURATION = 'spiderpool-iaas-webhook';
/** The image image/build.sh builds and the node's containerd holds (no registry). */
const IMAGE = ['--set', 'image.repository=localhost/spiderpool-iaas-webhook', '--set', 'image.tag=ci'];
const IAAS_ANNOTATION = 'ipam.spidernet.io/iaas-provider';
const runs: Record<string, FaultRunResult> = {};

async function helmCmd(args: readonly string[], timeoutMs = 300_000): Promise<Finished> {
  const dir = clusterDir();
  return runProcess(await helmBinary(), [`--kubeconfig=${path.join(dir, 'kubeconfig')}`, ...args], { timeoutMs });
}
async function mustHelm(args: readonly string[], timeoutMs?: number): Promise<string> {
  const r = await helmCmd(args, timeoutMs);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** The names of the webhook pods not being deleted. */
async function livePods(): Promise<string[]> {
  return (await getJson('pods', undefined, NS)).items.filter((p: any) => p.metadata.deletionTimestamp === undefined).map((p: any) => p.metadata.name as string);
}

/** Spiderpool's ConfigMap `name` in `namespace`, its provider on, with `timeout`. */
function conf(namespace: string, name: string, timeout: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data: { 'conf.yml': `iaasNetworkProvider:\n  serverUrl: "http://iaas-provider.kube-system.svc:80"\n  httpRequestTimeout: "${timeout}"\n` },
  };
}
const applyDryRun = (manifest: Record<string, unknown>) => kubectl(['apply', '--dry-run=server', '-f', '-'], { stdin: stringify(manifest) });

/** Resolves once the API server sends spiderpool-conf writes to the webhook (a refusal by the rule). */
async function guarded(): Promise<void> {
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

/** Runs `faults` under the fault loop's load, prints and records the result as `name`. */
async function loaded(name: string, faults: Fault[], unguardedOk: boolean): Promise<FaultRunResult> {
  const client = new ApiClient();
  let result: FaultRunResult;
  try {
    result = await runFaults(client, { ratePerSecond: 10, faults, unguardedOk });
  } finally {
    client.close();
  }
  runs[name] = result;
  await writeFile(path.join(clusterDir(), 'helm-runs.json'), JSON.stringify(runs, null, 2));
  console.log(
    `${name}: ${result.calls} admission calls (${result.allowed} allowed, ${result.refused} refused, ${result.unguarded} unguarded while no webhook configuration existed) in ${result.seconds} s at ${result.ratePerSecond}/s, ${result.failed} failed, latency p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, worst ${result.latencyMs.max} ms${result.failures.length ? `\nfailures: ${JSON.stringify(result.failures.slice(0, 10))}` : ''}`,
  );
  return result;
}

/**
 * What the release left: every object of every listable kind in `namespaces` (but the
 * ServiceAccount and CA ConfigMap Kubernetes puts in every namespace, and Events), and
 * every cluster-scoped object whose name holds iaas-webhook (the webhook's and the policy's).
 */
async function leftovers(namespaces: string[]): Promise<string[]> {
  const kinds = async (namespaced: boolean) =>
    (await mustKubectl(['api-resources', '--verbs=list', `--namespaced=${namespaced}`, '-o', 'name'])).split('\n').filter((k) => k !== '' && !/^events(\.|$)/.test(k));
  const left: string[] = [];
  const namespaced = await kinds(true);
  for (const ns of namespaces) {
    const out = await mustKubectl(['get', namespaced.join(','), '-n', ns, '-o', 'name', '--ignore-not-found']);
    const kubeOwn = [`serviceaccount/default`, `configmap/kube-root-ca.crt`];
    left.push(...out.split('\n').filter((line) => line !== '' && !kubeOwn.includes(line) && (ns === NS || line.includes('iaas-webhook'))).map((l) => `${ns}: ${l}`));
  }
  const cluster = await mustKubectl(['get', (await kinds(false)).join(','), '-o', 'name']);
  // The release namespace itself is helm's --create-namespace, not the release's: deleted by the caller.
  // iaas-webhook: spiderpool-iaas-webhook, and the policy's spiderippool.iaas-webhook.spidernet.io.
  left.push(...cluster.split('\n').filter((line) => line.includes('iaas-webhook') && !line.startsWith('namespace/')));
  return left;
}

async function expectNothingLeft(namespaces: string[]): Promise<void> {
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

beforeAll(async () => {
  await helmBinary();
  // The kustomize install before (install.test.ts) deletes this namespace at its end; helm
  // cannot create the release's Secret in it while it is still terminating.
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
}, 30 * 60_000);

describe('1. helm install (defaults) under load', () => {
  let result: FaultRunResult;
  beforeAll(async () => {
    result = await loaded(
      'helm install',
      [
        {
          name: 'helm install --wait',
          run: async () => {
            await mustHelm(['install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', '--wait', '--timeout=4m', ...IMAGE]);
            await guarded();
          },
        },
      ],
      true,
    );
  }, 600_000);

  it('no guarded write was refused for a reason other than the rules, none failed', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
  });

  it('the webhook judged writes once a pod had written its configuration', () => {
    expect(result.refused).toBeGreaterThan(20);
    expect(result.allowed).toBeGreaterThan(20);
  });

  it('the configuration is written by the pods (not a Helm object), with the AKS annotation', async () => {
    const vwc = await getJson('validatingwebhookconfiguration', WEBHOOK_CONFIGURATION);
    expect(vwc.metadata.annotations?.['meta.helm.sh/release-name']).toBeUndefined();
    expect(vwc.metadata.annotations?.['admissions.enforcer/disabled']).toBe('true');
    for (const webhook of vwc.webhooks) expect(webhook.clientConfig.caBundle).toEqual(expect.any(String));
  });
});

describe('2. helm upgrade that rolls the pods, under load', () => {
  let result: FaultRunResult;
  let before: string[] = [];
  beforeAll(async () => {
    const podNames = await livePods();
    result = await loaded(
      'helm upgrade',
      [
        {
          name: 'helm upgrade --wait (resources changed)',
          run: async () => {
            await mustHelm(['upgrade', RELEASE, CHART_DIR, '-n', NS, '--wait', '--timeout=4m', ...IMAGE, '--set', 'resources.requests.cpu=60m', '--set', 'resources.requests.memory=192Mi', '--set', 'resources.limits.memory=512Mi']);
            await mustKubectl(['-n', NS, 'rollout', 'status', 'deployment/spiderpool-iaas-webhook', '--timeout=3m'], { timeoutMs: 200_000 });
          },
        },
      ],
      false,
    );
    before = podNames;
  }, 600_000);

  it('replaced every pod', async () => {
    // Old pods may still be terminating (preStop, grace period) when the rollout is done.
    await until(async () => (await livePods()).every((p) => !before.includes(p)), 'only new webhook pods', { timeoutMs: 120_000, intervalMs: 1000 });
  });

  it('had not one failed admission call', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.refused).toBeGreaterThan(20);
  });
});

describe('3. helm uninstall under load', () => {
  let result: FaultRunResult;
  beforeAll(async () => {
    result = await loaded('helm uninstall', [{ name: 'helm uninstall --wait', run: () => mustHelm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout=4m']).then(() => undefined) }], true);
  }, 600_000);

  it('no write was refused for a reason other than the rules, none failed', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
  });

  it('left nothing: no webhook configuration, Secret, Role, hook object or cluster-scoped object; every write accepted', async () => {
    await expectNothingLeft([NS, 'kube-system']);
    await mustKubectl(['delete', 'namespace', NS, '--timeout=2m'], { timeoutMs: 150_000 });
  });
});

describe('4. helm install with tls.method provided', () => {
  let caPem: string;
  beforeAll(async () => {
    const pems = await generateCertificates({ serviceName: 'spiderpool-iaas-webhook', namespace: NS });
    caPem = pems.caCertPem;
    const b64 = (pem: string) => Buffer.from(pem).toString('base64');
    await mustHelm([
      'install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', '--wait', '--timeout=4m', ...IMAGE,
      '--set', 'tls.method=provided',
      '--set', `tls.provided.tlsCert=${b64(pems.certPem)}`, '--set', `tls.provided.tlsKey=${b64(pems.keyPem)}`, '--set', `tls.provided.tlsCa=${b64(pems.caCertPem)}`,
    ]);
    await guarded();
  }, 600_000);

  it("the pods wrote the configuration with the operator's CA as every caBundle", async () => {
    const vwc = await getJson('validatingwebhookconfiguration', WEBHOOK_CONFIGURATION);
    for (const webhook of vwc.webhooks) expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString()).toBe(caPem);
  });

  it('uninstalls leaving nothing, the provided Secret included', async () => {
    await mustHelm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout=4m']);
    await expectNothingLeft([NS, 'kube-system']);
    await mustKubectl(['delete', 'namespace', NS, '--timeout=2m'], { timeoutMs: 150_000 });
  });
});

describe('5. helm install for Spiderpool in namespace "spiderpool", ConfigMap "my-conf"', () => {
  beforeAll(async () => {
    await mustKubectl(['create', 'namespace', 'spiderpool']);
    await mustKubectl(['apply', '-f', '-'], { stdin: stringify(conf('spiderpool', 'my-conf', '50s')) });
    await mustHelm([
      'install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', '--wait', '--timeout=4m', ...IMAGE,
      '--set', 'spiderpool.namespace=spiderpool', '--set', 'spiderpool.configName=my-conf',
    ]);
    let last = '';
    await until(
      async () => {
        const r = await applyDryRun(conf('spiderpool', 'my-conf', '100s'));
        last = r.stderr;
        return r.code === 1;
      },
      'the webhook to guard spiderpool/my-conf',
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => last },
    );
  }, 600_000);

  it('refuses a bad my-conf in spiderpool, by the rule', async () => {
    const r = await applyDryRun(conf('spiderpool', 'my-conf', '100s'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^The ConfigMap "my-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "100s": /);
  });

  it('does not look at the same ConfigMap in kube-system, nor at spiderpool-conf there', async () => {
    expect((await applyDryRun(conf('kube-system', 'my-conf', '100s'))).code).toBe(0);
    expect((await applyDryRun(conf('kube-system', 'spiderpool-conf', '100s'))).code).toBe(0);
  });

  it('the conf-reader Role is in spiderpool, for my-conf only', async () => {
    const role = await getJson('role', 'spiderpool-iaas-webhook-conf-reader', 'spiderpool');
    expect(role.rules[0].resourceNames).toEqual(['my-conf']);
  });

  it('uninstalls leaving nothing', async () => {
    await mustHelm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout=4m']);
    await expectNothingLeft([NS, 'spiderpool', 'kube-system']);
    await mustKubectl(['delete', 'namespace', NS, 'spiderpool', '--timeout=2m'], { timeoutMs: 150_000 });
  });
});
