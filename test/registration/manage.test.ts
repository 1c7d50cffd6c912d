import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import { generateCertificates, type CertificateBundle } from '../../src/certs/generate.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { caBundlesMatch, servingProblem, startWebhookConfigurationManager, type WebhookConfigurationManagerOptions } from '../../src/registration/manage.js';
import { unregisterWebhook } from '../../src/registration/unregister.js';
import { forSpiderpoolConf, readWebhookManifest, webhookConfigurationFor, type WebhookManifest } from '../../src/registration/webhook-configuration.js';
import { CLUSTER_ROLES, startFakeObjectStore, WEBHOOK_CONFIGURATIONS, type FakeObjectStore } from '../cluster/fake-object-store.js';
import { until } from '../helpers/until.js';

jest.setTimeout(60_000);

const PEM_A = '-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n';
const PEM_B = '-----BEGIN CERTIFICATE-----\nQg==\n-----END CERTIFICATE-----\n';
const b64 = (text: string) => Buffer.from(text).toString('base64');
const NAME = 'my-webhook';
const PATH = `${WEBHOOK_CONFIGURATIONS}/${NAME}`;

let store: FakeObjectStore;
let manifest: WebhookManifest;
let lines: { msg: string; level: number }[];
const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });

beforeAll(async () => {
  const shipped = await readWebhookManifest();
  manifest = { ...shipped, metadata: { ...shipped.metadata, name: NAME } };
});
beforeEach(async () => {
  store = await startFakeObjectStore();
  lines = [];
});
afterEach(() => store.close());

function manager(overrides: Partial<WebhookConfigurationManagerOptions> = {}) {
  return startWebhookConfigurationManager({
    kubeConfig: store.kubeConfig,
    manifest,
    target: { service: { name: 'svc', namespace: 'ns' } },
    caBundlePem: () => PEM_A,
    servingProblem: async () => undefined,
    intervalMs: 3_600_000,
    logger,
    ...overrides,
  });
}
const patches = () => store.requests.filter((r) => r.method === 'PATCH');
const storedBundles = () => ((store.objects.get(PATH)?.['webhooks'] ?? []) as { clientConfig: { caBundle: string } }[]).map((w) => w.clientConfig.caBundle);

