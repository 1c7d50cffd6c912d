/**
 * Certificate rotation on the real HTTPS server: a Secret-style atomic swap of `..data`
 * while clients send reviews; bad pairs refused with the old one kept; an expired
 * certificate makes `/readyz` fail.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import type { CertificateBundle } from '../../src/certs/generate.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { certificateSignedBy, secretFiles, servingCertificate, writeSecretDir } from '../certs/secret-dir.js';
import { loadReview } from '../fixtures/load.js';
import { connectTls, httpsRequest, sampleValue, servedFingerprint } from '../helpers/client.js';
import { until } from '../helpers/until.js';

jest.setTimeout(30_000);

const logLines: Record<string, unknown>[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line)) });
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
const RELOADS = 'spiderpool_iaas_webhook_certificate_reloads_total';

let dir: string;
let first: CertificateBundle;

beforeAll(async () => {
  first = await servingCertificate();
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-reload-'));
  logLines.length = 0;
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The server on `dir`; it re-reads on every directory event and every `intervalMs`. */
const start = (intervalMs = 200) => startServer({ port: 0, host: '127.0.0.1', certDir: dir, generateCerts: false, logger, certReloadIntervalMs: intervalMs });
const reloads = async (server: RunningServer, result: string) => sampleValue(await server.metrics.registry.metrics(), `${RELOADS}{result="${result}"}`);

