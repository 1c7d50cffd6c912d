import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { createReviewer } from '../../src/rules/registry.js';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { MAX_BODY_BYTES, WEBHOOKS } from '../../src/defaults.js';
import { createWebhookMetrics } from '../../src/server/metrics.js';
import { createApp } from '../../src/server/app.js';
import { loadReview } from '../fixtures/load.js';
import { sampleValue } from '../helpers/client.js';
import { until } from '../helpers/until.js';

const lines: Record<string, unknown>[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
let ready = true;
const metrics = createWebhookMetrics();
const app = createApp({
  review: createReviewer(),
  logger,
  readinessChecks: [
    { name: 'always', check: () => undefined },
    { name: 'switch', check: () => (ready ? undefined : 'switched off by the test') },
  ],
  metrics,
  verifyClientCertificates: false,
});

/** A Kubernetes Status body with a one-line message, as the kube-apiserver would show it. */
function expectStatus(body: any, code: number, reason: string, message: RegExp) {
  expect(body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message: expect.stringMatching(message) });
  expect(body.message).not.toContain('\n');
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.(js|ts):\d+/); // no stack trace
}

beforeEach(() => {
  lines.length = 0;
  ready = true;
});

describe('webhook endpoints', () => {
  it.each([
    [WEBHOOKS.spiderIPPool.path, 'pool-update-node-to-global', false],
    [WEBHOOKS.spiderIPPool.path, 'pool-update-node-to-other-node', true],
    [WEBHOOKS.configMap.path, 'configmap-update-timeout-100s', false],
    [WEBHOOKS.configMap.path, 'configmap-update-timeout-50s', true],
  ])('POST %s with %s answers 200 and an AdmissionReview (allowed: %s)', async (path, fixture, allowed) => {
    const review = loadReview(fixture);
    const res = await request(app)
      .post(path)
      .send(review)
      .expect(200)
      .expect('Content-Type', /application\/json/);
    const body = AdmissionReviewResponseSchema.parse(res.body);
    expect(body.response.uid).toBe(review.request.uid);
    expect(body.response.allowed).toBe(allowed);
  });

  it('logs a denial at info as one JSON line, without the body', async () => {
    const review = loadReview('configmap-update-timeout-100s');
    await request(app).post(WEBHOOKS.configMap.path).send(review).expect(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'admission review',
      path: WEBHOOKS.configMap.path,
      uid: review.request.uid,
      kind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'spiderpool-conf',
      operation: 'UPDATE',
      dryRun: false,
      allowed: false,
      code: 422,
      decision: 'deny',
      rules: ['conf-yml'],
      fields: ['data[conf.yml].iaasNetworkProvider.httpRequestTimeout'],
      latencyUs: expect.any(Number),
    });
    expect(Number.isInteger(lines[0]!['latencyUs'])).toBe(true);
    // The fields that fired are named; no value of the body is shown.
    expect(JSON.stringify(lines[0])).not.toMatch(/100s|serverUrl|ipamUnixSocketPath/);
  });

  it('logs an allowed review at debug only, as controller-runtime does', async () => {
    const review = loadReview('configmap-update-timeout-50s');
    await request(app).post(`${WEBHOOKS.configMap.path}?timeout=10s`).send(review).expect(200);
    expect(lines).toEqual([]);
    const debugLines: Record<string, unknown>[] = [];
    const debugLogger = pino({ level: 'debug' }, { write: (line: string) => debugLines.push(JSON.parse(line)) });
    const debugApp = createApp({
      review: createReviewer(),
      logger: debugLogger,
      readinessChecks: [],
      metrics: createWebhookMetrics(),
      verifyClientCertificates: false,
    });
    await request(debugApp).post(`${WEBHOOKS.configMap.path}?timeout=10s`).send(review).expect(200);
    expect(debugLines).toEqual([
      expect.objectContaining({ level: 20, msg: 'admission review', path: WEBHOOKS.configMap.path, uid: review.request.uid, allowed: true }),
    ]);
  });

  it('logs a refusal at info with its code and message', async () => {
    await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'text/plain').send('{}').expect(415);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'request refused',
        path: WEBHOOKS.spiderIPPool.path,
        code: 415,
        reason: 'UnsupportedMediaType',
        message: 'content type "text/plain" is not supported; send application/json',
      }),
    ]);
  });

  it('answers with Content-Length, in one piece', async () => {
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).send(loadReview('pool-update-node-to-other-node')).expect(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
    expect(res.headers['transfer-encoding']).toBeUndefined();
  });

  it('accepts application/json with a charset', async () => {
    await request(app)
      .post(WEBHOOKS.spiderIPPool.path)
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify(loadReview('pool-create-iaas-node')))
      .expect(200);
  });
});

