/**
 * The review route's endings that the app's tests do not reach: the warn-only worker's own
 * bug, an answer whose sending threw, and the same answer whether a review skips express
 * (its request target is the path) or goes through it (any other spelling, e.g. absolute-form).
 * The app serves on 127.0.0.1 only, with a stand-in for the worker.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { WEBHOOKS } from '../../src/defaults.js';
import { createReviewer } from '../../src/rules/registry.js';
import { createApp } from '../../src/server/app.js';
import { createWebhookMetrics } from '../../src/server/metrics.js';
import type { WarnOnlyReviews } from '../../src/server/warn-only-reviews.js';
import { sampleValue } from '../helpers/client.js';
import { loadReview } from '../fixtures/load.js';

/** POSTs `body` with the request target written as given (origin- or absolute-form): status, headers but `Date`, body. */
function rawPost(port: number, target: string, type: string, body: string): Promise<{ status?: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: target, headers: { 'Content-Type': type } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: { ...res.headers, date: undefined }, body: text }));
    });
    req.on('error', reject).end(body);
  });
}

describe('the review route', () => {
  it("answers a warn-only worker's bug with one 500, counted once under 500 and logged as an internal error", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const metrics = createWebhookMetrics();
    const worker: Pick<WarnOnlyReviews, 'submit'> = { submit: (_path, _body, answer) => answer({ type: 'error', message: 'the worker broke' }) };
    const isolated = { reviews: worker as WarnOnlyReviews, paths: [WEBHOOKS.pod.path] };
    const app = createApp({ review: createReviewer(), logger, readinessChecks: [], metrics, verifyClientCertificates: false, isolated });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await request(url).post(WEBHOOKS.pod.path).timeout(10_000).send(loadReview('pod-create-mixed-pools')).expect(500);
      expect(res.body).toMatchObject({ kind: 'Status', code: 500, message: 'internal error; see the webhook log' });
      const text = await metrics.registry.metrics();
      const total = (code: string) => `controller_runtime_webhook_requests_total{webhook="${WEBHOOKS.pod.path}",code="${code}",operation="",allowed=""}`;
      const inFlight = `controller_runtime_webhook_requests_in_flight{webhook="${WEBHOOKS.pod.path}"}`;
      expect([sampleValue(text, total('500')), sampleValue(text, total('aborted')), sampleValue(text, inFlight)]).toEqual([1, 0, 0]);
      const internal = lines.filter((line) => line['msg'] === 'internal error while serving a request');
      expect(internal.map((line) => (line['err'] as { message: string }).message)).toEqual(['the worker broke']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('counts an answer whose sending threw as one 500, with nothing left in flight', async () => {
    const metrics = createWebhookMetrics();
    const app = createApp({ review: createReviewer(), logger: pino({ level: 'silent' }), readinessChecks: [], metrics, verifyClientCertificates: false });
    let broken = true;
    const server = http.createServer((req, res) => {
      // The first answer's head cannot be written (a bug in sending); express's own 500 then can.
      const writeHead = res.writeHead.bind(res);
      res.writeHead = ((...args: Parameters<typeof writeHead>) => {
        if (broken) {
          broken = false;
          throw new Error('the head could not be written');
        }
        return writeHead(...args);
      }) as typeof res.writeHead;
      app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await request(url).post(WEBHOOKS.configMap.path).timeout(10_000).set('Content-Type', 'text/plain').send('x').expect(500);
      const text = await metrics.registry.metrics();
      const total = (code: string) => `controller_runtime_webhook_requests_total{webhook="${WEBHOOKS.configMap.path}",code="${code}",operation="",allowed=""}`;
      const inFlight = `controller_runtime_webhook_requests_in_flight{webhook="${WEBHOOKS.configMap.path}"}`;
      expect([sampleValue(text, total('500')), sampleValue(text, total('415')), sampleValue(text, inFlight)]).toEqual([1, 0, 0]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.each([
    ['an allowed review', WEBHOOKS.spiderIPPool.path, 'application/json', JSON.stringify(loadReview('pool-create-iaas-node')), '200 true'],
    ['a refused review', WEBHOOKS.spiderIPPool.path, 'application/json', JSON.stringify(loadReview('pool-create-two-nodes')), '200 false'],
    ['a body that is not JSON', WEBHOOKS.configMap.path, 'text/plain', 'x', '415 undefined'],
  ])('answers %s alike whether it skips express or goes through it', async (_what, path, type, body, outcome) => {
    const app = createApp({
      review: createReviewer(),
      logger: pino({ level: 'silent' }),
      readinessChecks: [],
      metrics: createWebhookMetrics(),
      verifyClientCertificates: false,
    });
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const direct = await rawPost(port, `${path}?timeout=10s`, type, body);
      expect(await rawPost(port, `http://127.0.0.1:${port}${path}?timeout=10s`, type, body)).toEqual(direct);
      expect(`${direct.status} ${(JSON.parse(direct.body) as { response?: { allowed: boolean } }).response?.allowed}`).toBe(outcome);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers a bug thrown before the route could catch it with one 500, on either way in', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const app = createApp({ review: createReviewer(), logger, readinessChecks: [], metrics: createWebhookMetrics(), verifyClientCertificates: false });
    const server = http.createServer((req, res) => {
      // The route reads the raw headers first thing: a bug there throws inside Node's `request` event.
      Object.defineProperty(req, 'rawHeaders', {
        get: () => {
          throw new Error('the headers could not be read');
        },
      });
      app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      for (const target of [WEBHOOKS.configMap.path, `http://127.0.0.1:${port}${WEBHOOKS.configMap.path}`]) {
        const res = await rawPost(port, target, 'application/json', '{}');
        expect([target, res.status, JSON.parse(res.body).message]).toEqual([target, 500, 'internal error; see the webhook log']);
      }
      const internal = lines.filter((line) => line['msg'] === 'internal error while serving a request');
      expect(internal.map((line) => (line['err'] as { message: string }).message)).toEqual(['the headers could not be read', 'the headers could not be read']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
