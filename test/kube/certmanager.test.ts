/**
 * The chart with tls.method certmanager on the one-node cluster, against a real
 * cert-manager (cert-manager.ts: its controller and cainjector built from cert-manager's
 * Go module, its CRDs from the same module). In order:
 *
 *   1  helm install while guarded writes keep coming: cert-manager issues the chart's CA
 *      and serving certificate, the pods write its CA into every caBundle of the
 *      configuration they register (no cainjector: it would write the new CA alone during
 *      a CA change); no write refused but by the rules, none failed
 *   2  a renewal forced as `cmctl renew` forces it (the Certificate's Issuing condition
 *      set to True): a new key and certificate in the Secret, the pods take them without
 *      a restart, 0 failed admission calls
 *   3  a CA change, in two loaded steps: the CA Certificate re-issued with a new key
 *      (cert-manager re-issues no leaf for it: nothing the API server sees changes), then
 *      the serving certificate re-issued from the new CA, whose Secret's ca.crt is the new
 *      CA alone; the kubelet brings it to each pod at its own moment, and the pods write
 *      a caBundle holding both CAs meanwhile (src/registration/ca-bundle.ts): 0 failed
 *      admission calls in either step
 *   4  helm uninstall under load: nothing of the release is left (the Certificates,
 *      Issuers, CertificateRequests and both Secrets included), every write accepted
 *
 * Calls, failures and the worst latency of each loaded step are printed and written to
 * helm-runs.json in the cluster directory (helm.ts).
 */
import { until } from '../helpers/until.js';
import { installCertManager, removeCertManager } from './cert-manager.js';
import type { FaultRunResult } from './faults.js';
import { describeUninstallUnderLoad, guarded, helmChart, livePods, loaded, NS, prepareCluster, underLoad, WEBHOOK_CONFIGURATION } from './helm.js';
import { getJson, metric, mustKubectl } from './kube.js';
import { TOOL_BUILD_MS, toolsBuilt } from './tools-built.js';

const SERVING = 'spiderpool-iaas-webhook-serving';
const SECRET = 'spiderpool-iaas-webhook-tls';
const CA = 'spiderpool-iaas-webhook-ca';

// Built in the background while the files before this one ran (tools-built.ts).
beforeAll(() => toolsBuilt('helm', 'cert-manager'), TOOL_BUILD_MS);

beforeAll(async () => {
  await prepareCluster();
  await installCertManager();
}, 30 * 60_000);

afterAll(removeCertManager, 300_000);

/** Secret `name`'s data, decoded (the serving Secret by default). */
async function servingSecret(name = SECRET): Promise<Record<string, string>> {
  const secret = await getJson('secret', name, NS);
  return Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** The certificates of a PEM text, one block each. */
const pemBlocks = (pem: string): string[] => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];

