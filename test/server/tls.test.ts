/**
 * TLS hardening of the real server: protocol floor, cipher list, the API server's client
 * certificate (`--client-ca-file`), the handshake timeout and the connection cap.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import type { CertificateBundle } from '../../src/certs/generate.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { certificateSignedBy, secretFiles, servingCertificate, writeSecretDir } from '../certs/secret-dir.js';
import { loadReview } from '../fixtures/load.js';
import { connectTls, httpsRequest, sampleValue } from '../helpers/client.js';
import { until } from '../helpers/until.js';

jest.setTimeout(30_000);

const logger = pino({ level: 'silent' });
let dir: string;
let serving: CertificateBundle;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-tls-'));
  serving = await servingCertificate();
  await writeSecretDir(join(dir, 'certs'), secretFiles(serving));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const start = (extra: Partial<Parameters<typeof startServer>[0]> = {}) =>
  startServer({ port: 0, host: '127.0.0.1', certDir: join(dir, 'certs'), generateCerts: false, logger, ...extra });

describe('protocol versions and ciphers', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.stop());

  it('negotiates TLS 1.3 with a current client', async () => {
    const socket = await connectTls(server.port, { ca: serving.caCertPem });
    expect(socket.getProtocol()).toBe('TLSv1.3');
    socket.destroy();
  });

  it.each(['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'])(
    'accepts TLS 1.2 with the forward-secret AEAD suite %s (what Go clients offer)',
    async (cipher) => {
      const socket = await connectTls(server.port, { ca: serving.caCertPem, maxVersion: 'TLSv1.2', ciphers: cipher });
      expect([socket.getProtocol(), socket.getCipher().standardName]).toEqual(['TLSv1.2', expect.stringContaining('TLS_ECDHE_RSA_WITH_')]);
      socket.destroy();
    },
  );

  it.each([
    ["CBC with SHA-1 (in Node's default list)", 'ECDHE-RSA-AES128-SHA'],
    ["CBC with SHA-256 (in Node's default list)", 'ECDHE-RSA-AES128-SHA256'],
    ['no forward secrecy (RSA key exchange)', 'AES128-GCM-SHA256'],
  ])('refuses TLS 1.2 with %s', async (_what, cipher) => {
    await expect(connectTls(server.port, { ca: serving.caCertPem, maxVersion: 'TLSv1.2', ciphers: cipher })).rejects.toThrow();
  });

  it('refuses TLS 1.1', async () => {
    // SECLEVEL=0 so that the client itself is willing to speak TLS 1.1: the refusal is the server's.
    await expect(
      connectTls(server.port, { ca: serving.caCertPem, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/ALERT_PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL/) });
  });
});

describe('--client-ca-file', () => {
  let server: RunningServer;
  let clientCa: CertificateBundle;
  let apiserver: { certPem: string; keyPem: string };
  let stranger: { certPem: string; keyPem: string };
  const review = JSON.stringify(loadReview('configmap-update-timeout-100s'));

  beforeAll(async () => {
    clientCa = await servingCertificate(); // only its CA is used, to issue client certificates
    const otherCa = await servingCertificate();
    const validity = { notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000), clientAuth: true };
    apiserver = await certificateSignedBy(clientCa, { commonName: 'kube-apiserver', ...validity });
    stranger = await certificateSignedBy(otherCa, { commonName: 'kube-apiserver', ...validity });
    await writeFile(join(dir, 'client-ca.crt'), clientCa.caCertPem);
    server = await start({ clientCaFile: join(dir, 'client-ca.crt') });
  });
  afterAll(() => server.stop());

  const post = (cert?: { certPem: string; keyPem: string }) =>
    httpsRequest({
      port: server.port,
      ca: serving.caCertPem,
      path: WEBHOOKS.configMap.path,
      body: review,
      ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}),
    });

  it('serves a review to a client certificate the client CA issued', async () => {
    const res = await post(apiserver);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response).toMatchObject({ uid: JSON.parse(review).request.uid, allowed: false });
  });

  it('answers 401 with a Status when no client certificate is presented', async () => {
    const res = await post();
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({
      kind: 'Status',
      code: 401,
      reason: 'Unauthorized',
      message: expect.stringMatching(/^a client certificate is required; /),
    });
  });

  it('answers 401 naming the reason for a certificate from another CA', async () => {
    const res = await post(stranger);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).message).toMatch(/^client certificate is not trusted \(.+\); /);
  });

  it('keeps the probes and /metrics open to clients without a certificate (the kubelet has none)', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/metrics']) {
      expect((await httpsRequest({ port: server.port, ca: serving.caCertPem, path })).status).toBe(200);
    }
  });

  it('counts refused requests under their code', async () => {
    const text = await server.metrics.registry.metrics();
    expect(sampleValue(text, 'controller_runtime_webhook_requests_total{webhook="/validate-configmap",code="401",operation="",allowed=""}')).toBeGreaterThan(0);
  });
});

describe('socket limits', () => {
  const metric = async (server: RunningServer, series: string) => sampleValue(await server.metrics.registry.metrics(), series);
  const closed = (socket: { once(event: 'close', listener: () => void): unknown }) => new Promise<void>((resolve) => socket.once('close', () => resolve()));
  /** A TLS connection with a review whose body is half sent: active until it is destroyed. */
  async function busyConnection(server: RunningServer, localAddress = '127.0.0.1') {
    const socket = await connectTls(server.port, { ca: serving.caCertPem, localAddress });
    socket.on('error', () => undefined);
    socket.write(`POST ${WEBHOOKS.configMap.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
    return socket;
  }

  it('closes a connection that does not finish its TLS handshake in time, counted as handshake_timeout', async () => {
    const server = await start({ timeouts: { handshakeMs: 300 } });
    try {
      const socket = connect(server.port, '127.0.0.1');
      const began = performance.now();
      await new Promise<void>((resolve, reject) => {
        socket.once('close', () => resolve());
        socket.once('error', reject);
      });
      // One deadline from the accept, not the first byte's wait and then TLS's own.
      expect(performance.now() - began).toBeGreaterThanOrEqual(250);
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_evictions_total{reason="handshake_timeout"}')).toBe(1);
    } finally {
      await server.stop();
    }
  });

  it('at the cap, gives the slot of the connection idle longest to a newcomer, which is served', async () => {
    // A share above the cap: the cap, not the share, decides.
    const server = await start({ maxConnections: 2, maxConnectionsPerAddress: 3 });
    try {
      const oldest = await connectTls(server.port, { ca: serving.caCertPem });
      const newer = await connectTls(server.port, { ca: serving.caCertPem });
      await until(async () => (await metric(server, 'spiderpool_iaas_webhook_connections{state="idle"}')) === 2, 'two idle connections');
      const oldestClosed = closed(oldest);
      expect((await httpsRequest({ port: server.port, ca: serving.caCertPem, path: '/healthz' })).status).toBe(200);
      await oldestClosed;
      expect(newer.destroyed).toBe(false);
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_evictions_total{reason="evicted_idle"}')).toBe(1);
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}')).toBe(0);
      newer.destroy();
    } finally {
      await server.stop();
    }
  });

  it('at the cap with every connection serving a request, closes the newcomer on arrival, counts it, and serves again once one ends', async () => {
    const server = await start({ maxConnections: 2, maxConnectionsPerAddress: 2 });
    try {
      // From two addresses, each within its fair share of the cap (one of two slots).
      const busy = [await busyConnection(server), await busyConnection(server, '127.0.0.3')];
      await until(async () => (await metric(server, 'spiderpool_iaas_webhook_connections{state="active"}')) === 2, 'two active connections');
      // From another address: the share of 127.0.0.1 is not what refuses it.
      await expect(connectTls(server.port, { ca: serving.caCertPem, localAddress: '127.0.0.2' })).rejects.toThrow();
      // Counted once: connection_rejections_total{reason} is the one series of it.
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}')).toBe(1);
      expect(await server.metrics.registry.metrics()).not.toMatch(/connections_dropped/);
      expect(busy.every((s) => !s.destroyed)).toBe(true);
      busy[0]!.destroy();
      await until(async () => {
        try {
          return (await httpsRequest({ port: server.port, ca: serving.caCertPem, path: '/healthz' })).status === 200;
        } catch {
          return false;
        }
      }, 'a free connection slot');
      busy[1]!.destroy();
    } finally {
      await server.stop();
    }
  });

  it("gives an address at its share of handshakes its own oldest one's slot; its established connections, idle or serving a request, are not counted", async () => {
    const server = await start({ maxConnectionsPerAddress: 1 });
    try {
      const idle = await connectTls(server.port, { ca: serving.caCertPem });
      await until(async () => (await metric(server, 'spiderpool_iaas_webhook_connections{state="idle"}')) === 1, 'an idle connection');
      const busy = [];
      for (let n = 1; n <= 3; n++) {
        busy.push(await busyConnection(server));
        await until(async () => (await metric(server, 'spiderpool_iaas_webhook_connections{state="active"}')) === n, `${n} active connections`);
      }
      // Three busy connections and an idle one of an address whose share is one, and a review on a fifth.
      expect(
        (
          await httpsRequest({
            port: server.port,
            ca: serving.caCertPem,
            path: WEBHOOKS.spiderIPPool.path,
            body: JSON.stringify(loadReview('pool-update-node-to-global')),
          })
        ).status,
      ).toBe(200);
      expect([idle.destroyed, ...busy.map((s) => s.destroyed)]).toEqual([false, false, false, false]);
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_evictions_total{reason="address_share"}')).toBe(0);
      // Two connections that never start TLS: the second takes the first one's slot.
      const first = connect(server.port, '127.0.0.1').on('error', () => undefined);
      const firstClosed = closed(first);
      await until(async () => (await metric(server, 'spiderpool_iaas_webhook_connections{state="handshaking"}')) === 1, 'a handshake');
      const second = connect(server.port, '127.0.0.1').on('error', () => undefined);
      await firstClosed;
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_evictions_total{reason="address_share"}')).toBe(1);
      expect(await metric(server, 'spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}')).toBe(0);
      expect(idle.destroyed).toBe(false);
      for (const s of [idle, second, ...busy]) s.destroy();
    } finally {
      await server.stop();
    }
  });

  it('with the defaults (32 per address), serves 40 requests in flight at once from one address, as a busy API server replica sends them', async () => {
    const server = await start();
    try {
      const busy = await Promise.all(Array.from({ length: 40 }, () => busyConnection(server)));
      await until(async () => (await metric(server, 'spiderpool_iaas_webhook_connections{state="active"}')) === 40, '40 active connections');
      expect(busy.every((s) => !s.destroyed)).toBe(true);
      const text = await server.metrics.registry.metrics();
      for (const reason of ['address_share', 'evicted_handshaking', 'evicted_idle'])
        expect(sampleValue(text, `spiderpool_iaas_webhook_connection_evictions_total{reason="${reason}"}`)).toBe(0);
      for (const s of busy) s.destroy();
    } finally {
      await server.stop();
    }
  });

  it('counts open connections by state, each reason from zero', async () => {
    const server = await start();
    try {
      const raw = connect(server.port, '127.0.0.1');
      const idle = await connectTls(server.port, { ca: serving.caCertPem });
      const busy = await busyConnection(server);
      const counts = async () => {
        const text = await server.metrics.registry.metrics();
        return ['handshaking', 'idle', 'active'].map((state) => sampleValue(text, `spiderpool_iaas_webhook_connections{state="${state}"}`));
      };
      await until(async () => (await counts()).join() === '1,1,1', 'one connection in each state', { describe: () => 'not yet' });
      const text = await server.metrics.registry.metrics();
      for (const reason of ['handshake_timeout', 'address_share', 'evicted_handshaking', 'evicted_idle'])
        expect(text).toContain(`spiderpool_iaas_webhook_connection_evictions_total{reason="${reason}"} 0`);
      expect(text).toContain('spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"} 0');
      for (const s of [raw, idle, busy]) s.destroy();
    } finally {
      await server.stop();
    }
  });
});