describe('rotating the serving certificate', () => {
  it('serves the new pair to new connections without failing a request (noticed by the directory watch)', async () => {
    await writeSecretDir(dir, secretFiles(first));
    const server = await start(3_600_000); // no polling within the test: the watch must see the ..data swap
    const review = JSON.stringify(loadReview('pool-update-node-to-global'));
    let sending = true;
    let served = 0;
    const failures: string[] = [];
    // Keep-alive clients (old connections) and one opening a new connection per request.
    const worker = async (agent: https.Agent | false) => {
      while (sending) {
        try {
          const res = await httpsRequest({ port: server.port, ca: first.caCertPem, path: WEBHOOKS.spiderIPPool.path, body: review, agent });
          if (res.status === 200 && JSON.parse(res.body).response.allowed === false) served++;
          else failures.push(`HTTP ${res.status}: ${res.body}`);
        } catch (e) {
          failures.push(String(e));
        }
      }
    };
    const agents = [new https.Agent({ keepAlive: true, maxSockets: 2 }), new https.Agent({ keepAlive: true, maxSockets: 2 })];
    const load = Promise.all([...agents.map(worker), worker(false)]);
    try {
      expect(await servedFingerprint(server.port, first.caCertPem)).toBe(fingerprint(first.certPem));
      for (let i = 0; i < 2; i++) {
        const next = await servingCertificate(first); // same CA: clients keep trusting it
        await writeSecretDir(dir, secretFiles(next));
        await until(async () => (await servedFingerprint(server.port, first.caCertPem)) === fingerprint(next.certPem), 'the new certificate');
        const metricsText = await server.metrics.registry.metrics();
        expect(sampleValue(metricsText, 'spiderpool_iaas_webhook_serving_certificate_expiration_timestamp_seconds')).toBe(
          new Date(new X509Certificate(next.certPem).validTo).getTime() / 1000,
        );
      }
    } finally {
      sending = false;
      await load;
      agents.forEach((a) => a.destroy());
      await server.stop();
    }
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(10);
    expect([await reloads(server, 'success'), await reloads(server, 'failure')]).toEqual([2, 0]);
    expect(logLines.filter((l) => l['msg'] === 'serving a new certificate')).toHaveLength(2);
  });

  it('keeps the old pair, logs and counts once, when the new one is unusable', async () => {
    await writeSecretDir(dir, secretFiles(first));
    const server = await start();
    try {
      const other = await servingCertificate(first);
      const past = Date.now() - 2 * 86_400_000;
      const expired = await certificateSignedBy(first, { commonName: 'localhost', notBefore: new Date(past), notAfter: new Date(past + 86_400_000) });
      const bad: [string, Record<string, string>, RegExp][] = [
        ['a key of another certificate', { ...secretFiles(other), 'tls.key': first.keyPem }, /does not match the certificate/],
        ['an expired certificate', { ...secretFiles(first), 'tls.crt': expired.certPem, 'tls.key': expired.keyPem }, /the serving certificate expired at/],
        ['a certificate that is not PEM', { ...secretFiles(other), 'tls.crt': 'not a certificate' }, /is not a valid PEM certificate/],
        ['no key', { 'tls.crt': other.certPem }, /missing tls\.key/],
      ];
      for (const [i, [, files, why]] of bad.entries()) {
        await writeSecretDir(dir, files);
        await until(async () => (await reloads(server, 'failure')) === i + 1, 'the failure to be counted');
        expect(logLines.at(-1)).toMatchObject({ level: 50, msg: 'new certificate refused; still serving the old one', err: expect.stringMatching(why) });
        expect(await servedFingerprint(server.port, first.caCertPem)).toBe(fingerprint(first.certPem));
      }
      await httpsRequest({ port: server.port, ca: first.caCertPem, path: '/readyz' }).then((r) => expect(r.status).toBe(200));

      // A good pair after bad ones is taken, and keeps the TLS settings (setSecureContext resets what it is not given).
      await writeSecretDir(dir, secretFiles(other));
      await until(async () => (await servedFingerprint(server.port, first.caCertPem)) === fingerprint(other.certPem), 'the good pair');
      await expect(connectTls(server.port, { ca: first.caCertPem, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA' })).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });
});

describe('a new certificate that is not valid yet', () => {
  it('is refused once, re-checked on every poll, and served once valid, without a restart', async () => {
    await writeSecretDir(dir, secretFiles(first));
    const server = await start();
    try {
      // X.509 times have whole seconds: 2-3 s ahead, i.e. about ten polls of the same content.
      const notBefore = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2_000);
      const early = await certificateSignedBy(first, { commonName: 'localhost', notBefore, notAfter: new Date(notBefore.getTime() + 86_400_000) });
      await writeSecretDir(dir, { ...secretFiles(first), 'tls.crt': early.certPem, 'tls.key': early.keyPem });
      await until(async () => (await reloads(server, 'failure')) === 1, 'the refusal to be counted');
      expect(logLines.at(-1)).toMatchObject({ level: 50, err: expect.stringMatching(/is not valid before/) });
      expect(await servedFingerprint(server.port, first.caCertPem)).toBe(fingerprint(first.certPem));

      await until(async () => (await servedFingerprint(server.port, first.caCertPem)) === fingerprint(early.certPem), 'the certificate once valid');
      // Every poll before notBefore refused the same content; it was reported once.
      expect([await reloads(server, 'failure'), await reloads(server, 'success')]).toEqual([1, 1]);
      expect(logLines.filter((l) => l['msg'] === 'new certificate refused; still serving the old one')).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });
});

describe('an expired serving certificate', () => {
  it('makes /readyz fail until a valid one is rotated in', async () => {
    const past = Date.now() - 2 * 86_400_000;
    const expired = await certificateSignedBy(first, { commonName: 'localhost', notBefore: new Date(past), notAfter: new Date(past + 86_400_000) });
    await writeSecretDir(dir, { ...secretFiles(first), 'tls.crt': expired.certPem, 'tls.key': expired.keyPem });
    const server = await start();
    try {
      // The client must accept the expired certificate to see what the kubelet's probe sees
      // (kubelet probes do not verify certificates).
      const probe = () =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          https
            .get({ host: '127.0.0.1', port: server.port, path: '/readyz', rejectUnauthorized: false, agent: false }, (res) => {
              let body = '';
              res.on('data', (c) => (body += c));
              res.on('end', () => resolve({ status: res.statusCode!, body }));
            })
            .on('error', reject);
        });
      const before = await probe();
      expect(before.status).toBe(503);
      expect(before.body).toMatch(/^\[-\]serving-certificate failed: the serving certificate expired at \d{4}-/m);
      expect(before.body).toMatch(/readyz check failed\n$/);
      await expect(servedFingerprint(server.port, first.caCertPem)).rejects.toMatchObject({ code: 'CERT_HAS_EXPIRED' });

      await writeSecretDir(dir, secretFiles(first));
      await until(async () => (await probe()).status === 200, 'readiness after the rotation');
    } finally {
      await server.stop();
    }
  });
});
