import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_NAMESPACE, DEFAULT_SERVICE_NAME, WEBHOOKS } from '../../src/defaults.js';
import { readWebhookManifest, WEBHOOK_MANIFEST_PATH, webhookConfigurationFor, type WebhookManifest } from '../../src/registration/webhook-configuration.js';

const CA_BUNDLE = 'Q0E=';
const shipped = parse(readFileSync(new URL('../../deploy/base/validatingwebhookconfiguration.yaml', import.meta.url), 'utf8')) as WebhookManifest;

describe('readWebhookManifest', () => {
  it('reads deploy/base/validatingwebhookconfiguration.yaml, the manifest kustomize installs, by default', async () => {
    expect(WEBHOOK_MANIFEST_PATH).toMatch(/deploy\/base\/validatingwebhookconfiguration\.yaml$/);
    expect(await readWebhookManifest()).toEqual(shipped);
  });

  const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('picks the one ValidatingWebhookConfiguration out of rendered multi-document output', async () => {
    const rendered = `apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n${JSON.stringify(shipped)}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n`;
    expect(await readWebhookManifest(file('rendered.yaml', rendered))).toEqual(shipped);
  });

  it('names the file and the problem when it is missing, not YAML, or not a usable configuration', async () => {
    await expect(readWebhookManifest(join(dir, 'absent.yaml'))).rejects.toThrow(/^cannot read the webhook manifest .*absent\.yaml: ENOENT$/);
    await expect(readWebhookManifest(file('bad.yaml', 'a: [\n'))).rejects.toThrow(
      /^the webhook manifest .*bad\.yaml is not YAML: line \d+, column \d+: [^\n]*[^:\n]$/,
    );
    await expect(
      readWebhookManifest(file('mutating.yaml', 'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n')),
    ).rejects.toThrow(
      /mutating\.yaml holds 0 ValidatingWebhookConfigurations; it must hold exactly one \(deploy\/ and its overlays hold none: start from deploy\/base\/validatingwebhookconfiguration\.yaml\)$/,
    );
    const twice = `${JSON.stringify(shipped)}\n---\n${JSON.stringify(shipped)}\n`;
    await expect(readWebhookManifest(file('twice.yaml', twice))).rejects.toThrow(
      /twice\.yaml holds 2 ValidatingWebhookConfigurations; it must hold exactly one$/,
    );
    const wrongVersion = { ...shipped, apiVersion: 'admissionregistration.k8s.io/v1beta1' };
    await expect(readWebhookManifest(file('v1beta1.yaml', JSON.stringify(wrongVersion)))).rejects.toThrow(
      /v1beta1\.yaml is not a usable ValidatingWebhookConfiguration: apiVersion: /,
    );
    const urlOnly = { ...shipped, webhooks: [{ name: 'w', clientConfig: { url: 'https://x' } }] };
    await expect(readWebhookManifest(file('url.yaml', JSON.stringify(urlOnly)))).rejects.toThrow(/webhooks\[0\]\.clientConfig\.service: /);
  });
});

