/**
 * deploy/components/monitoring (ServiceMonitor, PrometheusRule, Grafana dashboard) agrees
 * with the webhook and with deploy/: every query names series the webhook exports (read
 * from `/metrics` of a webhook started here, with its pool and spiderpool-conf caches)
 * or a listed external one, and applies each function to a series of the right type;
 * every alert carries what an operator needs; the README shows the alerts of the rule
 * file. Node only; promtool's unit tests of the alerts are in test/e2e/monitoring.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { parse } from 'yaml';
import { registerPoolCacheMetrics, startPoolCache, type PoolCache } from '../../src/cluster/pool-cache.js';
import { registerSpiderpoolConfCacheMetrics, startSpiderpoolConfCache, type SpiderpoolConfCache } from '../../src/cluster/spiderpool-conf-cache.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { createWebhookMetrics } from '../../src/server/metrics.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { FakePoolApiServer, kubeConfigFor, pool } from '../cluster/fake-api-server.js';
import { loadReview } from '../fixtures/load.js';
import { until } from '../helpers/until.js';
import {
  dashboardQueries,
  EXTERNAL_SERIES,
  loadAlerts,
  loadDashboard,
  MONITORING_DIR,
  queryProblems,
  README_TABLE_END,
  README_TABLE_START,
  renderAlertTable,
  seriesKinds,
  shortenedRuleGroups,
  type SeriesKind,
} from './monitoring.js';
import { fullMatch, parseDurationMs, parsePromql, selectors } from './promql.js';

const ROOT = path.resolve(MONITORING_DIR, '../../..');
const readYaml = async (file: string) => parse(await readFile(path.join(ROOT, file), 'utf8'));
const alerts = loadAlerts();
const { configMap, key, dashboard } = loadDashboard();
const queries = [
  ...alerts.map((a) => ({ where: `alert ${a.alert}`, expr: a.expr })),
  ...dashboardQueries(dashboard).map((q) => ({ where: `panel "${q.panel}"`, expr: q.expr })),
];

/** GET over HTTPS trusting only `ca`. */
function get(port: number, ca: string, urlPath: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        method: body ? 'POST' : 'GET',
        path: urlPath,
        ca,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the queries against what the webhook exports', () => {
  let api: FakePoolApiServer;
  let pools: PoolCache;
  let confs: SpiderpoolConfCache;
  let server: RunningServer;
  let certDir: string;
  let kinds: Map<string, SeriesKind>;

  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    api = new FakePoolApiServer();
    // One pool breaking a rule (an IaaS pool without nodeName is global; a pair naming itself is not).
    api.lists = [{ status: 200, items: [pool('pool-a', '1', 'pool-a')], resourceVersion: '1' }];
    const kubeConfig = kubeConfigFor(await api.start());
    // The same composition as `serve` with a cluster connection (src/cli/main.ts).
    const metrics = createWebhookMetrics();
    pools = startPoolCache(kubeConfig, { logger });
    confs = startSpiderpoolConfCache(kubeConfig, { name: 'spiderpool-conf', namespace: 'kube-system' }, { logger });
    registerPoolCacheMetrics(metrics.registry, pools);
    registerSpiderpoolConfCacheMetrics(metrics.registry, confs);
    certDir = await mkdtemp(path.join(tmpdir(), 'monitoring-certs-'));
    server = await startServer({ port: 0, host: '127.0.0.1', certDir, generateCerts: true, logger, metrics });
    await until(() => pools.pools.hasSynced(), 'the pool cache synced');
    const answer = await get(server.port, server.caCertPem!, WEBHOOKS.spiderIPPool.path, JSON.stringify(loadReview('pool-create-empty-node-name')));
    expect(answer.status).toBe(200);
    const scraped = await get(server.port, server.caCertPem!, '/metrics');
    expect(scraped.status).toBe(200);
    kinds = seriesKinds(scraped.body);
  }, 60_000); // generating the certificates takes seconds on a loaded machine

  afterAll(async () => {
    await server?.stop();
    await Promise.all([pools?.stop(), confs?.stop()]);
    await api?.stop();
    await rm(certDir, { recursive: true, force: true });
  });

  it('reads the exported series and their types from /metrics', () => {
    expect(kinds.get('controller_runtime_webhook_requests_total')).toBe('counter');
    expect(kinds.get('controller_runtime_webhook_latency_seconds_bucket')).toBe('histogram_bucket');
    expect(kinds.get('spiderpool_iaas_webhook_pool_violations')).toBe('gauge');
    expect(kinds.get('spiderpool_iaas_webhook_refusals_total')).toBe('counter');
    expect(kinds.get('controller_runtime_webhook_latency_seconds')).toBeUndefined();
  });

  it.each(queries)('$where: names exported series and applies each function to the right type', ({ expr }) => {
    expect(queryProblems(expr, kinds)).toEqual([]);
  });

  it("catches the mistakes Spiderpool's chart ships (the check can fail)", () => {
    expect(queryProblems('increase(ippool_allocation_failures_total[5m]) > 0', kinds)).toEqual([
      'names ippool_allocation_failures_total, which the webhook does not export and is not a known external series',
    ]);
    expect(queryProblems('rate(spiderpool_iaas_webhook_pool_violations[5m]) > 0', kinds)).toEqual([
      'applies rate() to spiderpool_iaas_webhook_pool_violations, a gauge',
    ]);
    expect(queryProblems('sum by (rule) (rate(spiderpool_iaas_webhook_refusal_total[5m]))', kinds)).toEqual([
      'names spiderpool_iaas_webhook_refusal_total, which the webhook does not export and is not a known external series',
    ]);
    expect(queryProblems('deriv(spiderpool_iaas_webhook_refusals_total[5m])', kinds)).toEqual([
      'applies deriv() to spiderpool_iaas_webhook_refusals_total, a counter, not a gauge',
    ]);
    expect(queryProblems('increase(kube_deployment_status_replicas_available[5m])', kinds)).toEqual([
      'applies increase() to kube_deployment_status_replicas_available, a gauge',
    ]);
    expect(queryProblems('histogram_quantile(0.99, rate(controller_runtime_webhook_latency_seconds_sum[5m]))', kinds)).toEqual([
      "applies histogram_quantile() to controller_runtime_webhook_latency_seconds_sum, which is not a histogram's _bucket series",
    ]);
    expect(queryProblems('deriv(controller_runtime_webhook_requests_total[5m])', kinds)).toEqual([
      'applies deriv() to controller_runtime_webhook_requests_total, a counter, not a gauge',
    ]);
    expect(queryProblems('{job="x"}', kinds)).toEqual(['a selector names no metric']);
  });
});