describe('bad requests get a 4xx Status with a one-line reason', () => {
  it('400 for a body that is not JSON', async () => {
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send('{"apiVersion":').expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^request body is not valid JSON$/);
  });

  it('400 for JSON that is not an AdmissionReview v1', async () => {
    const res = await request(app).post(WEBHOOKS.configMap.path).send({ hello: 'world' }).expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^not an admission\.k8s\.io\/v1 AdmissionReview: apiVersion: /);
  });

  it('400 for a review without request.uid', async () => {
    const review = loadReview('pool-update-node-to-global');
    delete review.request.uid;
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).send(review).expect(400);
    expectStatus(res.body, 400, 'BadRequest', /request\.uid: is required/);
  });

  it('400 for JSON scalars', async () => {
    for (const body of ['null', '42', '"text"', 'true']) {
      const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(body).expect(400);
      expectStatus(res.body, 400, 'BadRequest', /^not an admission\.k8s\.io\/v1 AdmissionReview/);
    }
  });

  it('413 for a body over 7 MiB, and serves one just under it', async () => {
    const review = loadReview('pool-update-node-other-fields');
    const base = JSON.stringify(review).length;
    review.request.object.spec.filler = 'x'.repeat(MAX_BODY_BYTES - base - 20);
    const under = JSON.stringify(review);
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(under).expect(200);
    review.request.object.spec.filler += 'x'.repeat(100);
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(JSON.stringify(review)).expect(413);
    expectStatus(res.body, 413, 'RequestEntityTooLarge', /^request body is larger than 7340032 bytes$/);
  });

  it('415 for another content type', async () => {
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'text/plain').send('{}').expect(415);
    expectStatus(res.body, 415, 'UnsupportedMediaType', /^content type "text\/plain" is not supported; send application\/json$/);
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"', 'application/json; foo=bar'])('accepts %s', async (type) => {
    await request(app)
      .post(WEBHOOKS.spiderIPPool.path)
      .set('Content-Type', type)
      .send(JSON.stringify(loadReview('pool-create-iaas-node')))
      .expect(200);
  });

  it.each(['application/json; charset=latin1', 'application/json; charset=utf-16le'])('415 for %s', async (type) => {
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', type).send('{}').expect(415);
    expectStatus(res.body, 415, 'UnsupportedMediaType', /charset/);
  });

  it('reads a body that starts with a UTF-8 byte order mark', async () => {
    const review = loadReview('pool-update-node-to-global');
    const body = `\uFEFF${JSON.stringify(review)}`; // sent as UTF-8: EF BB BF first
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(body).expect(200);
    expect(res.body.response).toMatchObject({ uid: review.request.uid, allowed: false });
  });

  it('serves a chunked body, and refuses one that grows over 7 MiB with 413', async () => {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const chunked = (write: (req: http.ClientRequest) => void) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          { port, host: '127.0.0.1', method: 'POST', path: WEBHOOKS.spiderIPPool.path, headers: { 'content-type': 'application/json' } },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        write(req);
      });
    try {
      const review = JSON.stringify(loadReview('pool-update-node-to-global'));
      const served = await chunked((req) => {
        req.write(review.slice(0, 100));
        req.end(review.slice(100));
      });
      expect(served.status).toBe(200);
      const refused = await chunked((req) => {
        const mib = 'x'.repeat(1024 * 1024);
        for (let i = 0; i < 8; i++) req.write(mib);
        req.end();
      });
      expect(refused.status).toBe(413);
      expectStatus(JSON.parse(refused.body), 413, 'RequestEntityTooLarge', /^request body is larger than 7340032 bytes$/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('415 for a compressed body', async () => {
    const res = await request(app)
      .post(WEBHOOKS.spiderIPPool.path)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'br')
      .send('{}')
      .expect(415);
    expectStatus(res.body, 415, 'UnsupportedMediaType', /encoding/);
  });

  it('405 with Allow: POST for other methods on a webhook path', async () => {
    const res = await request(app).get(WEBHOOKS.configMap.path).expect(405).expect('Allow', 'POST');
    expectStatus(res.body, 405, 'MethodNotAllowed', /^use POST/);
  });

  it('404 for unknown paths', async () => {
    const res = await request(app).post('/validate').send({}).expect(404);
    expectStatus(res.body, 404, 'NotFound', /^no handler for POST "\/validate"; webhooks are served at /);
  });

  it('400, not a crash, for deeply nested JSON', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(deep).expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^not an admission\.k8s\.io\/v1 AdmissionReview/);
  });

  it("treats a __proto__ key as data, never as the object's prototype", async () => {
    // The old pool is traditional; its metadata smuggles the IaaS annotation in a
    // "__proto__" key. Were it followed, old and new would both look like IaaS pools and
    // the update would pass; read as data, the annotation is being added: refused.
    const review = loadReview('pool-update-annotation-added');
    review.request.oldObject.metadata.PROTO = { annotations: { 'ipam.spidernet.io/iaas-provider': 'openstack' } };
    const body = JSON.stringify(review).replace('"PROTO"', '"__proto__"');
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(body).expect(200);
    expect(res.body.response.allowed).toBe(false);
    expect(res.body.response.status.details.causes[0].field).toBe('metadata.annotations[ipam.spidernet.io/iaas-provider]');
  });
});

