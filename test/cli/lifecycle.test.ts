/**
 * `serve --tls-secret --manage-webhook-configuration` as the CLI composes them, against a
 * fake API server on loopback: the Secret made, the server started on its pair, the
 * configuration written only once the server answers, with the bundle it serves with.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { collectAnnotation, parseObjectName } from '../../src/cli/arguments.js';
import { manageWebhookConfiguration, provisionCertificates, webhookCaBundleReadiness, type LifecycleFlags } from '../../src/cli/lifecycle.js';
import { generateCertificates } from '../../src/certs/generate.js';
import { readinessReport } from '../../src/kubernetes/healthz.js';
import { startServer } from '../../src/server/serve.js';
import { ENDPOINT_SLICES, endpointSlice, SECRETS, startFakeObjectStore, WEBHOOK_CONFIGURATIONS, type FakeObjectStore } from '../cluster/fake-object-store.js';
import { writeKubeconfig } from '../helpers/kubeconfig.js';

jest.setTimeout(60_000);
const logger = pino({ level: 'silent' });

let store: FakeObjectStore;
let dir: string;
let flags: LifecycleFlags;
beforeEach(async () => {
  store = await startFakeObjectStore();
  // As the install creates it: empty, for the pods to fill.
  store.put(SECRETS('ns'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'webhook-tls', namespace: 'ns' } });
  dir = await mkdtemp(join(tmpdir(), 'lifecycle-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const server = store.kubeConfig.getCurrentCluster()!.server;
  await writeKubeconfig(kubeconfig, { server, insecure: true });
  flags = {
    tlsSecret: 'webhook-tls',
    manageWebhookConfiguration: 'webhook',
    webhookConfigurationAnnotation: [['cert-manager.io/inject-ca-from', 'ns/cert']],
    namespace: 'ns',
    service: 'svc',
    certValidity: 8760 * 3600_000,
    caValidity: 87600 * 3600_000,
    kubeconfig,
    certDir: join(dir, 'certs'),
    host: '127.0.0.1',
    configmapName: 'my-conf',
    configmapNamespace: 'spiderpool',
  };
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('serve --tls-secret --manage-webhook-configuration', () => {
  it('serves the pair from the Secret and writes the configuration with its bundle once the server answers', async () => {
    const secret = await provisionCertificates(flags, logger);
    expect(store.objects.has(`${SECRETS('ns')}/webhook-tls`)).toBe(true);
    const server = await startServer({ port: 0, host: '127.0.0.1', certDir: flags.certDir, generateCerts: false, logger });
    const caPem = server.caCertPem;
    const manager = await manageWebhookConfiguration(flags, server, () => caPem, logger);
    // The API server would find no endpoint of the Service to call: nothing is written yet.
    store.put(ENDPOINT_SLICES('ns'), endpointSlice('svc', false));
    await manager!.sync();
    expect(store.objects.has(`${WEBHOOK_CONFIGURATIONS}/webhook`)).toBe(false);
    store.put(ENDPOINT_SLICES('ns'), endpointSlice('svc', true));
    await manager!.sync();
    manager!.stop();
    secret!.stop();
    await server.stop();
    const written = store.objects.get(`${WEBHOOK_CONFIGURATIONS}/webhook`)!;
    expect(Buffer.from(store.objects.get(`${SECRETS('ns')}/webhook-tls`)!['data']['ca.crt'], 'base64').toString()).toBe(caPem);
    expect(written['webhooks'].map((w: any) => w.clientConfig)).toEqual(
      written['webhooks'].map((w: any) => ({
        service: { ...w.clientConfig.service, name: 'svc', namespace: 'ns' },
        caBundle: Buffer.from(caPem!).toString('base64'),
      })),
    );
    expect(written['metadata'].annotations).toMatchObject({ 'cert-manager.io/inject-ca-from': 'ns/cert', 'admissions.enforcer/disabled': 'true' });
    const conf = written['webhooks'].find((w: any) => w.clientConfig.service.path === '/validate-configmap');
    expect(conf.namespaceSelector.matchExpressions[0].values).toEqual(['spiderpool']);
    expect(conf.matchConditions[0].expression).toBe("object.metadata.name == 'my-conf'");
  });

  it('without --tls-secret (a mounted CA, which changes without an overlap), keeps the newer CA another replica serves in caBundle', async () => {
    // The certificates for svc.ns.svc in the directory, as a mounted Secret would hold them.
    (await provisionCertificates(flags, logger))!.stop();
    const server = await startServer({ port: 0, host: '127.0.0.1', certDir: flags.certDir, generateCerts: false, logger });
    const later = Date.now() + 3_600_000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    const newer = (await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem;
    clock.mockRestore();
    store.put(WEBHOOK_CONFIGURATIONS, {
      metadata: { name: 'webhook' },
      webhooks: [{ name: 'other.example.io', clientConfig: { caBundle: Buffer.from(newer).toString('base64') } }],
    });
    store.put(ENDPOINT_SLICES('ns'), endpointSlice('svc', true));
    const bundles = async (f: LifecycleFlags) => {
      const manager = await manageWebhookConfiguration(f, server, () => server.caCertPem, logger);
      await manager!.sync();
      manager!.stop();
      return new Set(
        store.objects.get(`${WEBHOOK_CONFIGURATIONS}/webhook`)!['webhooks'].map(
          (w: any) =>
            Buffer.from(w.clientConfig.caBundle, 'base64')
              .toString()
              .match(/BEGIN CERTIFICATE/g)!.length,
        ),
      );
    };
    try {
      expect(await bundles({ ...flags, tlsSecret: undefined })).toEqual(new Set([2]));
      // With --tls-secret the bundle is the server's alone.
      expect(await bundles(flags)).toEqual(new Set([1]));
    } finally {
      await server.stop();
    }
  });

  it('does nothing without its flags', async () => {
    const none = { ...flags, tlsSecret: undefined, manageWebhookConfiguration: undefined };
    expect(await provisionCertificates(none, logger)).toBeUndefined();
    expect(await manageWebhookConfiguration(none, { port: 1 }, () => undefined, logger)).toBeUndefined();
    expect(store.requests).toEqual([]);
  });

  it.each([
    [{ namespace: undefined }, "--tls-secret needs the pod's namespace: pass --namespace or set POD_NAMESPACE (the downward API's metadata.namespace)"],
    [{ kubeconfig: '/nonexistent/kubeconfig' }, /--kubeconfig.*\/nonexistent\/kubeconfig/],
    [{ caValidity: 60_000 }, '--ca-validity must be at least 180s (a CA change overlaps for a sixth of it)'],
    [{ certValidity: 60_000 }, '--cert-validity must be at least 90s (it is renewed with a third left)'],
    [{ certValidity: 3600_000, caValidity: 3600_000 }, /^the serving certificate's validity \(3600s\) must be at most half the CA's \(3600s\)/],
  ])('refuses %j in one line', async (change, message) => {
    await expect(provisionCertificates({ ...flags, ...change }, logger)).rejects.toThrow(message);
  });

  it('refuses --manage-webhook-configuration without a namespace', async () => {
    await expect(manageWebhookConfiguration({ ...flags, namespace: '' }, { port: 1 }, () => undefined, logger)).rejects.toThrow(
      "--manage-webhook-configuration needs the pod's namespace",
    );
  });
});

describe('webhookCaBundleReadiness', () => {
  it('fails /readyz while the manager judges this pod behind, passes before it starts and after; none without --manage-webhook-configuration', () => {
    let manager: { behind(): string | undefined } | undefined;
    let behind: string | undefined = "this pod's CA was left out of caBundle";
    const checks = webhookCaBundleReadiness(flags, () => manager);
    expect(readinessReport(checks, false)).toEqual({ ready: true, text: 'ok\n' });
    manager = { behind: () => behind };
    expect(readinessReport(checks, false)).toEqual({
      ready: false,
      text: "[-]webhook-ca-bundle failed: this pod's CA was left out of caBundle\nreadyz check failed\n",
    });
    behind = undefined;
    expect(readinessReport(checks, true).text).toBe('[+]webhook-ca-bundle ok\nreadyz check passed\n');
    expect(webhookCaBundleReadiness({ manageWebhookConfiguration: undefined }, () => manager)).toEqual([]);
  });
});

describe('flag parsers', () => {
  it('parseObjectName takes a DNS-1123 subdomain only', () => {
    expect(parseObjectName('spiderpool-iaas-webhook.tls')).toBe('spiderpool-iaas-webhook.tls');
    for (const bad of ['Upper', '-x', 'a_b', 'x'.repeat(254), '']) expect(() => parseObjectName(bad)).toThrow(InvalidArgumentError);
  });
  it('collectAnnotation takes KEY=VALUE, the value may hold "="', () => {
    expect(collectAnnotation('a/b=c=d', [['x', 'y']])).toEqual([
      ['x', 'y'],
      ['a/b', 'c=d'],
    ]);
    expect(() => collectAnnotation('novalue', [])).toThrow('must be KEY=VALUE, e.g. example.com/owner=network-team');
    expect(() => collectAnnotation('=v', [])).toThrow(InvalidArgumentError);
  });
});
