import { X509Certificate } from 'node:crypto';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import { readTlsMaterial } from '../../src/certs/reload.js';
import { planRotation, type RotationPolicy } from '../../src/certs/rotation.js';
import { startTlsSecretSync, syncTlsSecret, type SecretRef } from '../../src/cluster/tls-secret.js';
import { until } from '../helpers/until.js';
import { kubeConfigFor } from '../registration/fake-api-server.js';
import { CLUSTER_ROLES, SECRETS, startFakeObjectStore, type FakeObjectStore } from './fake-object-store.js';

// RSA keys: about a second each under load, several per test.
jest.setTimeout(120_000);

const MINUTE_MS = 60_000;
const REF: SecretRef = { namespace: 'spiderpool-iaas-webhook', name: 'spiderpool-iaas-webhook-tls' };
const POLICY: RotationPolicy = {
  serviceName: 'spiderpool-iaas-webhook',
  namespace: REF.namespace,
  certValidityMs: 10 * MINUTE_MS,
  caValidityMs: 60 * MINUTE_MS,
};
const PATH = `${SECRETS(REF.namespace)}/${REF.name}`;
const logger = pino({ level: 'silent' });

const decoded = (store: FakeObjectStore, key: string): string | undefined => {
  const value = store.objects.get(PATH)?.['data']?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
};
const caCount = (pem: string | undefined) => (pem?.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
const writes = (store: FakeObjectStore) => store.requests.filter((r) => r.method !== 'GET').map((r) => r.method);

/** The Secret as the install creates it before the pods start: no type (Opaque), no data. */
const EMPTY_SECRET = { apiVersion: 'v1', kind: 'Secret', metadata: { name: REF.name, namespace: REF.namespace } };

let store: FakeObjectStore;
beforeEach(async () => {
  store = await startFakeObjectStore();
  store.put(SECRETS(REF.namespace), EMPTY_SECRET);
});
afterEach(() => store.close());

describe('syncTlsSecret', () => {
  it('fills the empty Secret the install created with the CA and its key, keeping its type, and then leaves it alone', async () => {
    const first = await syncTlsSecret(store.kubeConfig, REF, POLICY);
    expect(first.reason).toBe('created a CA and a serving certificate');
    const secret = store.objects.get(PATH)!;
    expect(secret['type']).toBeUndefined();
    expect(Object.keys(secret['data']).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(decoded(store, 'tls.crt')).toBe(first.pems['tls.crt']);

    const second = await syncTlsSecret(store.kubeConfig, REF, POLICY);
    expect(second).toEqual({ pems: first.pems });
    expect(writes(store)).toEqual(['PUT']);
  });

  it('never creates the Secret: an absent one is one line saying what to do, and nothing is written', async () => {
    store.objects.delete(PATH);
    await expect(syncTlsSecret(store.kubeConfig, REF, POLICY)).rejects.toThrow(
      /^Secret spiderpool-iaas-webhook\/spiderpool-iaas-webhook-tls does not exist: the install creates it, empty, before the pods start; re-apply the install \(kubectl apply -k, helm upgrade\) or run kubectl -n spiderpool-iaas-webhook create secret generic spiderpool-iaas-webhook-tls; will try again$/,
    );
    expect(writes(store)).toEqual([]);
  });

  it("lets two replicas starting at once end with one CA: the loser of the update reads the winner's", async () => {
    const [a, b] = await Promise.all([syncTlsSecret(store.kubeConfig, REF, POLICY), syncTlsSecret(store.kubeConfig, REF, POLICY)]);
    expect(a.pems['ca.crt']).toBe(b.pems['ca.crt']);
    expect(a.pems['tls.crt']).toBe(b.pems['tls.crt']);
    expect(decoded(store, 'ca.crt')).toBe(a.pems['ca.crt']);
    expect([a.reason, b.reason].filter(Boolean)).toEqual(['created a CA and a serving certificate']);
    expect(writes(store)).toEqual(['PUT', 'PUT']);
  });

  it('re-reads after an update another replica won (409 Conflict) and continues from its content', async () => {
    await syncTlsSecret(store.kubeConfig, REF, POLICY);
    const later = new Date(Date.now() + 41 * MINUTE_MS);
    // Another replica starts the same CA change first.
    const theirs = await syncTlsSecret(kubeConfigFor(store.kubeConfig.getCurrentCluster()!.server), REF, POLICY, () => later);
    expect(theirs.reason).toMatch(/added a new CA/);
    const winning = store.objects.get(PATH)!;
    store.objects.set(PATH, { ...winning, metadata: { ...winning['metadata'], resourceVersion: '1' } });
    let raced = false;
    store.beforeWrite = (request) => {
      if (request.method === 'PUT' && !raced) {
        raced = true;
        store.put(SECRETS(REF.namespace), winning);
      }
    };
    const ours = await syncTlsSecret(store.kubeConfig, REF, POLICY, () => later);
    expect(raced).toBe(true);
    // The serving certificate, issued at the real time, looks expired then and is renewed; no second CA is made.
    expect(ours.reason ?? '').not.toMatch(/new CA/);
    expect(ours.pems['ca-next.key']).toBe(theirs.pems['ca-next.key']);
    expect(caCount(decoded(store, 'ca.crt'))).toBe(2);
  });

  it('changes the CA with an overlap in the Secret: the next CA and its key, then the switch that drops ca-next.key', async () => {
    const created = await syncTlsSecret(store.kubeConfig, REF, POLICY);
    const added = await syncTlsSecret(store.kubeConfig, REF, POLICY, () => new Date(Date.now() + 41 * MINUTE_MS));
    expect(caCount(decoded(store, 'ca.crt'))).toBe(2);
    expect(decoded(store, 'ca.key')).toBe(created.pems['ca.key']);
    expect(decoded(store, 'ca-next.key')).toBe(added.pems['ca-next.key']);
    const switched = await syncTlsSecret(store.kubeConfig, REF, POLICY, () => new Date(Date.now() + 51 * MINUTE_MS));
    expect(switched.reason).toMatch(/signed by the new CA/);
    expect(decoded(store, 'ca-next.key')).toBeUndefined();
    expect(decoded(store, 'ca.key')).toBe(added.pems['ca-next.key']);
    expect(caCount(decoded(store, 'ca.crt'))).toBe(2);
  });

  it('keeps data keys of others when it updates', async () => {
    await syncTlsSecret(store.kubeConfig, REF, POLICY);
    const secret = store.objects.get(PATH)!;
    store.put(SECRETS(REF.namespace), { ...secret, data: { ...secret['data'], note: Buffer.from('kept').toString('base64') } });
    await syncTlsSecret(store.kubeConfig, REF, POLICY, () => new Date(Date.now() + 8 * MINUTE_MS));
    expect(decoded(store, 'note')).toBe('kept');
  });

  it('refuses a Secret it did not write, in one line saying what to do, and never writes it', async () => {
    store.put(SECRETS(REF.namespace), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: REF.name, namespace: REF.namespace },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' },
    });
    await expect(syncTlsSecret(store.kubeConfig, REF, POLICY)).rejects.toThrow(
      /^Secret spiderpool-iaas-webhook\/spiderpool-iaas-webhook-tls cannot be used: it has no ca\.crt and ca\.key, so it was not written by this webhook; empty its data to have a new CA made, or name another Secret with --tls-secret$/,
    );
    expect(writes(store)).toEqual([]);
  });

  it('names the RBAC it needs when the API server forbids, and the server when it cannot be reached', async () => {
    store.refuse = () => ({
      status: 403,
      message: 'secrets "spiderpool-iaas-webhook-tls" is forbidden: User "system:serviceaccount:x:y" cannot get resource "secrets"',
    });
    await expect(syncTlsSecret(store.kubeConfig, REF, POLICY)).rejects.toThrow(
      /^the API server refused to read Secret spiderpool-iaas-webhook\/spiderpool-iaas-webhook-tls: secrets .* is forbidden: .*\(the ServiceAccount needs get and update on this Secret: deploy\/base\/rbac\.yaml\)$/,
    );
    await store.close();
    await expect(syncTlsSecret(store.kubeConfig, REF, POLICY)).rejects.toThrow(
      /^cannot reach the API server to read Secret spiderpool-iaas-webhook\/spiderpool-iaas-webhook-tls: /,
    );
    store = await startFakeObjectStore();
  });

  it('abandons a read the API server never answers at its deadline, closing the connection, in one line', async () => {
    store.hang = () => true;
    await expect(syncTlsSecret(store.kubeConfig, REF, POLICY, undefined, undefined, 300)).rejects.toThrow(
      /^cannot reach the API server to read Secret spiderpool-iaas-webhook\/spiderpool-iaas-webhook-tls: no answer from the API server within 0\.3 s; the request was abandoned$/,
    );
    await until(() => store.hung.closedByClient === 1, 'the client to close the unanswered connection');
  });
});