describe('the external series', () => {
  it("are only the API server's and kube-state-metrics'", () => {
    for (const name of EXTERNAL_SERIES.keys()) expect(name).toMatch(/^(apiserver|kube)_/);
  });

  it('are each used by an alert (none listed for nothing)', () => {
    const used = new Set(alerts.flatMap((a) => selectors(parsePromql(a.expr)).map((s) => s.name)));
    for (const name of EXTERNAL_SERIES.keys()) expect(used).toContain(name);
  });
});

describe('every alert', () => {
  it.each(alerts)('$alert has a severity, a summary, a description naming the command to run, and a for: of at least a minute', (a) => {
    expect(['critical', 'warning']).toContain(a.labels?.['severity']);
    expect(a.annotations?.['summary']).toMatch(/\S/);
    expect(a.annotations?.['description']).toMatch(/`(kubectl|spiderpool-iaas-webhook audit) [^`]+`/);
    expect(parseDurationMs(a.for ?? '')).toBeGreaterThanOrEqual(60_000);
  });

  it('has a name of its own', () => {
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
  });

  it('covers what an operator needs, each alert on its series', () => {
    const onSeries = (name: string) => alerts.filter((a) => selectors(parsePromql(a.expr)).some((s) => s.name === name)).map((a) => a.alert);
    for (const name of [
      'apiserver_admission_webhook_rejection_count',
      'apiserver_admission_webhook_fail_open_count',
      'kube_deployment_status_replicas_available',
      'controller_runtime_webhook_requests_total',
      'controller_runtime_webhook_latency_seconds_bucket',
      'spiderpool_iaas_webhook_serving_certificate_expiration_timestamp_seconds',
      'spiderpool_iaas_webhook_certificate_reloads_total',
      'spiderpool_iaas_webhook_pool_cache_synced',
      'spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds',
      'spiderpool_iaas_webhook_pool_violations',
      'spiderpool_iaas_webhook_connection_rejections_total',
      'spiderpool_iaas_webhook_connection_evictions_total',
      'spiderpool_iaas_webhook_decisions_total',
    ]) {
      expect({ name, alerts: onSeries(name) }).toEqual({ name, alerts: expect.arrayContaining([expect.any(String)]) });
    }
  });
});

describe("the API server's view of the webhooks", () => {
  let webhooks: { name: string; failurePolicy: string }[];
  beforeAll(async () => {
    webhooks = (await readYaml('deploy/base/validatingwebhookconfiguration.yaml')).webhooks;
  });

  /** The webhook names the `name` matchers of the alert on `series` select. */
  function selected(series: string): string[] {
    const matchers = alerts
      .flatMap((a) => selectors(parsePromql(a.expr)).filter((s) => s.name === series))
      .flatMap((s) => s.matchers.filter((m) => m.label === 'name'));
    expect(matchers.length).toBeGreaterThan(0);
    return webhooks
      .map((w) => w.name)
      .filter((name) => matchers.every((m) => (m.op === '=~' ? fullMatch(m.value, name) : m.op === '=' ? m.value === name : false)));
  }

  it('the unreachable alert watches every refusing webhook (failurePolicy Fail), on calling errors only', () => {
    expect(selected('apiserver_admission_webhook_rejection_count')).toEqual(webhooks.map((w) => w.name));
    expect(webhooks.filter((w) => w.failurePolicy === 'Fail').length).toBeGreaterThan(0);
    const [s] = alerts.flatMap((a) => selectors(parsePromql(a.expr))).filter((x) => x.name === 'apiserver_admission_webhook_rejection_count');
    expect(s!.matchers).toContainEqual({ label: 'error_type', op: '=', value: 'calling_webhook_error' });
  });

  it('the failing-open alert watches every warn-only webhook (failurePolicy Ignore)', () => {
    const ignore = webhooks.filter((w) => w.failurePolicy === 'Ignore').map((w) => w.name);
    expect(ignore.length).toBeGreaterThan(0);
    expect(selected('apiserver_admission_webhook_fail_open_count')).toEqual(expect.arrayContaining(ignore));
  });

  it("does not match another project's webhooks", () => {
    const [m] = alerts
      .flatMap((a) => selectors(parsePromql(a.expr)))
      .filter((x) => x.name === 'apiserver_admission_webhook_rejection_count')
      .flatMap((s) => s.matchers.filter((x) => x.label === 'name'));
    expect(fullMatch(m!.value, 'spiderippool.spidernet.io')).toBe(false);
    expect(fullMatch(m!.value, 'x.iaas-webhook.spidernet.io.evil')).toBe(false);
  });
});

describe('the component', () => {
  it('lists every object file of its folder, one object per file, all in the install namespace', async () => {
    const kustomization = await readYaml('deploy/components/monitoring/kustomization.yaml');
    expect(kustomization.kind).toBe('Component');
    const files = (await readdir(MONITORING_DIR)).filter((f) => f !== 'kustomization.yaml').sort();
    expect([...kustomization.resources].sort()).toEqual(files);
    for (const file of files) {
      const text = await readFile(path.join(MONITORING_DIR, file), 'utf8');
      expect(text.split(/^---$/m)).toHaveLength(1);
      expect(parse(text).metadata.namespace).toBe('spiderpool-iaas-webhook');
    }
  });

  it("the ServiceMonitor scrapes the Service's port over HTTPS, trusting the TLS Secret's CA for the Service's name", async () => {
    const monitor = await readYaml('deploy/components/monitoring/servicemonitor.yaml');
    const service = await readYaml('deploy/base/service.yaml');
    const deployment = await readYaml('deploy/base/deployment.yaml');
    expect(monitor.spec.selector.matchLabels).toEqual(service.metadata.labels);
    const [endpoint] = monitor.spec.endpoints;
    expect(service.spec.ports.map((p: any) => p.name)).toContain(endpoint.port);
    expect(endpoint).toMatchObject({ scheme: 'https', path: '/metrics' });
    expect(endpoint.tlsConfig.serverName).toBe(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    // The Secret the pods keep their certificates in (--tls-secret), or the one they mount.
    const kept = (deployment.spec.template.spec.containers[0].args as string[])
      .filter((a) => a.startsWith('--tls-secret='))
      .map((a) => a.slice('--tls-secret='.length));
    const secrets = [...kept, ...deployment.spec.template.spec.volumes.flatMap((v: any) => (v.secret ? [v.secret.secretName] : []))];
    expect(secrets).toContain(endpoint.tlsConfig.ca.secret.name);
    expect(endpoint.tlsConfig.ca.secret.key).toBe('ca.crt');
  });

  it('the dashboard is a sidecar ConfigMap, and the GrafanaDashboard reads the same JSON from it', async () => {
    expect(configMap.metadata.labels['grafana_dashboard']).toBe('1');
    const operator = await readYaml('deploy/components/monitoring/grafanadashboard.yaml');
    expect(operator.apiVersion).toBe('grafana.integreatly.org/v1beta1');
    expect(operator.spec.configMapRef).toEqual({ name: configMap.metadata.name, key });
    expect(operator.spec.instanceSelector.matchLabels).toBeDefined();
  });

  it('the dashboard has the panels an operator needs', () => {
    const exprs = (title: RegExp) =>
      dashboardQueries(dashboard)
        .filter((q) => title.test(q.panel))
        .map((q) => q.expr);
    expect(exprs(/Requests by webhook and outcome/).join(' ')).toMatch(/allowed="true".*allowed="false".*code!="200"/);
    expect(exprs(/Latency/).join(' ')).toMatch(/histogram_quantile\(0\.5,.*histogram_quantile\(0\.99,/);
    expect(exprs(/Refusals by rule/).join(' ')).toContain('sum by (rule, action) (rate(spiderpool_iaas_webhook_decisions_total{');
    expect(exprs(/violations by rule/).join(' ')).toContain('max by (rule) (spiderpool_iaas_webhook_pool_violations');
    expect(exprs(/sync/).join(' ')).toContain('spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds');
    expect(exprs(/SpiderIPPools in the cache/).join(' ')).toContain('spiderpool_iaas_webhook_pool_cache_pools');
    expect(exprs(/days left/).join(' ')).toContain('spiderpool_iaas_webhook_serving_certificate_expiration_timestamp_seconds');
    expect(exprs(/memory/).join(' ')).toContain('process_resident_memory_bytes');
    expect(exprs(/Event-loop lag/).join(' ')).toContain('nodejs_eventloop_lag_p99_seconds');
    expect(exprs(/Connections by state/).join(' ')).toContain('sum by (state) (spiderpool_iaas_webhook_connections{');
    expect(exprs(/evicted and rejected/).join(' ')).toMatch(/connection_evictions_total.*connection_rejections_total/);
  });
});

describe('the shortened variant the one-node cluster evaluates', () => {
  it('divides every for: and range, keeping the rest of each rule', () => {
    const short = shortenedRuleGroups(30, 10_000).flatMap((g) => g.rules);
    expect(short.map((r) => r.alert)).toEqual(alerts.map((a) => a.alert));
    const unreachable = short.find((r) => r.alert === 'SpiderpoolIaasWebhookUnreachable')!;
    expect(unreachable.for).toBe('2s');
    expect(unreachable.expr).toBe(alerts.find((a) => a.alert === unreachable.alert)!.expr.replace('[5m]', '[10s]'));
    expect(short.find((r) => r.alert === 'SpiderpoolIaasPoolsBreakRules')!.for).toBe('30s');
    for (const [i, rule] of short.entries()) expect({ ...rule, expr: undefined, for: undefined }).toEqual({ ...alerts[i], expr: undefined, for: undefined });
  });
});

describe('docs/operations.md, "What to alert on"', () => {
  it('shows the alerts of the rule file, rendered from it', async () => {
    const doc = await readFile(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const start = doc.indexOf(README_TABLE_START);
    const end = doc.indexOf(README_TABLE_END);
    expect({ start: start >= 0, end: end > start }).toEqual({ start: true, end: true });
    const shown = doc.slice(start + README_TABLE_START.length, end).trim();
    // On a difference, paste the expected table between the two markers.
    expect(shown).toBe(renderAlertTable(alerts));
  });
});
