/**
 * A plain-HTTP request on the HTTPS port is answered with a hint to use HTTPS, while TLS
 * clients (the API server, probes, a TLS 1.2 client) are served as before on the same port.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { CertificateBundle } from '../../src/certs/generate.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { PLAIN_HTTP_MESSAGE } from '../../src/server/plain-http.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { secretFiles, servingCertificate, writeSecretDir } from '../certs/secret-dir.js';
import { loadReview } from '../fixtures/load.js';
import { connectTls, httpsRequest } from '../helpers/client.js';

const logger = pino({ level: 'silent' });
let dir: string;
let serving: CertificateBundle;
let server: RunningServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-plain-http-'));
  serving = await servingCertificate();
  await writeSecretDir(join(dir, 'certs'), secretFiles(serving));
  server = await startServer({ port: 0, host: '127.0.0.1', certDir: join(dir, 'certs'), generateCerts: false, logger, timeouts: { handshakeMs: 500 } });
});

afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A plain-HTTP request with Node's client: status, content type and body. */
function plainRequest(method: string, path: string, body?: string): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers: body ? { 'Content-Type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('plain HTTP on the HTTPS port', () => {
  it.each([
    ['GET', '/readyz', undefined],
    ['POST', WEBHOOKS.spiderIPPool.path, JSON.stringify(loadReview('pool-update-node-to-global'))],
  ])('%s %s gets 400 and a Status saying to use https://', async (method, path, body) => {
    const answer = await plainRequest(method, path, body);
    expect(answer).toMatchObject({ status: 400, type: 'application/json' });
    expect(JSON.parse(answer.body)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: PLAIN_HTTP_MESSAGE,
      reason: 'BadRequest',
      code: 400,
    });
  });

  it('still serves HTTPS on the same port, TLS 1.3 and 1.2, before and after a plain request', async () => {
    expect((await httpsRequest({ port: server.port, path: '/healthz', ca: serving.caCertPem })).status).toBe(200);
    await plainRequest('GET', '/healthz');
    const tls12 = await connectTls(server.port, { ca: serving.caCertPem, maxVersion: 'TLSv1.2' });
    expect(tls12.getProtocol()).toBe('TLSv1.2');
    tls12.destroy();
    expect((await httpsRequest({ port: server.port, path: '/healthz', ca: serving.caCertPem })).status).toBe(200);
  });

  it('closes a connection that sends nothing within the handshake timeout', async () => {
    const socket = connect(server.port, '127.0.0.1');
    const started = Date.now();
    await new Promise((resolve) => socket.once('close', resolve));
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('hands bytes that are neither TLS nor HTTP to TLS, which refuses them without an answer', async () => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(Buffer.from([0x01, 0x02, 0x03, 0x04, 0x05, 0x06])));
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received).toBeLessThan(16); // at most a TLS alert, never an HTTP answer
  });
});
