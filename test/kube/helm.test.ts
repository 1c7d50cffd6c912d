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
 * of install.test.ts prints them, and written to helm-runs.json in the cluster directory
 * (helm.ts). tls.method certmanager, with a real cert-manager: certmanager.test.ts.
 */
import { stringify } from 'yaml';
import { generateCertificates } from '../../src/certs/generate.js';
import { until } from '../helpers/until.js';
import { CHART_DIR, RELEASE } from '../e2e/helm.js';
import type { FaultRunResult } from './faults.js';
import {
  applyDryRun,
  conf,
  describeUninstallUnderLoad,
  expectNothingLeft,
  guarded,
  IMAGE,
  livePods,
  loaded,
  mustHelm,
  NS,
  prepareCluster,
  WEBHOOK_CONFIGURATION,
} from './helm.js';
import { getJson, mustKubectl } from './kube.js';
import { TOOL_BUILD_MS, toolsBuilt } from './tools-built.js';

// Built in the background while the files before this one ran (tools-built.ts).
beforeAll(() => toolsBuilt('helm'), TOOL_BUILD_MS);

beforeAll(prepareCluster, 30 * 60_000);

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
            await mustHelm([
              'upgrade',
              RELEASE,
              CHART_DIR,
              '-n',
              NS,
              '--wait',
              '--timeout=4m',
              ...IMAGE,
              '--set',
              'resources.requests.cpu=60m',
              '--set',
              'resources.requests.memory=192Mi',
              '--set',
              'resources.limits.memory=512Mi',
            ]);
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

describeUninstallUnderLoad(
  '3. helm uninstall under load',
  'helm uninstall',
  'left nothing: no webhook configuration, Secret, Role, hook object or cluster-scoped object; every write accepted',
);

describe('4. helm install with tls.method provided', () => {
  let caPem: string;
  beforeAll(async () => {
    const pems = await generateCertificates({ serviceName: 'spiderpool-iaas-webhook', namespace: NS });
    caPem = pems.caCertPem;
    const b64 = (pem: string) => Buffer.from(pem).toString('base64');
    await mustHelm([
      'install',
      RELEASE,
      CHART_DIR,
      '-n',
      NS,
      '--create-namespace',
      '--wait',
      '--timeout=4m',
      ...IMAGE,
      '--set',
      'tls.method=provided',
      '--set',
      `tls.provided.tlsCert=${b64(pems.certPem)}`,
      '--set',
      `tls.provided.tlsKey=${b64(pems.keyPem)}`,
      '--set',
      `tls.provided.tlsCa=${b64(pems.caCertPem)}`,
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
      'install',
      RELEASE,
      CHART_DIR,
      '-n',
      NS,
      '--create-namespace',
      '--wait',
      '--timeout=4m',
      ...IMAGE,
      '--set',
      'spiderpool.namespace=spiderpool',
      '--set',
      'spiderpool.configName=my-conf',
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
