import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { loadReview } from '../fixtures/load.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const logger = pino({ level: 'silent' });

/** An HTTPS call that trusts only `ca` and checks the server name (no rejectUnauthorized: false). */
function call(server: RunningServer, ca: string, method: string, path: string, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', servername: 'localhost', port: server.port, method, path, ca, headers: body ? { 'content-type': 'application/json' } : {} },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the real HTTPS server with freshly generated certificates', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('webhook-certs-');
  });
  afterAll(() => server?.stop());

  it('is ready and healthy over verified TLS', async () => {
    expect(server.caCertPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    await expect(call(server, server.caCertPem!, 'GET', '/readyz')).resolves.toEqual({ status: 200, body: 'ok\n' });
    await expect(call(server, server.caCertPem!, 'GET', '/healthz')).resolves.toEqual({ status: 200, body: 'ok\n' });
  });

  it('refuses to remove spec.nodeName from an IaaS pool', async () => {
    const review = loadReview('pool-update-node-to-global');
    const res = await call(server, server.caCertPem!, 'POST', WEBHOOKS.spiderIPPool.path, JSON.stringify(review));
    expect(res.status).toBe(200);
    const answer = AdmissionReviewResponseSchema.parse(JSON.parse(res.body));
    expect(answer.response.uid).toBe(review.request.uid);
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status!.message).toMatch(/^SpiderIPPool\.spiderpool\.spidernet\.io "pool-a" is invalid: spec\.nodeName: Forbidden: /);
  });

  it('answers the curl example of docs/cli.md with the answer shown there, to the byte once indented', async () => {
    const doc = await readFile(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const shown = /## Try it with curl[\s\S]*?--data @test\/fixtures\/reviews\/(\S+)\.json[\s\S]*?```json\n([\s\S]*?)```/.exec(doc);
    expect(shown?.[1]).toBe('pool-update-node-to-global');
    const res = await call(server, server.caCertPem!, 'POST', WEBHOOKS.spiderIPPool.path, JSON.stringify(loadReview(shown![1]!)));
    expect(`${JSON.stringify(JSON.parse(res.body), null, 2)}\n`).toBe(shown![2]);
  });

  it('answers HTTP that Node cannot parse with a Status body', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, servername: 'localhost', ca: server.caCertPem! }, () => {
        socket.write('POST /validate-configmap HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n');
      });
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
  });

  it("keeps an idle connection open longer than the API server's client does (Go's http.Transport: 90 s idle)", async () => {
    // Node's default (5 s) closes idle connections the API server still counts as reusable: a
    // review sent on one just as it closes fails ("EOF"; a POST is not retried), which
    // failurePolicy Fail turns into a refused write.
    const agent = new https.Agent({ keepAlive: true });
    try {
      const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', servername: 'localhost', port: server.port, path: '/healthz', ca: server.caCertPem!, agent }, (res) => {
            res.resume();
            resolve(res.headers['keep-alive'] as string | undefined);
          })
          .on('error', reject);
      });
      expect(Number(/^timeout=(\d+)$/.exec(keepAlive ?? '')?.[1])).toBeGreaterThan(90);
    } finally {
      agent.destroy();
    }
  });

  it('is not trusted by a client that does not know the generated CA', async () => {
    await expect(call(server, '', 'GET', '/healthz')).rejects.toThrow();
  });

  it('reuses the certificates it generated on the next start', async () => {
    const again = await startServer({ port: 0, host: '127.0.0.1', certDir: server.certDir, generateCerts: true, logger });
    try {
      expect(again.caCertPem).toBe(server.caCertPem);
      await expect(call(again, server.caCertPem!, 'GET', '/readyz')).resolves.toMatchObject({ status: 200 });
    } finally {
      await again.stop();
    }
  });
});

describe('startServer without certificates to generate', () => {
  it('fails with a message naming the missing files and the certs command that writes them', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'webhook-empty-'));
    try {
      await expect(startServer({ port: 0, host: '127.0.0.1', certDir: empty, generateCerts: false, logger })).rejects.toThrow(
        `missing tls.crt and tls.key in certificate directory ${empty} (--no-generate-certs): write them with the certs command ` +
          `(node dist/cli/main.js certs --out ${empty}), mount the TLS Secret there, or leave out --no-generate-certs to generate a self-signed pair`,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