describe('webhookConfigurationFor', () => {
  it('for the Service deploy/ installs, changes nothing but the caBundle', () => {
    const result = webhookConfigurationFor(shipped, { service: { name: DEFAULT_SERVICE_NAME, namespace: DEFAULT_NAMESPACE } }, CA_BUNDLE);
    expect(result).toEqual({
      ...shipped,
      webhooks: shipped.webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: CA_BUNDLE } })),
    });
  });

  it("keeps an overlay's Service when --service and --namespace are not given", () => {
    const overlay = {
      ...shipped,
      webhooks: shipped.webhooks.map((w) => ({ ...w, clientConfig: { service: { ...w.clientConfig.service, name: 'prod-hook', namespace: 'infra' } } })),
    };
    const services = (target: { name?: string; namespace?: string }) =>
      webhookConfigurationFor(overlay, { service: target }, CA_BUNDLE).webhooks.map((w) => 'service' in w.clientConfig && w.clientConfig.service);
    expect(services({})).toEqual(overlay.webhooks.map((w) => w.clientConfig.service));
    const every = <T>(value: T) => shipped.webhooks.map(() => value);
    expect(services({ namespace: 'other' }).map((s) => s && [s.name, s.namespace])).toEqual(every(['prod-hook', 'other']));
    expect(services({ name: 'hook', namespace: undefined }).map((s) => s && [s.name, s.namespace])).toEqual(every(['hook', 'infra']));
  });

  it('points every webhook at another Service, keeping path and port', () => {
    const result = webhookConfigurationFor(shipped, { service: { name: 'hook', namespace: 'infra' } }, CA_BUNDLE);
    expect(result.webhooks.map((w) => w.clientConfig)).toEqual([
      { service: { name: 'hook', namespace: 'infra', path: WEBHOOKS.spiderIPPool.path, port: 443 }, caBundle: CA_BUNDLE },
      { service: { name: 'hook', namespace: 'infra', path: WEBHOOKS.configMap.path, port: 443 }, caBundle: CA_BUNDLE },
      { service: { name: 'hook', namespace: 'infra', path: WEBHOOKS.pod.path, port: 443 }, caBundle: CA_BUNDLE },
      { service: { name: 'hook', namespace: 'infra', path: WEBHOOKS.workload.path, port: 443 }, caBundle: CA_BUNDLE },
      { service: { name: 'hook', namespace: 'infra', path: WEBHOOKS.namespace.path, port: 443 }, caBundle: CA_BUNDLE },
      { service: { name: 'hook', namespace: 'infra', path: WEBHOOKS.spiderIPPool.path, port: 443 }, caBundle: CA_BUNDLE },
    ]);
  });

  it("uses a URL plus each webhook's path instead of the Service, and keeps every other field", () => {
    for (const base of ['https://127.0.0.1:8443', 'https://127.0.0.1:8443/']) {
      const result = webhookConfigurationFor(shipped, { url: base }, CA_BUNDLE);
      expect(result.webhooks.map((w) => w.clientConfig)).toEqual([
        { url: `https://127.0.0.1:8443${WEBHOOKS.spiderIPPool.path}`, caBundle: CA_BUNDLE },
        { url: `https://127.0.0.1:8443${WEBHOOKS.configMap.path}`, caBundle: CA_BUNDLE },
        { url: `https://127.0.0.1:8443${WEBHOOKS.pod.path}`, caBundle: CA_BUNDLE },
        { url: `https://127.0.0.1:8443${WEBHOOKS.workload.path}`, caBundle: CA_BUNDLE },
        { url: `https://127.0.0.1:8443${WEBHOOKS.namespace.path}`, caBundle: CA_BUNDLE },
        { url: `https://127.0.0.1:8443${WEBHOOKS.spiderIPPool.path}`, caBundle: CA_BUNDLE },
      ]);
      const { clientConfig: _a, ...poolWebhook } = result.webhooks[0]!;
      const { clientConfig: _b, ...shippedPoolWebhook } = shipped.webhooks[0]!;
      expect(poolWebhook).toEqual(shippedPoolWebhook);
      expect(result.metadata).toEqual(shipped.metadata);
    }
    expect(webhookConfigurationFor(shipped, { url: 'https://hooks.example/prefix' }, CA_BUNDLE).webhooks[1]!.clientConfig).toEqual({
      url: `https://hooks.example/prefix${WEBHOOKS.configMap.path}`,
      caBundle: CA_BUNDLE,
    });
  });

  it('refuses URLs the API server would not call', () => {
    for (const url of ['http://127.0.0.1:8443', 'https://127.0.0.1:8443?x=1', 'https://127.0.0.1:8443#f', 'https://u:p@127.0.0.1:8443']) {
      expect(() => webhookConfigurationFor(shipped, { url }, CA_BUNDLE)).toThrow(/must be https:\/\/HOST\[:PORT\]\[\/PREFIX\] without user, query or fragment/);
    }
    expect(() => webhookConfigurationFor(shipped, { url: '127.0.0.1:8443' }, CA_BUNDLE)).toThrow(/is not a URL; use https:\/\/HOST:PORT/);
  });
});
