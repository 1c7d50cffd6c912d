import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerWebhook } from '../../src/registration/register.js';
import { startFakeApiServer, type FakeApiServer } from './fake-api-server.js';

const dir = mkdtempSync(join(tmpdir(), 'register-'));
const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const caFile = join(dir, 'ca.crt');
writeFileSync(caFile, caPem);
const target = { url: 'https://127.0.0.1:8443' };

let fake: FakeApiServer;

beforeAll(async () => {
  fake = await startFakeApiServer();
});

afterAll(async () => {
  await fake.close();
});

function kubeconfigFile(): string {
  const file = join(dir, 'kubeconfig');
  const server = fake.kubeConfig.getCurrentCluster()!.server;
  writeFileSync(
    file,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]\n` +
      `users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
  );
  return file;
}

describe('registerWebhook', () => {
  it('applies the manifest with the CA file as caBundle, through the given kubeconfig', async () => {
    const registration = await registerWebhook({ caFile, target, kubeconfig: kubeconfigFile() });
    expect(registration).toMatchObject({ name: 'spiderpool-iaas-webhook', changed: true, server: fake.kubeConfig.getCurrentCluster()!.server });
    for (const webhook of fake.stored!['webhooks']) {
      expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8')).toBe(caPem);
    }
  });

  it('says the CA file is missing, or not a certificate, before contacting the cluster', async () => {
    const before = fake.requests.length;
    await expect(registerWebhook({ caFile: join(dir, 'absent.crt'), target, kubeconfig: kubeconfigFile() })).rejects.toThrow(
      /^cannot read the CA file .*absent\.crt \(ENOENT\); write it with the certs command$/,
    );
    const notPem = join(dir, 'not-pem.crt');
    writeFileSync(notPem, 'hello');
    await expect(registerWebhook({ caFile: notPem, target, kubeconfig: kubeconfigFile() })).rejects.toThrow(/not a PEM certificate/);
    await expect(registerWebhook({ caFile, target: { url: 'http://x' }, kubeconfig: kubeconfigFile() })).rejects.toThrow(/must be https/);
    expect(fake.requests.length).toBe(before);
  });

  it('says when the kubeconfig cannot be read', async () => {
    await expect(registerWebhook({ caFile, target, kubeconfig: join(dir, 'absent-kubeconfig') })).rejects.toThrow(
      /^cannot read the kubeconfig given by --kubeconfig \(.*absent-kubeconfig\): ENOENT/,
    );
  });

  it('says when there is no cluster connection at all', async () => {
    const saved = { KUBECONFIG: process.env['KUBECONFIG'], HOME: process.env['HOME'], KUBERNETES_SERVICE_HOST: process.env['KUBERNETES_SERVICE_HOST'] };
    delete process.env['KUBECONFIG'];
    delete process.env['KUBERNETES_SERVICE_HOST'];
    process.env['HOME'] = mkdtempSync(join(tmpdir(), 'empty-home-'));
    try {
      await expect(registerWebhook({ caFile, target })).rejects.toThrow(/^no cluster found: pass --kubeconfig FILE, set \$KUBECONFIG/);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
