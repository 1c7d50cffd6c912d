/**
 * The monitoring files of deploy/components/monitoring read for tests: the alerts of the
 * PrometheusRule, the dashboard's queries, and the checks that each query names series
 * the webhook exports and applies each function to a series of the right type (the
 * mistakes Spiderpool's chart ships: names without the exported prefix, `rate()` of a
 * gauge, `histogram_quantile` of a series that is no `_bucket`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { formatDurationMs, parseDurationMs, parsePromql, rewriteRanges, selectors, walk, type Expr } from './promql.js';

export const MONITORING_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/components/monitoring');
export const RULE_FILE = path.join(MONITORING_DIR, 'prometheusrule.yaml');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The PrometheusRule object (parsed YAML). */
export function loadPrometheusRule(): { spec: { groups: { name: string; rules: AlertRule[] }[] } } & Record<string, any> {
  return parse(readFileSync(RULE_FILE, 'utf8'));
}

/** Every alerting rule of the PrometheusRule, in file order. */
export function loadAlerts(): AlertRule[] {
  return loadPrometheusRule().spec.groups.flatMap((g) => g.rules);
}

/** The ConfigMap holding the dashboard, and the dashboard JSON in it. */
export function loadDashboard(): { configMap: Record<string, any>; key: string; dashboard: Record<string, any> } {
  const configMap = parse(readFileSync(path.join(MONITORING_DIR, 'dashboard-configmap.yaml'), 'utf8'));
  const keys = Object.keys(configMap.data);
  if (keys.length !== 1) throw new Error(`the dashboard ConfigMap holds ${keys.length} keys; expected one JSON`);
  return { configMap, key: keys[0]!, dashboard: JSON.parse(configMap.data[keys[0]!]) };
}

/** Each panel target's query, with its panel's title. */
export function dashboardQueries(dashboard: Record<string, any>): { panel: string; expr: string }[] {
  return (dashboard['panels'] as any[]).flatMap((p) => (p.targets as any[]).map((t) => ({ panel: p.title as string, expr: t.expr as string })));
}

/** What a series is, for the functions that may read it. */
export type SeriesKind = 'counter' | 'gauge' | 'histogram_bucket' | 'histogram_part' | 'summary';

/**
 * Series that come from elsewhere, with their types: the queries name them on purpose.
 * Only the API server's (`apiserver_*`, k8s.io/apiserver/pkg/admission/metrics/metrics.go:
 * both are counters, named before the `_total` convention) and kube-state-metrics'
 * (`kube_*`, optional: docs/metrics/workload/deployment-metrics.md) may be listed.
 */
export const EXTERNAL_SERIES: ReadonlyMap<string, SeriesKind> = new Map([
  ['apiserver_admission_webhook_rejection_count', 'counter'],
  ['apiserver_admission_webhook_fail_open_count', 'counter'],
  ['kube_deployment_status_replicas_available', 'gauge'],
]);

/**
 * The series a Prometheus text page offers, by name, from its `# TYPE` lines: a histogram
 * family `x` offers `x_bucket`, `x_sum` and `x_count`; a summary `x` offers `x`, `x_sum`
 * and `x_count`.
 */
export function seriesKinds(exposition: string): Map<string, SeriesKind> {
  const kinds = new Map<string, SeriesKind>();
  for (const line of exposition.split('\n')) {
    const m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m === null) continue;
    const [, name, type] = m as unknown as [string, string, string];
    if (type === 'histogram') {
      kinds.set(`${name}_bucket`, 'histogram_bucket');
      kinds.set(`${name}_sum`, 'histogram_part');
      kinds.set(`${name}_count`, 'histogram_part');
    } else if (type === 'summary') {
      kinds.set(name, 'summary');
      kinds.set(`${name}_sum`, 'histogram_part');
      kinds.set(`${name}_count`, 'histogram_part');
    } else {
      kinds.set(name, type === 'counter' ? 'counter' : 'gauge');
    }
  }
  return kinds;
}