/** Each webhook's caBundle, as its certificates' PEM blocks. */
async function caBundles(): Promise<string[][]> {
  const vwc = await getJson('validatingwebhookconfiguration', WEBHOOK_CONFIGURATION);
  return (vwc.webhooks as any[]).map((w) => pemBlocks(Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8')));
}

/** Re-issues Certificate `name` as `cmctl renew` does: its Issuing condition set to True. */
async function forceIssuing(name: string): Promise<void> {
  const condition = { type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'Certificate re-issuance manually triggered' };
  await mustKubectl([
    '-n',
    NS,
    'patch',
    `certificate/${name}`,
    '--subresource=status',
    '--type=json',
    '-p',
    JSON.stringify([{ op: 'add', path: '/status/conditions/-', value: condition }]),
  ]);
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
  const result = underLoad(
    'helm install (certmanager)',
    {
      name: 'helm install --wait --set tls.method=certmanager',
      run: async () => {
        await helmChart('install', { 'tls.method': 'certmanager' });
        await guarded();
      },
    },
    { unguardedOk: true },
  );

  it('the webhook judged writes once a pod had written its configuration', () => {
    expect(result().refused).toBeGreaterThan(10);
  });

  it('cert-manager issued the CA and the serving certificate', async () => {
    await mustKubectl(['-n', NS, 'wait', '--for=condition=Ready', 'certificate/spiderpool-iaas-webhook-ca', `certificate/${SERVING}`, '--timeout=60s']);
    const secret = await getJson('secret', SECRET, NS);
    expect(secret.metadata.annotations['cert-manager.io/certificate-name']).toBe(SERVING);
    expect(secret.metadata.ownerReferences.map((r: any) => `${r.kind}/${r.name}`)).toEqual([`Certificate/${SERVING}`]);
  });

  it("the pods wrote the Secret's ca.crt into every caBundle; no cainjector annotation", async () => {
    // kubectl get leaves managedFields out unless asked.
    const vwc = JSON.parse(await mustKubectl(['get', 'validatingwebhookconfiguration', WEBHOOK_CONFIGURATION, '-o', 'json', '--show-managed-fields']));
    const secret = await getJson('secret', SECRET, NS);
    expect(vwc.metadata.annotations['cert-manager.io/inject-ca-from']).toBeUndefined();
    for (const webhook of vwc.webhooks) expect(webhook.clientConfig.caBundle).toBe(secret.data['ca.crt']);
    expect((vwc.metadata.managedFields as any[]).map((f) => f.manager)).not.toContain('cert-manager-cainjector');
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
            await forceIssuing(SERVING);
            await until(async () => (await servingSecret())['tls.crt'] !== before['tls.crt'], 'cert-manager to write the renewed certificate', {
              timeoutMs: 120_000,
              intervalMs: 1000,
            });
            // The kubelet updates the mounted Secret within its sync period; each pod then reloads.
            await until(
              async () => [...(await reloads())].every(([pod, n]) => n > (reloadsBefore.get(pod) ?? 0)),
              'every pod to reload the renewed certificate',
              {
                timeoutMs: 180_000,
                intervalMs: 2000,
              },
            );
          },
        },
      ],
      {},
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

describe('3. a CA change under load: the CA re-issued with a new key, then the serving certificate from it', () => {
  let reissued: FaultRunResult;
  let served: FaultRunResult;
  let caBefore: Record<string, string>;
  let caAfter: Record<string, string>;
  let servingBefore: Record<string, string>;
  let servingBetween: Record<string, string>;
  let servingAfter: Record<string, string>;
  let reloadsBefore: Map<string, number>;
  beforeAll(async () => {
    caBefore = await servingSecret(CA);
    servingBefore = await servingSecret();
    reloadsBefore = await reloads();
    reissued = await loaded(
      'CA change, step 1: the CA re-issued (certmanager)',
      [
        {
          name: 'Issuing=True on the CA Certificate',
          run: async () => {
            await forceIssuing(CA);
            await until(async () => (await servingSecret(CA))['tls.crt'] !== caBefore['tls.crt'], 'cert-manager to write the new CA', {
              timeoutMs: 120_000,
              intervalMs: 1000,
            });
          },
        },
      ],
      {},
    );
    caAfter = await servingSecret(CA);
    servingBetween = await servingSecret();
    const newCa = pemBlocks(caAfter['tls.crt']!)[0]!;
    served = await loaded(
      'CA change, step 2: the serving certificate from the new CA (certmanager)',
      [
        {
          name: 'Issuing=True on the serving Certificate, every pod reloads, the caBundle holds the new CA',
          run: async () => {
            await forceIssuing(SERVING);
            await until(async () => pemBlocks((await servingSecret())['ca.crt']!).includes(newCa), 'cert-manager to write the certificate of the new CA', {
              timeoutMs: 120_000,
              intervalMs: 1000,
            });
            const written = performance.now();
            await until(
              async () => [...(await reloads())].every(([pod, n]) => n > (reloadsBefore.get(pod) ?? 0)),
              'every pod to reload the certificate of the new CA',
              {
                timeoutMs: 180_000,
                intervalMs: 2000,
              },
            );
            console.log(
              `CA change: every pod served the new certificate ${Math.round((performance.now() - written) / 1000)} s after cert-manager wrote it (the kubelet's delay)`,
            );
            await until(async () => (await caBundles()).every((blocks) => blocks.includes(newCa)), 'every caBundle to hold the new CA', {
              timeoutMs: 60_000,
              intervalMs: 1000,
            });
          },
        },
      ],
      {},
    );
    servingAfter = await servingSecret();
  }, 900_000);

  it('step 1: a new CA key and certificate; the serving certificate is not re-issued for it; not one failed admission call', () => {
    expect(caAfter['tls.key']).not.toBe(caBefore['tls.key']);
    expect(caAfter['tls.crt']).not.toBe(caBefore['tls.crt']);
    expect(servingBetween).toEqual(servingBefore);
    expect(reissued.failures).toEqual([]);
    expect(reissued.failed).toBe(0);
  });

  it("step 2: the Secret's ca.crt is the new CA alone, every caBundle holds the old and the new; not one failed admission call", async () => {
    expect(pemBlocks(servingAfter['ca.crt']!)).toEqual(pemBlocks(caAfter['tls.crt']!));
    const oldCa = pemBlocks(caBefore['tls.crt']!)[0]!;
    for (const blocks of await caBundles()) expect(blocks.sort()).toEqual([oldCa, pemBlocks(caAfter['tls.crt']!)[0]!].sort());
    expect(served.failures).toEqual([]);
    expect(served.failed).toBe(0);
    expect(served.refused).toBeGreaterThan(20);
  });

  it('the same pods serve it (no restart)', async () => {
    expect((await livePods()).sort()).toEqual([...reloadsBefore.keys()].sort());
  });
});

describeUninstallUnderLoad(
  '4. helm uninstall under load',
  'helm uninstall (certmanager)',
  'left nothing: no Certificate, Issuer, CertificateRequest, Secret or webhook configuration; every write accepted',
);
