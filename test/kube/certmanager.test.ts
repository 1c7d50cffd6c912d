/**
 * The chart with tls.method certmanager on the one-node cluster, against a real
 * cert-manager (cert-manager.ts: its controller and cainjector built from cert-manager's
 * Go module, its CRDs from the same module). In order:
 *
 *   1  helm install while guarded writes keep coming: cert-manager issues the chart's CA
 *      and serving certificate, cainjector writes the CA into every caBundle of the
 *      configuration the pods register; no write refused but by the rules, none failed
 *   2  a renewal forced as `cmctl renew` forces it (the Certificate's Issuing condition
 *      set to True): a new key and certificate in the Secret, the pods take them without
 *      a restart, 0 failed admission calls
 *   3  helm uninstall under load: nothing of the release is left (the Certificates,
 *      Issuers, CertificateRequests and both Secrets included), every write accepted
 *
 * Calls, failures and the worst latency of each loaded step are printed and written to
 * helm-runs.json in the cluster directory (helm.ts).
 */
import { until } from '../helpers/until.js';
import { CHART_DIR, RELEASE } from '../e2e/helm.js';
import { installCertManager, removeCertManager } from './cert-manager.js';
import type { FaultRunResult } from './faults.js';
import { describeUninstallUnderLoad, guarded, IMAGE, livePods, loaded, mustHelm, NS, prepareCluster, WEBHOOK_CONFIGURATION } from './helm.js';
import { getJson, metric, mustKubectl } from './kube.js';

const SERVING = 'spiderpool-iaas-webhook-serving';
const SECRET = 'spiderpool-iaas-webhook-tls';

beforeAll(async () => {
  await prepareCluster();
  await installCertManager();
}, 30 * 60_000);

afterAll(removeCertManager, 300_000);

/** The serving Secret's data, decoded. */
async function servingSecret(): Promise<Record<string, string>> {
  const secret = await getJson('secret', SECRET, NS);
  return Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** Each live webhook pod's count of certificate reloads (its /metrics through the pod proxy). */
async function reloads(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const pod of await livePods()) {
    const text = await mustKubectl(['get', '--raw', `/api/v1/namespaces/${NS}/pods/https:${pod}:8443/proxy/metrics`]);
    counts.set(pod, metric(text, 'spiderpool_iaas_webhook_certificate_reloads_total') ?? 0);
  }
  return counts;
}

describe('1. helm install with tls.method certmanager under load', () => {
  let result: FaultRunResult;
  beforeAll(async () => {
    result = await loaded(
      'helm install (certmanager)',
      [
        {
          name: 'helm install --wait --set tls.method=certmanager',
          run: async () => {
            await mustHelm(['install', RELEASE, CHART_DIR, '-n', NS, '--create-namespace', '--wait', '--timeout=4m', ...IMAGE, '--set', 'tls.method=certmanager']);
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
    expect(result.refused).toBeGreaterThan(10);
  });

  it('cert-manager issued the CA and the serving certificate', async () => {
    await mustKubectl(['-n', NS, 'wait', '--for=condition=Ready', 'certificate/spiderpool-iaas-webhook-ca', `certificate/${SERVING}`, '--timeout=60s']);
    const secret = await getJson('secret', SECRET, NS);
    expect(secret.metadata.annotations['cert-manager.io/certificate-name']).toBe(SERVING);
    expect(secret.metadata.ownerReferences.map((r: any) => `${r.kind}/${r.name}`)).toEqual([`Certificate/${SERVING}`]);
  });

  it("cainjector wrote the Secret's ca.crt into every caBundle", async () => {
    // kubectl get leaves managedFields out unless asked.
    const vwc = JSON.parse(await mustKubectl(['get', 'validatingwebhookconfiguration', WEBHOOK_CONFIGURATION, '-o', 'json', '--show-managed-fields']));
    const secret = await getJson('secret', SECRET, NS);
    expect(vwc.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(`${NS}/${SERVING}`);
    for (const webhook of vwc.webhooks) expect(webhook.clientConfig.caBundle).toBe(secret.data['ca.crt']);
    const managers = (vwc.metadata.managedFields as any[]).filter((f) => f.manager === 'cert-manager-cainjector' && f.operation === 'Apply');
    expect(JSON.stringify(managers.map((f) => f.fieldsV1))).toContain('"f:caBundle"');
  });
});

describe('2. a renewal forced as cmctl renew forces it, under load', () => {
  let result: FaultRunResult;
  let before: Record<string, string>;
  let after: Record<string, string>;
  let reloadsBefore: Map<string, number>;
  beforeAll(async () => {
    before = await servingSecret();
    reloadsBefore = await reloads();
    result = await loaded(
      'certificate renewal (certmanager)',
      [
        {
          name: 'Issuing=True on the serving Certificate, the pods reload',
          run: async () => {
            const condition = { type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'Certificate re-issuance manually triggered' };
            await mustKubectl(['-n', NS, 'patch', `certificate/${SERVING}`, '--subresource=status', '--type=json', '-p', JSON.stringify([{ op: 'add', path: '/status/conditions/-', value: condition }])]);
            await until(async () => (await servingSecret())['tls.crt'] !== before['tls.crt'], 'cert-manager to write the renewed certificate', { timeoutMs: 120_000, intervalMs: 1000 });
            // The kubelet updates the mounted Secret within its sync period; each pod then reloads.
            await until(async () => [...(await reloads())].every(([pod, n]) => n > (reloadsBefore.get(pod) ?? 0)), 'every pod to reload the renewed certificate', {
              timeoutMs: 180_000,
              intervalMs: 2000,
            });
          },
        },
      ],
      false,
    );
    after = await servingSecret();
  }, 600_000);

  it('had not one failed admission call', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.refused).toBeGreaterThan(20);
  });

  it('renewed the key and the certificate under the same CA, as revision 2', async () => {
    expect(after['tls.crt']).not.toBe(before['tls.crt']);
    expect(after['tls.key']).not.toBe(before['tls.key']);
    expect(after['ca.crt']).toBe(before['ca.crt']);
    expect((await getJson('certificate', SERVING, NS)).status.revision).toBe(2);
  });

  it('the same pods serve it (no restart)', async () => {
    expect((await livePods()).sort()).toEqual([...reloadsBefore.keys()].sort());
  });
});

describeUninstallUnderLoad(
  '3. helm uninstall under load',
  'helm uninstall (certmanager)',
  'left nothing: no Certificate, Issuer, CertificateRequest, Secret or webhook configuration; every write accepted',
);