/** Functions of a range of a counter (they assume resets, not falls, when it goes down). */
const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);
/** Functions of a range of a gauge (Prometheus' docs: "should only be used with gauges"). */
const GAUGE_FUNCTIONS = new Set(['delta', 'idelta', 'deriv', 'predict_linear', 'double_exponential_smoothing', 'holt_winters']);

/**
 * What is wrong with one query, one line each (none: it is right): a selector without a
 * metric name or naming a series neither `kinds` nor {@link EXTERNAL_SERIES} has, a counter
 * function of a gauge, a gauge function of a counter, `histogram_quantile` of anything but
 * a histogram's `_bucket` series.
 *
 * @throws PromqlSyntaxError when the query does not parse.
 */
export function queryProblems(query: string, kinds: ReadonlyMap<string, SeriesKind>): string[] {
  const tree = parsePromql(query);
  const kindOf = (name: string) => kinds.get(name) ?? EXTERNAL_SERIES.get(name);
  const problems: string[] = [];
  for (const s of selectors(tree)) {
    if (s.name === undefined) problems.push('a selector names no metric');
    else if (kindOf(s.name) === undefined) problems.push(`names ${s.name}, which the webhook does not export and is not a known external series`);
  }
  const named = (arg: Expr | undefined) =>
    arg === undefined ? [] : selectors(arg).flatMap((s) => (s.name && kindOf(s.name) ? [{ name: s.name, kind: kindOf(s.name)! }] : []));
  for (const node of walk(tree)) {
    if (node.type !== 'call') continue;
    if (COUNTER_FUNCTIONS.has(node.func)) {
      for (const s of named(node.args[0])) {
        if (s.kind === 'gauge') problems.push(`applies ${node.func}() to ${s.name}, a gauge`);
      }
    } else if (GAUGE_FUNCTIONS.has(node.func)) {
      for (const s of named(node.args[0])) {
        if (s.kind !== 'gauge') problems.push(`applies ${node.func}() to ${s.name}, a ${s.kind}, not a gauge`);
      }
    } else if (node.func === 'histogram_quantile') {
      for (const s of named(node.args[1])) {
        if (s.kind !== 'histogram_bucket') problems.push(`applies histogram_quantile() to ${s.name}, which is not a histogram's _bucket series`);
      }
    }
  }
  return problems;
}

/**
 * The rule file's groups with every `for:` divided by `factor` and every range of every
 * expression too, but never under `minRangeMs` (a range needs two samples at the test
 * Prometheus' scrape interval): the test-only variant the one-node cluster evaluates, so
 * that an alert fires in seconds. Expressions, labels and annotations are otherwise the
 * file's own.
 */
export function shortenedRuleGroups(factor: number, minRangeMs: number): { name: string; rules: AlertRule[] }[] {
  return loadPrometheusRule().spec.groups.map((group) => ({
    ...group,
    rules: group.rules.map((rule) => ({
      ...rule,
      expr: rewriteRanges(rule.expr, (ms) => Math.max(ms / factor, minRangeMs)),
      ...(rule.for ? { for: formatDurationMs(Math.ceil(parseDurationMs(rule.for) / factor / 1000) * 1000) } : {}),
    })),
  }));
}

/** Markdown-safe table cell: pipes escaped, the text on one line. */
const cell = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

/**
 * The README's table of the alerts (section "What to alert on"), rendered from the rule
 * file: alert, severity, `for:`, the expression and what to run (its description).
 */
export function renderAlertTable(alerts: readonly AlertRule[]): string {
  const rows = alerts.map(
    (a) => `| \`${a.alert}\` | ${a.labels?.['severity'] ?? ''} | ${a.for ?? '0s'} | \`${cell(a.expr)}\` | ${cell(a.annotations?.['description'] ?? '')} |`,
  );
  return ['| Alert | Severity | For | Expression | What to run |', '|---|---|---|---|---|', ...rows].join('\n');
}

export const README_TABLE_START = '<!-- alerts from deploy/components/monitoring/prometheusrule.yaml: start -->';
export const README_TABLE_END = '<!-- alerts: end -->';
