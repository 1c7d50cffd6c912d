/**
 * The internal-error series of `controller_runtime_webhook_requests_total` (code 500, no
 * review decided) exists at 0 on every webhook path from the start, so that the Errors
 * alert's `rate()` sees the first 500 after a start (a series that appears at 1 has no
 * earlier sample to rise from).
 */
import { pino } from 'pino';
import request from 'supertest';
import { WEBHOOK_SERVED_PATHS, WEBHOOKS } from '../../src/defaults.js';
import { createWebhookMetrics } from '../../src/server/metrics.js';
import { createApp } from '../../src/server/app.js';
import { sampleValue } from '../helpers/client.js';
import { loadReview } from '../fixtures/load.js';

const series = (path: string) => `controller_runtime_webhook_requests_total{webhook="${path}",code="500",operation="",allowed=""}`;

describe('the 500 series of controller_runtime_webhook_requests_total', () => {
  it('is 0 on every webhook path before any request, then counts an internal error', async () => {
    const metrics = createWebhookMetrics();
    const review = () => {
      throw new Error('a bug in a rule');
    };
    const app = createApp({ review, logger: pino({ level: 'silent' }), readinessChecks: [], metrics, verifyClientCertificates: false });
    const before = await metrics.registry.metrics();
    for (const path of WEBHOOK_SERVED_PATHS) expect(before.split('\n')).toContain(`${series(path)} 0`);
    await request(app).post(WEBHOOKS.spiderIPPool.path).send(loadReview('pool-create-two-nodes')).expect(500);
    const after = await metrics.registry.metrics();
    expect(sampleValue(after, series(WEBHOOKS.spiderIPPool.path))).toBe(1);
    expect(sampleValue(after, series(WEBHOOKS.configMap.path))).toBe(0);
  });
});
