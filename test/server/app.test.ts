import { pino } from 'pino';
import request from 'supertest';
import { createReviewer } from '../../src/admission/review.js';
import { AdmissionReviewResponseSchema } from '../../src/admission/schema.js';
import { MAX_BODY_BYTES, WEBHOOK_PATHS } from '../../src/defaults.js';
import { createWebhookMetrics } from '../../src/metrics/webhook.js';
import { createApp } from '../../src/server/app.js';
import { loadReview } from '../fixtures/load.js';
import { sampleValue } from './client.js';

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
    [WEBHOOK_PATHS.spiderIPPool, 'pool-update-node-to-global', false],
    [WEBHOOK_PATHS.spiderIPPool, 'pool-update-node-to-other-node', true],
    [WEBHOOK_PATHS.configMap, 'configmap-update-timeout-100s', false],
    [WEBHOOK_PATHS.configMap, 'configmap-update-timeout-50s', true],
  ])('POST %s with %s answers 200 and an AdmissionReview (allowed: %s)', async (path, fixture, allowed) => {
    const review = loadReview(fixture);
    const res = await request(app).post(path).send(review).expect(200).expect('Content-Type', /application\/json/);
    const body = AdmissionReviewResponseSchema.parse(res.body);
    expect(body.response.uid).toBe(review.request.uid);
    expect(body.response.allowed).toBe(allowed);
  });

  it('logs one JSON line per review, without the body', async () => {
    const review = loadReview('configmap-update-timeout-100s');
    await request(app).post(WEBHOOK_PATHS.configMap).send(review).expect(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'admission review',
      uid: review.request.uid,
      kind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'spiderpool-conf',
      operation: 'UPDATE',
      dryRun: false,
      allowed: false,
      code: 422,
      latencyMs: expect.any(Number),
    });
    expect(JSON.stringify(lines[0])).not.toContain('httpRequestTimeout');
  });

  it('accepts application/json with a charset', async () => {
    await request(app)
      .post(WEBHOOK_PATHS.spiderIPPool)
      .set('Content-Type', 'application/json; charset=utf-8')
      .send(JSON.stringify(loadReview('pool-create-iaas-node')))
      .expect(200);
  });
});

describe('bad requests get a 4xx Status with a one-line reason', () => {
  it('400 for a body that is not JSON', async () => {
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send('{"apiVersion":').expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^request body is not valid JSON$/);
  });

  it('400 for JSON that is not an AdmissionReview v1', async () => {
    const res = await request(app).post(WEBHOOK_PATHS.configMap).send({ hello: 'world' }).expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^not an admission\.k8s\.io\/v1 AdmissionReview: apiVersion: /);
  });

  it('400 for a review without request.uid', async () => {
    const review = loadReview('pool-update-node-to-global');
    delete review.request.uid;
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).send(review).expect(400);
    expectStatus(res.body, 400, 'BadRequest', /request\.uid: is required/);
  });

  it('400 for JSON scalars', async () => {
    for (const body of ['null', '42', '"text"', 'true']) {
      const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send(body).expect(400);
      expectStatus(res.body, 400, 'BadRequest', /^not an admission\.k8s\.io\/v1 AdmissionReview/);
    }
  });

  it('413 for a body over 3 MiB, and serves one just under it', async () => {
    const review = loadReview('pool-update-node-other-fields');
    const base = JSON.stringify(review).length;
    review.request.object.spec.filler = 'x'.repeat(MAX_BODY_BYTES - base - 20);
    const under = JSON.stringify(review);
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send(under).expect(200);
    review.request.object.spec.filler += 'x'.repeat(100);
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send(JSON.stringify(review)).expect(413);
    expectStatus(res.body, 413, 'RequestEntityTooLarge', /^request body is larger than 3145728 bytes$/);
  });

  it('415 for another content type', async () => {
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'text/plain').send('{}').expect(415);
    expectStatus(res.body, 415, 'UnsupportedMediaType', /^content type "text\/plain" is not supported; send application\/json$/);
  });

  it('415 for a compressed body', async () => {
    const res = await request(app)
      .post(WEBHOOK_PATHS.spiderIPPool)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'br')
      .send('{}')
      .expect(415);
    expectStatus(res.body, 415, 'UnsupportedMediaType', /encoding/);
  });

  it('405 with Allow: POST for other methods on a webhook path', async () => {
    const res = await request(app).get(WEBHOOK_PATHS.configMap).expect(405).expect('Allow', 'POST');
    expectStatus(res.body, 405, 'MethodNotAllowed', /^use POST/);
  });

  it('404 for unknown paths', async () => {
    const res = await request(app).post('/validate').send({}).expect(404);
    expectStatus(res.body, 404, 'NotFound', /^no handler for POST "\/validate"; webhooks are served at /);
  });

  it('400, not a crash, for deeply nested JSON', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send(deep).expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^not an admission\.k8s\.io\/v1 AdmissionReview/);
  });

  it('treats a __proto__ key as data, never as the object\'s prototype', async () => {
    // The old pool is traditional; its metadata smuggles the IaaS annotation in a
    // "__proto__" key. Were it followed, old and new would both look like IaaS pools and
    // the update would pass; read as data, the annotation is being added: refused.
    const review = loadReview('pool-update-annotation-added');
    review.request.oldObject.metadata.PROTO = { annotations: { 'ipam.spidernet.io/iaas-provider': 'openstack' } };
    const body = JSON.stringify(review).replace('"PROTO"', '"__proto__"');
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send(body).expect(200);
    expect(res.body.response.allowed).toBe(false);
    expect(res.body.response.status.details.causes[0].field).toBe('metadata.annotations[ipam.spidernet.io/iaas-provider]');
  });
});

