import { applyWebhookConfiguration, FIELD_MANAGER } from '../../src/registration/apply.js';
import { readWebhookManifest, webhookConfigurationFor, type WebhookConfiguration } from '../../src/registration/webhook-configuration.js';
import { COLLECTION, kubeConfigFor, startFakeApiServer, type FakeApiServer } from './fake-api-server.js';

const CA_BUNDLE = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');

let fake: FakeApiServer;
let configuration: WebhookConfiguration;

beforeAll(async () => {
  configuration = webhookConfigurationFor(await readWebhookManifest(), { url: 'https://127.0.0.1:8443' }, CA_BUNDLE);
});

beforeEach(async () => {
  fake = await startFakeApiServer();
});

afterEach(async () => {
  await fake.close();
});

describe('applyWebhookConfiguration', () => {
  it('sends one server-side apply PATCH: content type, field manager, force, the whole object', async () => {
    const applied = await applyWebhookConfiguration(fake.kubeConfig, configuration);
    expect(applied).toEqual({ name: 'spiderpool-iaas-webhook', resourceVersion: '1', changed: true });
    const patches = fake.requests.filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(1);
    const [patch] = patches;
    expect(patch!.url.pathname).toBe(`${COLLECTION}/spiderpool-iaas-webhook`);
    expect(patch!.contentType).toBe('application/apply-patch+yaml');
    expect(Object.fromEntries(patch!.url.searchParams)).toEqual({ fieldManager: FIELD_MANAGER, force: 'true' });
    expect(patch!.authorization).toBe('Bearer fake-token');
    expect(JSON.parse(patch!.body)).toEqual(configuration);
  });

  it('reports an apply that changed nothing as unchanged, and a changed one as changed', async () => {
    await applyWebhookConfiguration(fake.kubeConfig, configuration);
    expect(await applyWebhookConfiguration(fake.kubeConfig, configuration)).toMatchObject({ resourceVersion: '1', changed: false });
    const rotated = webhookConfigurationFor(await readWebhookManifest(), { url: 'https://127.0.0.1:8443' }, Buffer.from('other').toString('base64'));
    expect(await applyWebhookConfiguration(fake.kubeConfig, rotated)).toMatchObject({ resourceVersion: '2', changed: true });
  });

  it("turns a refusal into one line with the API server's Status message", async () => {
    fake.refuse = {
      status: 403,
      body: JSON.stringify({
        kind: 'Status',
        status: 'Failure',
        reason: 'Forbidden',
        code: 403,
        message: 'validatingwebhookconfigurations.admissionregistration.k8s.io "spiderpool-iaas-webhook" is forbidden: User "dev" cannot patch resource',
      }),
    };
    await expect(applyWebhookConfiguration(fake.kubeConfig, configuration)).rejects.toThrow(
      /^the API server at http:\/\/127\.0\.0\.1:\d+ refused the ValidatingWebhookConfiguration: validatingwebhookconfigurations\.admissionregistration\.k8s\.io "spiderpool-iaas-webhook" is forbidden: User "dev" cannot patch resource$/,
    );
  });

  it('names Unauthorized (401 has no Status in the client) and bodies that are not a Status', async () => {
    fake.refuse = { status: 401, body: '{"kind":"Status","code":401,"message":"Unauthorized","status":"Failure"}' };
    await expect(applyWebhookConfiguration(fake.kubeConfig, configuration)).rejects.toThrow(
      /refused the ValidatingWebhookConfiguration: Unauthorized \(check the kubeconfig credentials\)$/,
    );
    fake.refuse = { status: 502, body: 'bad gateway\n' };
    await expect(applyWebhookConfiguration(fake.kubeConfig, configuration)).rejects.toThrow(/refused the ValidatingWebhookConfiguration: bad gateway$/);
  });

  it("says which server cannot be reached, in kubectl's words, naming the context", async () => {
    const closed = await startFakeApiServer();
    await closed.close();
    const server = closed.kubeConfig.getCurrentCluster()!.server;
    const error = await applyWebhookConfiguration(kubeConfigFor(server), configuration).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `The connection to the server ${new URL(server).host} was refused - did you specify the right host or port? (context ${JSON.stringify(kubeConfigFor(server).getCurrentContext())}, server ${server})`,
    );
    expect((error as Error).message).not.toContain('\n');
  });
});