describe('startTlsSecretSync', () => {
  it('writes the served pair and the CA bundle into the certificate directory as a mounted Secret looks', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'tls-secret-'));
    try {
      const sync = await startTlsSecretSync({ kubeConfig: store.kubeConfig, secret: REF, policy: POLICY, certDir, intervalMs: 60_000, logger });
      sync.stop();
      expect(await readlink(join(certDir, 'tls.crt'))).toBe('..data/tls.crt');
      const served = await readTlsMaterial({ certDir });
      expect(served.material.certPem).toBe(decoded(store, 'tls.crt'));
      expect(served.material.caCertPem).toBe(decoded(store, 'ca.crt'));
      expect(new X509Certificate(served.material.certPem).verify(new X509Certificate(served.material.caCertPem!).publicKey)).toBe(true);
    } finally {
      await rm(certDir, { recursive: true, force: true });
    }
  });

  it('makes the ClusterRole named the owner of the Secret, and writes nothing while that ClusterRole is absent', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'tls-secret-'));
    try {
      const options = { kubeConfig: store.kubeConfig, secret: REF, policy: POLICY, certDir, intervalMs: 60_000, ownerClusterRole: 'owner', logger };
      await expect(startTlsSecretSync(options)).rejects.toThrow(
        "ClusterRole owner, the Secret's owner (--owner-cluster-role), does not exist: the install is incomplete or being deleted",
      );
      expect(writes(store)).toEqual([]);
      store.put(CLUSTER_ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'owner' } });
      (await startTlsSecretSync(options)).stop();
      const uid = store.objects.get(`${CLUSTER_ROLES}/owner`)!['metadata'].uid;
      expect(store.objects.get(PATH)!['metadata'].ownerReferences).toEqual([
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'owner', uid },
      ]);
    } finally {
      await rm(certDir, { recursive: true, force: true });
    }
  });

  it("says in one line what it needs when the owner ClusterRole cannot be read (403), not client-node's HTTP dump", async () => {
    store.refuse = (request) =>
      request.path.startsWith(CLUSTER_ROLES)
        ? {
            status: 403,
            message: 'clusterroles.rbac.authorization.k8s.io "owner" is forbidden: User "system:serviceaccount:x:y" cannot get resource "clusterroles"',
          }
        : undefined;
    const certDir = await mkdtemp(join(tmpdir(), 'tls-secret-'));
    try {
      const options = { kubeConfig: store.kubeConfig, secret: REF, policy: POLICY, certDir, intervalMs: 60_000, ownerClusterRole: 'owner', logger };
      const failure = await startTlsSecretSync(options).then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(failure).toMatch(/^the API server refused to read ClusterRole owner \(--owner-cluster-role\): .*is forbidden: .*get on this ClusterRole/);
      expect(failure).not.toMatch(/\n|HTTP-Code|Headers/);
    } finally {
      await rm(certDir, { recursive: true, force: true });
    }
  });

  it("fails the start with the Secret's error, so serve never starts without certificates", async () => {
    store.refuse = () => ({ status: 403, message: 'forbidden' });
    const certDir = await mkdtemp(join(tmpdir(), 'tls-secret-'));
    await expect(startTlsSecretSync({ kubeConfig: store.kubeConfig, secret: REF, policy: POLICY, certDir, intervalMs: 60_000, logger })).rejects.toThrow(
      /refused to read Secret/,
    );
    await rm(certDir, { recursive: true, force: true });
  });

  it('resumes renewal at the first round after an API server that stopped answering mid-round answers again', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'tls-secret-'));
    const pemsOf = async () => (await planRotation(undefined, POLICY, new Date())).pems;
    const fill = (pems: Record<string, string>) =>
      store.put(SECRETS(REF.namespace), {
        ...EMPTY_SECRET,
        data: Object.fromEntries(Object.entries(pems).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      });
    const servedCa = async () => (await readTlsMaterial({ certDir })).material.caCertPem;
    const secretReads = () => store.requests.filter((r) => r.method === 'GET' && r.path === PATH).length;
    const [before, after] = [await pemsOf(), await pemsOf()];
    fill(before);
    store.put(CLUSTER_ROLES, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'owner' } });
    const options = {
      kubeConfig: store.kubeConfig,
      secret: REF,
      policy: POLICY,
      certDir,
      intervalMs: 100,
      callTimeoutMs: 500,
      ownerClusterRole: 'owner',
      logger,
    };
    const sync = await startTlsSecretSync(options);
    try {
      expect(await servedCa()).toBe(before['ca.crt']);
      // Mid-round: the owner lookup is answered, the Secret's read accepted and never answered;
      // each round's read is abandoned and the next round asks again.
      store.hang = (request) => request.path === PATH;
      await until(() => store.hung.count >= 3, 'three rounds to ask the silent API server', { timeoutMs: 20_000, describe: () => JSON.stringify(store.hung) });
      await until(() => store.hung.closedByClient >= 2, 'the abandoned requests to close their connections', { describe: () => JSON.stringify(store.hung) });
      // The API server answers again, with content another replica wrote meanwhile.
      fill(after);
      const readsBefore = secretReads();
      store.hang = undefined;
      const hungBefore = store.hung.count;
      await until(async () => (await servedCa()) === after['ca.crt'], 'the served CA to follow the Secret', { timeoutMs: 20_000 });
      // The rounds after it answered read it (no round stayed wedged on an old request).
      expect(secretReads() - readsBefore).toBeGreaterThanOrEqual(1);
      expect(store.hung.count).toBe(hungBefore);
    } finally {
      sync.stop();
      await rm(certDir, { recursive: true, force: true });
    }
  });
});