describe('startWebhookConfigurationManager', () => {
  it('writes nothing while the server does not answer with the bundle, saying why once', async () => {
    const m = manager({ servingProblem: async () => '/readyz answers 503' });
    await m.sync();
    await m.sync();
    m.stop();
    expect(patches()).toHaveLength(0);
    expect(lines.map((l) => l.msg)).toEqual([
      'not writing the webhook configuration yet: the server does not answer with this CA bundle yet: /readyz answers 503',
    ]);
  });

  it('writes the whole configuration once serving: every webhook with the bundle, calling the Service given', async () => {
    let problem: string | undefined = 'not listening';
    const m = manager({ servingProblem: async () => problem });
    await m.sync();
    problem = undefined;
    await m.sync();
    m.stop();
    expect(patches()).toHaveLength(1);
    expect(JSON.parse(patches()[0]!.body)).toEqual(webhookConfigurationFor(manifest, { service: { name: 'svc', namespace: 'ns' } }, b64(PEM_A)));
    expect(storedBundles().every((bundle) => bundle === b64(PEM_A))).toBe(true);
  });

  it('keeps every caBundle equal to the bundle: after a renewal, and after someone else changed one', async () => {
    let pem = PEM_A;
    const m = manager({ caBundlePem: () => pem });
    await m.sync();
    await m.sync();
    expect(patches()).toHaveLength(1);
    pem = PEM_A + PEM_B;
    await m.sync();
    expect(patches()).toHaveLength(2);
    expect(new Set(storedBundles())).toEqual(new Set([b64(PEM_A + PEM_B)]));
    const stored = store.objects.get(PATH)!;
    stored['webhooks'][1].clientConfig.caBundle = b64(PEM_B);
    await m.sync();
    m.stop();
    expect(patches()).toHaveLength(3);
    expect(new Set(storedBundles())).toEqual(new Set([b64(PEM_A + PEM_B)]));
  });

  it('does not write the configuration back once it was deleted (an uninstall removes it while the pods still run)', async () => {
    const m = manager();
    await m.sync();
    store.objects.delete(PATH);
    await m.sync();
    m.stop();
    expect(patches()).toHaveLength(1);
    expect(store.objects.has(PATH)).toBe(false);
    expect(lines.map((l) => l.msg)).toContain('not writing the webhook configuration yet: it was deleted (an uninstall?); restart the pods to write it again');
  });

  it('makes the ClusterRole its owner when asked, and writes nothing while that ClusterRole is absent', async () => {
    const m = manager({ ownerClusterRole: 'spiderpool-iaas-webhook' });
    await m.sync();
    expect(patches()).toHaveLength(0);
    expect(lines.map((l) => l.msg)).toEqual([
      'not writing the webhook configuration yet: its owner, ClusterRole spiderpool-iaas-webhook, does not exist (an uninstall?)',
    ]);
    store.put(CLUSTER_ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'spiderpool-iaas-webhook' } });
    await m.sync();
    m.stop();
    const uid = store.objects.get(`${CLUSTER_ROLES}/spiderpool-iaas-webhook`)!['metadata'].uid;
    expect(JSON.parse(patches()[0]!.body).metadata.ownerReferences).toEqual([
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'spiderpool-iaas-webhook', uid },
    ]);
  });

  it('waits, without writing, while there is no ca.crt', async () => {
    const m = manager({ caBundlePem: () => undefined });
    await m.sync();
    m.stop();
    expect(patches()).toHaveLength(0);
    expect(lines.map((l) => l.msg)).toEqual(['not writing the webhook configuration yet: the certificate directory has no ca.crt to take the caBundle from']);
  });

  it('logs a refused write in one line and tries again at the next round', async () => {
    store.refuse = (r) => (r.method === 'PATCH' ? { status: 403, message: 'validatingwebhookconfigurations "my-webhook" is forbidden' } : undefined);
    const m = manager();
    await m.sync();
    store.refuse = undefined;
    await m.sync();
    m.stop();
    expect(lines[0]).toMatchObject({
      msg: 'webhook configuration not written; trying again',
      err: expect.stringMatching(/refused the ValidatingWebhookConfiguration: validatingwebhookconfigurations "my-webhook" is forbidden$/),
    });
    expect(store.objects.has(PATH)).toBe(true);
  });

  it('abandons a round the API server stops answering mid-round, runs the next ones, and writes at the first after it answers again', async () => {
    let pem = PEM_A;
    store.put(CLUSTER_ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'owner' } });
    const m = manager({ caBundlePem: () => pem, ownerClusterRole: 'owner', intervalMs: 100, callTimeoutMs: 500 });
    try {
      await m.sync();
      expect(storedBundles().every((bundle) => bundle === b64(PEM_A))).toBe(true);
      // A renewal: the round reads the configuration (answered), then the owner's read is accepted and never answered.
      pem = PEM_A + PEM_B;
      store.hang = (request) => request.path.startsWith(CLUSTER_ROLES);
      await until(() => store.hung.count >= 3, 'three rounds to reach the silent API server', {
        timeoutMs: 20_000,
        describe: () => JSON.stringify(store.hung),
      });
      // A sync asked meanwhile ends (with the deadline) instead of queueing behind the hung round.
      await m.sync();
      await until(() => store.hung.closedByClient >= 2, 'the abandoned requests to close their connections', { describe: () => JSON.stringify(store.hung) });
      expect(patches()).toHaveLength(1);
      const ownerReads = () => store.requests.filter((r) => r.path.startsWith(CLUSTER_ROLES)).length;
      const roundsBefore = ownerReads();
      store.hang = undefined;
      await until(() => patches().length === 2, 'the new bundle to be written', { timeoutMs: 20_000 });
      expect(new Set(storedBundles())).toEqual(new Set([b64(PEM_A + PEM_B)]));
      // The first round after it answers again writes (two when a round began while the last check ran).
      const rounds = ownerReads() - roundsBefore;
      expect(rounds).toBeGreaterThanOrEqual(1);
      expect(rounds).toBeLessThanOrEqual(2);
    } finally {
      m.stop();
    }
  });
});

describe('caBundlesMatch', () => {
  const desired = () => webhookConfigurationFor(manifest, { service: {} }, b64(PEM_A));
  it('is true only when every webhook is stored with the same caBundle', () => {
    expect(caBundlesMatch(desired(), desired())).toBe(true);
    expect(caBundlesMatch(desired(), undefined)).toBe(false);
    expect(caBundlesMatch(desired(), { ...desired(), webhooks: desired().webhooks.slice(1) })).toBe(false);
    const other = desired();
    other.webhooks[0]!.clientConfig.caBundle = b64(PEM_B);
    expect(caBundlesMatch(desired(), other)).toBe(false);
  });
});

