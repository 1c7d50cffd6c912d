/**
 * Every decision on the record, through the express adapter: the response's audit
 * annotations, one info log line per review in which a rule fired (rules, fields, decision,
 * user, operation, object, whole microseconds), none per clean allowed review, and
 * `spiderpool_iaas_webhook_decisions_total{webhook,rule,action}`, bounded.
 */
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { WEBHOOK_SERVED_PATHS, WEBHOOKS } from '../../src/defaults.js';
import { buildAdmissionReview } from '../../src/kubernetes/build.js';
import { createApp } from '../../src/server/app.js';
import { createWebhookMetrics } from '../../src/server/metrics.js';
import { createReviewer } from '../../src/rules/registry.js';
import { parseEnforcement } from '../../src/rules/enforcement-table.js';
import { REFUSAL_RULES } from '../../src/rules/rule-names.js';
import { loadReview } from '../fixtures/load.js';
import { spiderIPPool } from '../helpers/pools.js';

const NAME = 'spiderpool_iaas_webhook_decisions_total';

/** The decision series of a scrape, `webhook rule action` → value. */
function decisions(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${NAME}\\{webhook="([^"]*)",rule="([^"]*)",action="([^"]*)"\\} (\\S+)$`).exec(line);
    if (m) found.set(`${m[1]} ${m[2]} ${m[3]}`, Number(m[4]));
    else if (line.startsWith(`${NAME}{`)) throw new Error(`unexpected decision series: ${line}`);
  }
  return found;
}

function newApp(enforcement: string[]) {
  const lines: Record<string, any>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const metrics = createWebhookMetrics();
  const review = createReviewer({ enforcement: parseEnforcement(enforcement) });
  const app = createApp({ review, logger, readinessChecks: [], metrics, verifyClientCertificates: false });
  /** Sends `body`; its response, its log lines at info, and the decision series that changed. */
  const send = async (body: unknown, path: string = WEBHOOKS.spiderIPPool.path) => {
    const before = decisions(await metrics.registry.metrics());
    lines.length = 0;
    const res = await request(app)
      .post(path)
      .send(body as object)
      .expect(200);
    const after = decisions(await metrics.registry.metrics());
    const changed = Object.fromEntries([...after].filter(([k, v]) => v !== before.get(k)).map(([k, v]) => [k, v - before.get(k)!]));
    return { response: res.body.response, info: lines.filter((l) => l['level'] === 30), changed };
  };
  return { send, metrics };
}

const threeRules = () => {
  const body = buildAdmissionReview({ operation: 'CREATE', object: spiderIPPool('pool-a', { provider: '', nodeName: ['node-1', 'node-2'] }) });
  body.request.userInfo = { username: 'alice@example.com' };
  return body;
};

describe('every decision on the record', () => {
  it('Warn: allowed, annotated, one info line with the rules, fields, decision, user, object and whole microseconds, counted under warn', async () => {
    const { send } = newApp(['Warn']);
    const { response, info, changed } = await send(threeRules());
    expect(response.allowed).toBe(true);
    expect(response.auditAnnotations).toEqual({ decision: 'warn', rules: 'provider-empty,nodes-count,parent-nic-missing' });
    expect(info).toHaveLength(1);
    expect(info[0]).toMatchObject({
      msg: 'admission review',
      decision: 'warn',
      rules: ['provider-empty', 'nodes-count', 'parent-nic-missing'],
      fields: ['metadata.annotations[ipam.spidernet.io/iaas-provider]', 'spec.nodeName', 'metadata.annotations[ipam.spidernet.io/parent-nic]'],
      user: 'alice@example.com',
      operation: 'CREATE',
      kind: 'SpiderIPPool.spiderpool.spidernet.io',
      name: 'pool-a',
      allowed: true,
    });
    expect(Number.isInteger(info[0]!['latencyUs'])).toBe(true);
    expect(info[0]).not.toHaveProperty('latencyMs');
    expect(changed).toEqual({
      '/validate-spiderippool provider-empty warn': 1,
      '/validate-spiderippool nodes-count warn': 1,
      '/validate-spiderippool parent-nic-missing warn': 1,
    });
  });

  it('mixed: the decision is the strongest action, each rule counted under its own', async () => {
    const { send } = newApp(['Audit', 'nodes-count=Deny', 'provider-empty=Warn']);
    const { response, info, changed } = await send(threeRules());
    expect(response.allowed).toBe(false);
    expect(response.auditAnnotations).toEqual({ decision: 'deny', rules: 'provider-empty,nodes-count,parent-nic-missing' });
    expect(info.map((l) => l['decision'])).toEqual(['deny']);
    expect(changed).toEqual({
      '/validate-spiderippool provider-empty warn': 1,
      '/validate-spiderippool nodes-count deny': 1,
      '/validate-spiderippool parent-nic-missing audit': 1,
    });
  });

  it('Audit on the ConfigMap: allowed with its own warnings only, annotated, logged and counted', async () => {
    const { send } = newApp(['conf-yml=Audit']);
    const { response, info, changed } = await send(loadReview('configmap-update-timeout-100s'), WEBHOOKS.configMap.path);
    expect(response).toEqual({ uid: expect.any(String), allowed: true, auditAnnotations: { decision: 'audit', rules: 'conf-yml' } });
    expect(info.map((l) => [l['decision'], l['rules']])).toEqual([['audit', ['conf-yml']]]);
    expect(changed).toEqual({ '/validate-configmap conf-yml audit': 1 });
  });

  it('a clean allowed review: no annotation, no info line, nothing counted', async () => {
    const { send } = newApp(['Warn']);
    const { response, info, changed } = await send(loadReview('pool-create-iaas-node'));
    expect(response.auditAnnotations).toBeUndefined();
    expect(info).toEqual([]);
    expect(changed).toEqual({});
  });

  it('exists at 0 for every rule and action on every path, and counts no name outside REFUSAL_RULES', async () => {
    const { metrics } = newApp([]);
    for (const path of WEBHOOK_SERVED_PATHS) metrics.route(path);
    metrics.route(WEBHOOKS.spiderIPPool.path).decided([{ rule: 'no-such-rule', field: 'x', action: 'Warn' }]);
    const series = decisions(await metrics.registry.metrics());
    expect(series.size).toBe(WEBHOOK_SERVED_PATHS.length * REFUSAL_RULES.length * 3);
    expect(new Set(series.values())).toEqual(new Set([0]));
  });
});