describe('hostile input (found by attacking the server)', () => {
  it('400 "empty", not 415, for a JSON POST without a body', async () => {
    const res = await request(app).post(WEBHOOK_PATHS.configMap).set('Content-Type', 'application/json').expect(400);
    expectStatus(res.body, 400, 'BadRequest', /^request body is empty; /);
  });

  it.each(['/VALIDATE-CONFIGMAP', '/validate-configmap/', '/Validate-SpiderIPPool'])('404 for the inexact path %s', async (path) => {
    await request(app).post(path).send(loadReview('configmap-update-timeout-100s')).expect(404);
  });

  it('reads only data[conf.yml]: other keys, whatever their names or values, are not decoded', async () => {
    const review = loadReview('configmap-update-timeout-50s');
    review.request.object.data = { ...review.request.object.data, 'x\r\nWarning: pwned\u001b[31m': 7 };
    const res = await request(app).post(WEBHOOK_PATHS.configMap).send(review).expect(200);
    expect(res.body.response).toMatchObject({ allowed: true });
    review.request.object.data = { 'conf.yml': 7 };
    const refused = await request(app).post(WEBHOOK_PATHS.configMap).send(review).expect(200);
    expect(refused.body.response.status.message).toBe('cannot decode ConfigMap at request.object.data["conf.yml"]: Invalid input: expected string, received number');
  });

  it('quotes a hostile content type', async () => {
    const res = await request(app).post(WEBHOOK_PATHS.configMap).set('Content-Type', 'text/x\u0085y').send('{}').expect(415);
    expect(res.body.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('keeps the answer close to the request size for a huge hostile name', async () => {
    const review = loadReview('pool-update-annotation-and-nodename-removed');
    review.request.object.metadata.name = '\x7f'.repeat(1_000_000);
    const body = JSON.stringify(review);
    const res = await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'application/json').send(body).expect(200);
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
    await request(app).post(WEBHOOK_PATHS.spiderIPPool).send(loadReview('pool-update-node-to-global')).expect(200);
    await request(app).post(WEBHOOK_PATHS.spiderIPPool).send(loadReview('pool-update-node-to-other-node')).expect(200);
    await request(app).post(WEBHOOK_PATHS.spiderIPPool).set('Content-Type', 'text/plain').send('x').expect(415);
    const res = await request(app).get('/metrics').expect(200).expect('Content-Type', /^text\/plain; version=0\.0\.4/);
    const denied = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="200",operation="UPDATE",allowed="false"}`;
    const allowedSeries = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="200",operation="UPDATE",allowed="true"}`;
    const refused = `controller_runtime_webhook_requests_total{webhook="/validate-spiderippool",code="415",operation="",allowed=""}`;
    const count = `controller_runtime_webhook_latency_seconds_count{webhook="/validate-spiderippool"}`;
    const delta = (series: string) => sampleValue(res.text, series) - sampleValue(before, series);
    expect([delta(denied), delta(allowedSeries), delta(refused), delta(count)]).toEqual([1, 1, 1, 3]);
    expect(res.text).toContain(`controller_runtime_webhook_requests_in_flight{webhook="/validate-spiderippool"} 0\n`);
    expect(res.text).toContain('# TYPE process_resident_memory_bytes gauge');
    expect(res.text).toContain('# TYPE spiderpool_iaas_webhook_certificate_reloads_total counter');
  });

  it('does not make a series for an unknown path', async () => {
    await request(app).post('/validate-x' + Math.random()).send({}).expect(404);
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('/validate-x');
  });
});
