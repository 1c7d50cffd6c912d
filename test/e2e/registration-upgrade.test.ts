/**
 * An upgrade from a release whose pods wrote the webhook configuration with cert-manager's
 * `cert-manager.io/inject-ca-from` annotation (the chart's `tls.method: certmanager` and
 * `deploy/overlays/cert-manager` before the pods kept caBundle alone), against the real
 * kube-apiserver: cainjector had taken caBundle with its own server-side apply; the new
 * pods' first apply (`applyWebhookConfiguration`, field manager `spiderpool-iaas-webhook`,
 * the same as the old pods', without the annotation) removes the annotation, so cainjector
 * stops writing, and takes every caBundle back. Server-side apply removes a field that its
 * manager no longer sends when no other manager owns it
 * (https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management).
 */
import { AdmissionregistrationV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { generateCertificates } from '../../src/certs/generate.js';
import { caBundleBase64 } from '../../src/certs/files.js';
import { applyWebhookConfiguration, FIELD_MANAGER } from '../../src/registration/apply.js';
import { readWebhookManifest, webhookConfigurationFor, type WebhookManifest } from '../../src/registration/webhook-configuration.js';
import { apiServerPerFile } from './cluster/apiserver-per-file.js';

const INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';
/** The field manager of cert-manager v1.21's cainjector (its server-side apply of caBundle). */
const CAINJECTOR = 'cert-manager-cainjector';
const TARGET = { service: { name: 'spiderpool-iaas-webhook', namespace: 'spiderpool-iaas-webhook' } };

const kubeConfigOf = apiServerPerFile('registration-upgrade');

const withAnnotations = (manifest: WebhookManifest, annotations: Record<string, string>): WebhookManifest => ({
  ...manifest,
  metadata: { ...manifest.metadata, annotations: { ...(manifest.metadata['annotations'] as Record<string, string> | undefined), ...annotations } },
});

test("the new pods' first apply drops the old release's inject-ca-from annotation and takes caBundle back from cainjector", async () => {
  const shipped = await readWebhookManifest();
  const name = shipped.metadata.name;
  const oldCa = caBundleBase64((await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem);
  const newCa = caBundleBase64((await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem);
  const kubeConfig = kubeConfigOf();
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);

  // The old release: its pods apply the configuration with the annotation...
  await applyWebhookConfiguration(
    kubeConfig,
    webhookConfigurationFor(withAnnotations(shipped, { [INJECT_CA_FROM]: 'spiderpool-iaas-webhook/spiderpool-iaas-webhook-serving' }), TARGET, oldCa),
  );
  // ...and cainjector applies the Certificate's ca.crt into every caBundle, forcing.
  const injected = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: shipped.webhooks.map((w) => ({ name: w.name, clientConfig: { caBundle: newCa } })),
  };
  await api.patchValidatingWebhookConfiguration(
    { name, body: injected, fieldManager: CAINJECTOR, force: true },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
  const before = await api.readValidatingWebhookConfiguration({ name });
  expect(before.metadata?.annotations?.[INJECT_CA_FROM]).toBeDefined();
  expect((before.metadata?.managedFields ?? []).map((f) => f.manager)).toContain(CAINJECTOR);

  // The new release's pods: the same field manager, no annotation, their own CA bundle.
  await applyWebhookConfiguration(kubeConfig, webhookConfigurationFor(shipped, TARGET, oldCa));
  const after = await api.readValidatingWebhookConfiguration({ name });
  expect(after.metadata?.annotations?.[INJECT_CA_FROM]).toBeUndefined();
  expect((after.webhooks ?? []).map((w) => w.clientConfig.caBundle)).toEqual(shipped.webhooks.map(() => oldCa));
  const owners = (after.metadata?.managedFields ?? []).filter((f) => JSON.stringify(f.fieldsV1).includes('"f:caBundle"')).map((f) => f.manager);
  expect(owners).toEqual([FIELD_MANAGER]);
}, 120_000);