describe('servingProblem', () => {
  let bundle: CertificateBundle;
  let otherCa: string;
  let server: https.Server;
  let status = 200;
  beforeAll(async () => {
    bundle = await generateCertificates({ serviceName: 'svc', namespace: 'ns' });
    otherCa = (await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem;
    server = https.createServer({ cert: bundle.certPem, key: bundle.keyPem }, (_req, res) => res.writeHead(status).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  const endpoint = () => ({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, serverName: 'svc.ns.svc' });

  it('is none when /readyz answers 200 over TLS verified with the bundle for <service>.<namespace>.svc', async () => {
    status = 200;
    expect(await servingProblem(endpoint(), bundle.caCertPem)).toBeUndefined();
  });
  it('names a bundle that does not verify the certificate, a wrong name and an unready server', async () => {
    expect(await servingProblem(endpoint(), otherCa)).toMatch(/^its own HTTPS endpoint failed with the CA bundle: /);
    expect(await servingProblem({ ...endpoint(), serverName: 'svc.other.svc' }, bundle.caCertPem)).toMatch(
      /Hostname\/IP does not match certificate's altnames/,
    );
    status = 503;
    expect(await servingProblem(endpoint(), bundle.caCertPem)).toBe('/readyz answers 503');
  });
});

describe('forSpiderpoolConf', () => {
  it("points the ConfigMap webhook's namespaceSelector and matchCondition at the ConfigMap, leaving the other webhooks as they are", () => {
    const moved = forSpiderpoolConf(manifest, WEBHOOKS.configMap.path, { name: 'my-conf', namespace: 'spiderpool' });
    const conf = moved.webhooks.find((w) => w.clientConfig.service.path === WEBHOOKS.configMap.path)!;
    expect(conf['namespaceSelector']).toEqual({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['spiderpool'] }] });
    expect(conf['matchConditions']).toEqual([{ name: 'is-spiderpool-conf', expression: "object.metadata.name == 'my-conf'" }]);
    expect(moved.webhooks.filter((w) => w !== conf)).toEqual(manifest.webhooks.filter((w) => w.clientConfig.service.path !== WEBHOOKS.configMap.path));
  });
  it('refuses a manifest without that webhook', () => {
    expect(() => forSpiderpoolConf(manifest, '/absent', { name: 'x', namespace: 'y' })).toThrow(
      'the webhook manifest has no webhook for /absent with the matchCondition is-spiderpool-conf',
    );
  });
});

describe('unregisterWebhook', () => {
  it('deletes the configuration, and says absent when there is none', async () => {
    store.put(WEBHOOK_CONFIGURATIONS, { ...manifest });
    expect(await unregisterWebhook(store.kubeConfig, NAME)).toBe('deleted');
    expect(store.objects.has(PATH)).toBe(false);
    expect(await unregisterWebhook(store.kubeConfig, NAME)).toBe('absent');
  });
  it('names the permission when forbidden, and the server when unreachable', async () => {
    store.refuse = () => ({ status: 403, message: 'forbidden here' });
    await expect(unregisterWebhook(store.kubeConfig, NAME)).rejects.toThrow(
      /^the API server at http:\/\/127\.0\.0\.1:\d+ refused to delete ValidatingWebhookConfiguration my-webhook: forbidden here \(needs delete on validatingwebhookconfigurations\/my-webhook\)$/,
    );
    await store.close();
    await expect(unregisterWebhook(store.kubeConfig, NAME)).rejects.toThrow(
      /^The connection to the server 127\.0\.0\.1:\d+ was refused - did you specify the right host or port\? \(context "[^"]+", server http:\/\/127\.0\.0\.1:\d+\)$/,
    );
    store = await startFakeObjectStore();
  });
});

describe('startWebhookConfigurationManager with caOverlapMs (a CA from a mounted Secret)', () => {
  const OVERLAP_MS = 600_000;
  let oldCa: string;
  let newCa: string;
  beforeAll(async () => {
    oldCa = (await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem;
    const later = Date.now() + 3_600_000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      newCa = (await generateCertificates({ serviceName: 'svc', namespace: 'ns' })).caCertPem;
    } finally {
      clock.mockRestore();
    }
  });
  const certificatesOf = (b64bundle: string) =>
    Buffer.from(b64bundle, 'base64')
      .toString('utf8')
      .match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;

  it('writes the old and the new CA through a change, drops the old one after the overlap, and a replica left behind stops writing', async () => {
    let t = Date.now() + 7_200_000;
    let ahead = oldCa;
    const first = manager({ caBundlePem: () => ahead, caOverlapMs: OVERLAP_MS, now: () => t });
    await first.sync();
    expect(new Set(storedBundles())).toEqual(new Set([b64(oldCa)]));
    // The kubelet brought the new CA to this replica first.
    ahead = newCa;
    t += 1000;
    await first.sync();
    const both = storedBundles()[0]!;
    expect(certificatesOf(both)).toBe(2);
    expect(new Set(storedBundles())).toEqual(new Set([both]));
    // A replica still on the old CA: the newer CA stays, the bytes too.
    const behind = manager({ caBundlePem: () => oldCa, caOverlapMs: OVERLAP_MS, now: () => t });
    await behind.sync();
    expect(new Set(storedBundles())).toEqual(new Set([both]));
    const writes = patches().length;
    // Once the first replica has served the new CA for the overlap, the old one goes...
    t += OVERLAP_MS;
    await first.sync();
    expect(new Set(storedBundles())).toEqual(new Set([b64(newCa)]));
    // ...and the replica still on the old CA, which has seen the newer one for the overlap, writes nothing.
    await behind.sync();
    await behind.sync();
    expect(new Set(storedBundles())).toEqual(new Set([b64(newCa)]));
    expect(patches()).toHaveLength(writes + 1);
    expect(lines.filter((l) => /: writing nothing \(the newest CA wins\), until caBundle holds this pod's CA or its CA changes$/.test(l.msg))).toHaveLength(1);
    // A replica that has just seen the newer CA (a restarted one) still puts its own back.
    const restarted = manager({ caBundlePem: () => oldCa, caOverlapMs: OVERLAP_MS, now: () => t });
    await restarted.sync();
    expect(new Set(storedBundles())).toEqual(new Set([both]));
    first.stop();
    behind.stop();
    restarted.stop();
  });

  it('a replica behind is not Ready, through API-server errors, until its CA is in caBundle again or its mounted CA changes', async () => {
    let t = Date.now() + 7_200_000;
    let own = oldCa;
    const first = manager({ caBundlePem: () => newCa, caOverlapMs: OVERLAP_MS, now: () => t });
    const behind = manager({ caBundlePem: () => own, caOverlapMs: OVERLAP_MS, now: () => t });
    await first.sync();
    await behind.sync();
    t += 1000;
    await first.sync();
    expect(behind.behind()).toBeUndefined();
    t += OVERLAP_MS;
    await first.sync();
    await behind.sync();
    const why = behind.behind();
    expect(why).toMatch(
      /^this pod's CA was left out of caBundle for a newer one another replica serves \(CN=svc-ca, sha256 [0-9a-f]{16}\) for over 10 min: writing nothing \(the newest CA wins\), until caBundle holds this pod's CA or its CA changes$/,
    );
    expect(why!.length).toBeLessThan(256);
    expect(first.behind()).toBeUndefined();
    expect(lines.filter((l) => l.msg.startsWith('not Ready: '))).toEqual([expect.objectContaining({ msg: `not Ready: ${why}`, level: 40 })]);
    // The API server unreachable, or answering errors: the last judgement stands, for both.
    store.refuse = (r) => (r.method === 'GET' ? { status: 503, message: 'etcdserver: request timed out' } : undefined);
    t += OVERLAP_MS;
    await first.sync();
    await behind.sync();
    expect(behind.behind()).toBe(why);
    expect(first.behind()).toBeUndefined();
    store.refuse = undefined;
    // Another replica (a restarted one, a rollback) puts its CA back in caBundle: Ready again.
    const restarted = manager({ caBundlePem: () => oldCa, caOverlapMs: OVERLAP_MS, now: () => t });
    await restarted.sync();
    restarted.stop();
    await behind.sync();
    expect(behind.behind()).toBeUndefined();
    expect(lines.filter((l) => l.msg.startsWith('Ready again: '))).toEqual([
      expect.objectContaining({ msg: "Ready again: this pod's CA is no longer left out of caBundle for a newer one", level: 30 }),
    ]);
    // Out again once the other has dropped it, then its kubelet brings the newer CA: Ready at
    // once, before a round has read anything.
    t += OVERLAP_MS;
    await first.sync();
    await behind.sync();
    expect(behind.behind()).toBe(why);
    own = newCa;
    expect(behind.behind()).toBeUndefined();
    await behind.sync();
    expect(lines.filter((l) => l.msg === 'Ready again: its mounted CA changed')).toHaveLength(1);
    expect(behind.behind()).toBeUndefined();
    first.stop();
    behind.stop();
  });

  it("without caOverlapMs keeps caBundle equal to its own CA (the other replica's CA goes at once)", async () => {
    const first = manager({ caBundlePem: () => newCa });
    await first.sync();
    const behind = manager({ caBundlePem: () => oldCa });
    await behind.sync();
    first.stop();
    behind.stop();
    expect(new Set(storedBundles())).toEqual(new Set([b64(oldCa)]));
  });
});
