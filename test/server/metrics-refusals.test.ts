/**
 * `spiderpool_iaas_webhook_refusals_total{webhook,rule}`: the server counts each refused
 * review once under every rule that refused it, by the path it came to; allowed reviews,
 * warnings and requests that are no review do not count; every (path, rule) series exists
 * at 0 from the path's first use, and no other.
 */
import { pino } from 'pino';
import request from 'supertest';
import { WEBHOOK_SERVED_PATHS, WEBHOOKS } from '../../src/defaults.js';
import { buildAdmissionReview } from '../../src/kubernetes/build.js';
import { createWebhookMetrics } from '../../src/server/metrics.js';
import { createApp } from '../../src/server/app.js';
import { createReviewer } from '../../src/rules/registry.js';
import { REFUSAL_RULES } from '../../src/rules/rule-names.js';
import { loadReview } from '../fixtures/load.js';
import { spiderIPPool } from '../helpers/pools.js';

const NAME = 'spiderpool_iaas_webhook_refusals_total';

/** The refusal series of a scrape, `webhook rule` → value. */
function refusals(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${NAME}\\{webhook="([^"]*)",rule="([^"]*)"\\} (\\S+)$`).exec(line);
    if (m) found.set(`${m[1]} ${m[2]}`, Number(m[3]));
    else if (line.startsWith(`${NAME}{`)) throw new Error(`unexpected refusal series: ${line}`);
  }
  return found;
}

function newApp() {
  const metrics = createWebhookMetrics();
  const app = createApp({ review: createReviewer(), logger: pino({ level: 'silent' }), readinessChecks: [], metrics, verifyClientCertificates: false });
  const scrape = async () => refusals(await metrics.registry.metrics());
  /** Sends `body` to `path` and returns how each refusal series changed (only those that did). */
  const counted = async (body: unknown, path: string = WEBHOOKS.spiderIPPool.path) => {
    const before = await scrape();
    await request(app)
      .post(path)
      .send(body as object)
      .expect(200);
    const after = await scrape();
    return Object.fromEntries([...after].filter(([k, v]) => v !== (before.get(k) ?? 0)).map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
  };
  return { metrics, app, scrape, counted };
}

describe(NAME, () => {
  it('exists at 0 for every rule on every webhook path, and for nothing else', async () => {
    const { scrape } = newApp();
    const series = await scrape();
    const expected = WEBHOOK_SERVED_PATHS.flatMap((path) => REFUSAL_RULES.map((rule) => `${path} ${rule}`));
    expect([...series.keys()].sort()).toEqual(expected.sort());
    expect(new Set(series.values())).toEqual(new Set([0]));
    expect(REFUSAL_RULES.length).toBeGreaterThan(10);
  });

  it('counts a review refused by one rule once, under that rule and the path it came to', async () => {
    const { counted } = newApp();
    expect(await counted(loadReview('pool-create-two-nodes'))).toEqual({ '/validate-spiderippool nodes-count': 1 });
    expect(await counted(loadReview('configmap-update-timeout-100s'), WEBHOOKS.configMap.path)).toEqual({ '/validate-configmap conf-yml': 1 });
  });

  it('counts a review refused by several rules once under each', async () => {
    const { counted } = newApp();
    const pool = spiderIPPool('pool-a', { provider: '', nodeName: ['node-1', 'node-2'] });
    expect(await counted(buildAdmissionReview({ operation: 'CREATE', object: pool }))).toEqual({
      '/validate-spiderippool provider-empty': 1,
      '/validate-spiderippool nodes-count': 1,
      '/validate-spiderippool parent-nic-missing': 1,
    });
  });

  it('counts a refused dry run as a refusal', async () => {
    const { counted } = newApp();
    const dryRun = loadReview('pool-update-node-to-global-dryrun');
    expect(dryRun.request['dryRun']).toBe(true);
    expect(await counted(dryRun)).toEqual({ '/validate-spiderippool mode-fixed': 1 });
  });

  it('does not count an allowed review, warnings, an undecodable object, or a body that is no review', async () => {
    const { app, counted, scrape } = newApp();
    expect(await counted(loadReview('pool-create-iaas-node'))).toEqual({});
    expect(await counted(loadReview('pool-create-global-with-parent-nic'))).toEqual({}); // allowed with a warning
    expect(await counted(loadReview('pod-create-mixed-pools'), WEBHOOKS.pod.path)).toEqual({}); // warn-only webhook
    const node = spiderIPPool('pool-a', { provider: 'aws', nic: 'eth0', nodeName: ['node-1'] });
    expect(await counted(buildAdmissionReview({ operation: 'CREATE', object: { ...node, spec: { nodeName: 5 } } }))).toEqual({}); // Errored(400)
    await request(app).post(WEBHOOKS.spiderIPPool.path).send({ kind: 'AdmissionReview' }).expect(400);
    expect(new Set((await scrape()).values())).toEqual(new Set([0]));
  });

  it('counts no name outside REFUSAL_RULES (the label set stays bounded)', async () => {
    const { metrics, scrape } = newApp();
    const route = metrics.route(WEBHOOKS.spiderIPPool.path);
    route.refused(['no-such-rule', 'nodes-count']);
    const series = await scrape();
    expect(series.get('/validate-spiderippool nodes-count')).toBe(1);
    expect([...series.keys()].some((k) => k.includes('no-such-rule'))).toBe(false);
  });
});
