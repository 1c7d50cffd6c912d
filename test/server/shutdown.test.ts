/**
 * Graceful stop of the real server: in-flight reviews finish, nothing new is accepted,
 * idle keep-alive connections are closed, and a request that never ends is cut at the
 * grace period.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import { WEBHOOKS } from '../../src/defaults.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { loadReview } from '../fixtures/load.js';
import { connectTls, sampleValue } from '../helpers/client.js';
import { until } from '../helpers/until.js';

jest.setTimeout(30_000);

const logger = pino({ level: 'silent' });
let certDir: string;

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'webhook-shutdown-'));
});

afterAll(async () => {
  await rm(certDir, { recursive: true, force: true });
});

/** A POST whose body is half sent: in flight until `finish()`, which resolves with the raw answer. */
async function halfSentReview(server: RunningServer, uid: string): Promise<{ socket: TLSSocket; finish(): Promise<string> }> {
  const review = loadReview('pool-update-node-to-global');
  review.request.uid = uid;
  const body = Buffer.from(JSON.stringify(review));
  const socket = await connectTls(server.port, { ca: server.caCertPem! });
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  const ended = new Promise<string>((resolve) => socket.once('close', () => resolve(answer)));
  socket.write(`POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body.subarray(0, body.length >> 1));
  return {
    socket,
    finish: () => {
      socket.write(body.subarray(body.length >> 1));
      return ended;
    },
  };
}

const inFlight = async (server: RunningServer) =>
  sampleValue(await server.metrics.registry.metrics(), `controller_runtime_webhook_requests_in_flight{webhook="${WEBHOOKS.spiderIPPool.path}"}`);

describe('stop()', () => {
  it('turns unready, finishes every in-flight review, refuses new connections, and closes idle ones', async () => {
    const server = await startServer({ port: 0, host: '127.0.0.1', certDir, generateCerts: true, logger });
    const requests = await Promise.all(Array.from({ length: 20 }, (_, i) => halfSentReview(server, `uid-${i}`)));
    // A keep-alive connection that has been answered once and waits for its next request.
    const idle = await connectTls(server.port, { ca: server.caCertPem! });
    const idleClosed = new Promise<void>((resolve) => idle.once('close', () => resolve()));
    await new Promise((resolve) => {
      idle.once('data', resolve);
      idle.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    });
    // A probe whose headers are still arriving when the stop begins: answered after it.
    const probe = await connectTls(server.port, { ca: server.caCertPem! });
    let probeAnswer = '';
    probe.setEncoding('utf8').on('data', (chunk: string) => (probeAnswer += chunk));
    probe.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n');
    await until(async () => (await inFlight(server)) === 20, 'the reviews to be in flight');

    let stopped = false;
    const stopping = server.stop().then(() => (stopped = true));
    await expect(connectTls(server.port, { ca: server.caCertPem! })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await idleClosed;
    expect(stopped).toBe(false); // still draining
    probe.write('\r\n');
    await until(() => probeAnswer.includes('readyz check failed'), 'the probe answer');
    expect(probeAnswer).toMatch(/^HTTP\/1\.1 503 /);
    expect(probeAnswer).toContain('[-]shutdown failed: the server is shutting down\n');

    const answers = await Promise.all(requests.map((r) => r.finish()));
    answers.forEach((raw, i) => {
      expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(raw).toMatch(/\r\nConnection: close\r\n/i);
      const review = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
      expect(review.response).toMatchObject({ uid: `uid-${i}`, allowed: false });
    });
    await stopping;
    expect(await inFlight(server)).toBe(0);
  });

  it('cuts a request that does not finish within the grace period', async () => {
    const server = await startServer({ port: 0, host: '127.0.0.1', certDir, generateCerts: true, logger, shutdownGraceMs: 300 });
    const stuck = await halfSentReview(server, 'never-finished');
    let answered = '';
    stuck.socket.on('data', (chunk: string) => (answered += chunk));
    const cut = new Promise<void>((resolve) => stuck.socket.once('close', () => resolve()));
    await until(async () => (await inFlight(server)) === 1, 'the review to be in flight');
    await server.stop();
    await cut;
    // Cut by the server: the connection closed with no answer.
    expect(answered).toBe('');
  });

  it('counts a cut request out of the in-flight gauge', async () => {
    const server = await startServer({ port: 0, host: '127.0.0.1', certDir, generateCerts: true, logger, shutdownGraceMs: 300 });
    const stuck = await halfSentReview(server, 'cut-while-in-flight');
    const cut = new Promise<void>((resolve) => stuck.socket.once('close', () => resolve()));
    await until(async () => (await inFlight(server)) === 1, 'the review to be in flight');
    await server.stop();
    await cut;
    await new Promise((resolve) => setImmediate(resolve));
    expect(await inFlight(server)).toBe(0);
  });
});
