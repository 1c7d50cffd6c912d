/**
 * Two replicas with a mounted CA (`caOverlapMs`, src/registration/ca-bundle.ts) writing one
 * ValidatingWebhookConfiguration on the real kube-apiserver, on a fake clock: a CA change, a
 * `helm rollback` and a replica left behind past the overlap (its kubelet stalled) end with
 * one CA, and once they agree the stored object stops changing (its resourceVersion stays):
 * the caBundle bytes the API server returns are the ones written, so no round rewrites them.
 * Only the replica behind is not Ready (its `webhook-ca-bundle` check), until its CA changes.
 */
import { jest } from '@jest/globals';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { generateCertificates } from '../../src/certs/generate.js';
import { CA_BUNDLE_OVERLAP_MS } from '../../src/registration/ca-bundle.js';
import { startWebhookConfigurationManager, type WebhookConfigurationManager } from '../../src/registration/manage.js';
import { readWebhookManifest } from '../../src/registration/webhook-configuration.js';
import { apiServerPerFile } from './cluster/apiserver-per-file.js';

/** manage.ts's round in `serve` (LIFECYCLE_INTERVAL_MS): the timer's rounds only repeat the test's at the same fake time. */
const ROUND_MS = 10_000;
const KUBELET_DELAY_MS = 67_000;

const kubeConfigOf = apiServerPerFile('registration-ca-bundle');

/** A CA whose notBefore is `hoursLater` hours from now. */
async function caMadeAt(hoursLater: number): Promise<string> {
  const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + hoursLater * 3_600_000);
  try {
    return (await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem;
  } finally {
    clock.mockRestore();
  }
}

test('two replicas through a CA change, a rollback and a stalled replica: one CA at the end of each, and no rewrite once they agree', async () => {
  const [oldCa, newCa] = [await caMadeAt(-2), await caMadeAt(-1)];
  const shipped = await readWebhookManifest();
  const name = shipped.metadata.name;
  const kubeConfig = kubeConfigOf();
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });

  let nowMs = Date.now();
  const serving = { a: oldCa, b: oldCa };
  const replicas = Object.fromEntries(
    (['a', 'b'] as const).map((replica) => [
      replica,
      startWebhookConfigurationManager({
        kubeConfig,
        manifest: shipped,
        target: { service: { name: 'spiderpool-iaas-webhook', namespace: 'spiderpool-iaas-webhook' } },
        caBundlePem: () => serving[replica],
        servingProblem: async () => undefined,
        caOverlapMs: CA_BUNDLE_OVERLAP_MS,
        now: () => nowMs,
        intervalMs: ROUND_MS,
        logger,
      }),
    ]),
  ) as Record<'a' | 'b', WebhookConfigurationManager>;

  const stored = async () => {
    const object = await api.readValidatingWebhookConfiguration({ name });
    const bundles = new Set((object.webhooks ?? []).map((w) => Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8')));
    expect(bundles.size).toBe(1);
    return { bundle: [...bundles][0]!, resourceVersion: object.metadata?.resourceVersion };
  };
  const certificateCount = (pem: string) => pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
  /** Rounds of both replicas, 5 s apart, for `ms` of the fake clock. */
  const run = async (ms: number) => {
    for (const end = nowMs + ms; nowMs < end; nowMs += ROUND_MS / 2) await replicas[Math.round(nowMs / (ROUND_MS / 2)) % 2 === 0 ? 'a' : 'b'].sync();
  };
  /** The kubelet brings `ca` to a, then to b 67 s later; both reload and sync. */
  const change = async (ca: string) => {
    serving.a = ca;
    await replicas.a.sync();
    await run(KUBELET_DELAY_MS);
    serving.b = ca;
    await replicas.b.sync();
  };
  /** After `ms` more rounds the stored object has not changed: its bundle. */
  const expectSettled = async (ms: number) => {
    const before = await stored();
    await run(ms);
    expect(await stored()).toEqual(before);
    return before.bundle;
  };

  try {
    await run(ROUND_MS);
    expect((await stored()).bundle).toBe(oldCa);

    // A CA change: both CAs while the kubelet brings it, the new one alone after the overlap.
    await change(newCa);
    expect(certificateCount((await stored()).bundle)).toBe(2);
    await run(CA_BUNDLE_OVERLAP_MS + ROUND_MS);
    expect(await expectSettled(2 * 60_000)).toBe(newCa);

    // helm rollback to the older CA a while later: the CA backed out leaves after the overlap.
    await run(5 * 60_000);
    await change(oldCa);
    expect(certificateCount((await stored()).bundle)).toBe(2);
    await run(CA_BUNDLE_OVERLAP_MS + ROUND_MS);
    expect(await expectSettled(2 * 60_000)).toBe(oldCa);
    expect([replicas.a.behind(), replicas.b.behind()]).toEqual([undefined, undefined]);

    // A stalled replica: b still on the old CA long after a switched. The newer CA wins, b stops writing.
    await run(5 * 60_000);
    serving.a = newCa;
    await replicas.a.sync();
    await run(CA_BUNDLE_OVERLAP_MS + 2 * ROUND_MS);
    expect(await expectSettled(5 * 60_000)).toBe(newCa);
    expect(
      warnings.filter((w) => /^not Ready: .*: writing nothing \(the newest CA wins\), until caBundle holds this pod's CA or its CA changes$/.test(w)),
    ).toHaveLength(1);
    expect(replicas.a.behind()).toBeUndefined();
    expect(replicas.b.behind()).toMatch(/^this pod's CA was left out of caBundle for a newer one another replica serves /);
    serving.b = newCa;
    expect(replicas.b.behind()).toBeUndefined();
    await replicas.b.sync();
    expect(await expectSettled(2 * 60_000)).toBe(newCa);
    expect(replicas.b.behind()).toBeUndefined();
  } finally {
    replicas.a.stop();
    replicas.b.stop();
  }
}, 240_000);