describe('bodies read at once are bounded (MAX_PARSED_BYTES_IN_FLIGHT)', () => {
  /** The app on 127.0.0.1 with room for one largest body, and a socket holding that room. */
  async function withHeldBudget(bodyWaitMs: number, body: (port: number, holder: net.Socket) => Promise<void>) {
    const small = createApp({
      review: createReviewer(),
      logger,
      readinessChecks: [],
      metrics: createWebhookMetrics(),
      verifyClientCertificates: false,
      parsedBytesInFlight: MAX_BODY_BYTES,
      bodyWaitMs,
    });
    const server = http.createServer(small);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const holder = net.connect(port, '127.0.0.1');
    holder.on('error', () => undefined);
    // A largest body that never finishes arriving: it holds the whole budget.
    holder.write(
      `POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${MAX_BODY_BYTES}\r\n\r\n{`,
    );
    try {
      await body(port, holder);
    } finally {
      holder.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
  const send = (port: number) => request(`http://127.0.0.1:${port}`).post(WEBHOOKS.spiderIPPool.path).send(loadReview('pool-update-node-to-global'));

  it('a review that finds no room within the wait gets 429 with Retry-After', async () => {
    await withHeldBudget(100, async (port) => {
      const res = await send(port).expect(429);
      expect(res.headers['retry-after']).toBe('1');
      expectStatus(res.body, 429, 'TooManyRequests', /^too many review bodies being read at once; waited 100 ms, retry$/);
    });
  });

  it('a review that waits is served once room frees up', async () => {
    await withHeldBudget(10_000, async (port, holder) => {
      const waiting = send(port).then((res) => res.status);
      // Both requests are in the handler chain before the first one leaves.
      await until(
        async () =>
          (await request(`http://127.0.0.1:${port}`).get('/metrics')).text.includes(
            'controller_runtime_webhook_requests_in_flight{webhook="/validate-spiderippool"} 2',
          ),
        'the review to wait',
      );
      holder.destroy();
      expect(await waiting).toBe(200);
    });
  });

  it('a review whose client leaves while it waits is counted "aborted" and gives up its place', async () => {
    await withHeldBudget(10_000, async (port, holder) => {
      const metricsText = async () => (await request(`http://127.0.0.1:${port}`).get('/metrics')).text;
      const inFlight = (n: number) => `controller_runtime_webhook_requests_in_flight{webhook="/validate-spiderippool"} ${n}\n`;
      const aborted = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="aborted",operation="",allowed=""}`;
      const body = JSON.stringify(loadReview('pool-update-node-to-global'));
      const leaver = net.connect(port, '127.0.0.1');
      leaver.on('error', () => undefined);
      leaver.write(
        `POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await until(async () => (await metricsText()).includes(inFlight(2)), 'the review to wait');
      leaver.destroy();
      await until(async () => (await metricsText()).includes(inFlight(1)), 'the leaver to be counted');
      expect(sampleValue(await metricsText(), aborted)).toBe(1);
      // Its place in the queue is gone: once the holder leaves too, the next review gets the room at once.
      holder.destroy();
      await until(async () => (await metricsText()).includes(inFlight(0)), 'the holder to be counted');
      expect(sampleValue(await metricsText(), aborted)).toBe(2);
      expect((await send(port).expect(200)).body.response.allowed).toBe(false);
    });
  });

  it('a body over the limit is refused with 413 without waiting for room', async () => {
    await withHeldBudget(10_000, async (port) => {
      const res = await request(`http://127.0.0.1:${port}`)
        .post(WEBHOOKS.spiderIPPool.path)
        .set('Content-Type', 'application/json')
        .send('x'.repeat(MAX_BODY_BYTES + 1))
        .expect(413);
      expectStatus(res.body, 413, 'RequestEntityTooLarge', /^request body is larger than/);
    });
  });
});

describe('hostile input (found by attacking the server)', () => {
  it('400 "empty", not 415, for a JSON POST without a body', async () => {
    const res = await request(app).post(WEBHOOKS.configMap.path).set('Content-Type', 'application/json').expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^request body is empty; /);
  });

  it.each(['/VALIDATE-CONFIGMAP', '/validate-configmap/', '/Validate-SpiderIPPool'])('404 for the inexact path %s', async (path) => {
    await request(app).post(path).send(loadReview('configmap-update-timeout-100s')).expect(404);
  });

  it('reads only data[conf.yml]: other keys, whatever their names or values, are not decoded', async () => {
    const review = loadReview('configmap-update-timeout-50s');
    review.request.object.data = { ...review.request.object.data, 'x\r\nWarning: pwned\u001b[31m': 7 };
    const res = await request(app).post(WEBHOOKS.configMap.path).send(review).expect(200);
    expect(res.body.response).toMatchObject({ allowed: true });
    review.request.object.data = { 'conf.yml': 7 };
    const refused = await request(app).post(WEBHOOKS.configMap.path).send(review).expect(200);
    expect(refused.body.response.status.message).toBe('cannot decode ConfigMap at request.object.data[conf.yml]: must be a string, not a number');
  });

  it('quotes a hostile content type', async () => {
    const res = await request(app).post(WEBHOOKS.configMap.path).set('Content-Type', 'text/x\u0085y').send('{}').expect(415);
    expect(res.body.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('keeps the answer close to the request size for a huge hostile name', async () => {
    const review = loadReview('pool-update-annotation-and-nodename-removed');
    review.request.object.metadata.name = '\x7f'.repeat(1_000_000);
    const body = JSON.stringify(review);
    const res = await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'application/json').send(body).expect(200);
    expect(res.text.length).toBeLessThan(body.length * 1.5);
    expect(res.body.response.status.message).toContain('more characters)');
    expect(JSON.stringify(lines).length).toBeLessThan(10_000);
  });
});

describe('health', () => {
  it.each(['/healthz', '/livez'])('%s answers ok, ready or not', async (path) => {
    ready = false;
    await request(app).get(path).expect(200, 'ok\n');
  });

  it('/readyz answers ok while every check passes, and lists them with ?verbose', async () => {
    await request(app).get('/readyz').expect(200, 'ok\n');
    await request(app).get('/readyz?verbose').expect(200, '[+]always ok\n[+]switch ok\nreadyz check passed\n');
  });

  it('/readyz lists an informational check that fails, and stays ready', async () => {
    const withInformational = createApp({
      review: createReviewer(),
      logger,
      readinessChecks: [{ name: 'pool-cache', informational: true, check: () => 'not listed yet' }],
      metrics: createWebhookMetrics(),
      verifyClientCertificates: false,
    });
    await request(withInformational).get('/readyz').expect(200, 'ok\n');
    await request(withInformational).get('/readyz?verbose').expect(200, '[-]pool-cache failed: not listed yet\nreadyz check passed\n');
  });

  it('/readyz answers 503 naming the failed check and why, as the kube-apiserver does', async () => {
    ready = false;
    await request(app).get('/readyz').expect(503, '[+]always ok\n[-]switch failed: switched off by the test\nreadyz check failed\n');
  });
});

describe('/metrics', () => {
  it('counts reviews by webhook, code, operation and decision, and times them', async () => {
    const before = await metrics.registry.metrics();
    await request(app).post(WEBHOOKS.spiderIPPool.path).send(loadReview('pool-update-node-to-global')).expect(200);
    await request(app).post(WEBHOOKS.spiderIPPool.path).send(loadReview('pool-update-node-to-other-node')).expect(200);
    await request(app).post(WEBHOOKS.spiderIPPool.path).set('Content-Type', 'text/plain').send('x').expect(415);
    const res = await request(app)
      .get('/metrics')
      .expect(200)
      .expect('Content-Type', /^text\/plain; version=0\.0\.4/);
    const denied = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="200",operation="UPDATE",allowed="false"}`;
    const allowedSeries = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="200",operation="UPDATE",allowed="true"}`;
    const refused = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="415",operation="",allowed=""}`;
    const count = `controller_runtime_webhook_latency_seconds_count{webhook="/validate-spiderippool"}`;
    const delta = (series: string) => sampleValue(res.text, series) - sampleValue(before, series);
    expect([delta(denied), delta(allowedSeries), delta(refused), delta(count)]).toEqual([1, 1, 1, 3]);
    expect(res.text).toContain(`controller_runtime_webhook_requests_in_flight{webhook="/validate-spiderippool"} 0\n`);
    expect(res.text).toContain('# TYPE process_resident_memory_bytes gauge');
    expect(res.text).toContain('# TYPE spiderpool_iaas_webhook_certificate_reloads_total counter');
    // Present at 0 before any reload, so that increase() counts the first failure.
    expect(res.text).toContain('spiderpool_iaas_webhook_certificate_reloads_total{result="failure"} 0\n');
  });

  it('counts a request whose client went away before the answer as "aborted", not as the default 200', async () => {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const series = (code: string) => `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="${code}",operation="",allowed=""}`;
    const inFlight = `controller_runtime_webhook_requests_in_flight{webhook="/validate-spiderippool"}`;
    const before = await metrics.registry.metrics();
    const delta = (text: string, code: string) => sampleValue(text, series(code)) - sampleValue(before, series(code));
    try {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.write(
        `POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVersion":`,
      );
      await until(async () => sampleValue(await metrics.registry.metrics(), inFlight) === 1, 'the request to be read');
      socket.destroy();
      await until(async () => sampleValue(await metrics.registry.metrics(), inFlight) === 0, 'the request to be counted');
      const after = await metrics.registry.metrics();
      expect([delta(after, 'aborted'), delta(after, '200'), delta(after, '400')]).toEqual([1, 0, 0]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('does not make a series for an unknown path', async () => {
    await request(app).post(`/validate-x${Math.random()}`).send({}).expect(404);
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('/validate-x');
  });
});
