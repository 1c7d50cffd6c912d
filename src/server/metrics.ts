/**
 * The webhook's Prometheus metrics, on a registry of their own (never prom-client's global
 * one, so a test can run many servers in one process).
 *
 * The request metrics keep controller-runtime's names and labels
 * (sigs.k8s.io/controller-runtime/pkg/webhook/internal/metrics): the dashboards and alerts
 * operators already have for Go webhooks work unchanged. `requests_total` adds
 * `operation` and `allowed`, which a query that sums by `webhook` and `code` ignores.
 * What controller-runtime has no metric for carries this project's prefix.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ENFORCEMENT_ACTIONS, type FiredCause } from '../admission/enforcement.js';
import { REFUSAL_RULES } from '../rules/rule-names.js';

const PREFIX = 'spiderpool_iaas_webhook_';

/**
 * Prometheus' default buckets (controller-runtime's), with three below 5 ms: the rules are
 * pure and in memory, so most reviews take well under a millisecond.
 */
const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The request metrics of one webhook path, its label sets resolved once: a request costs
 * one histogram observation, one map lookup and a few additions, and the counts reach
 * prom-client's counter and gauge when `/metrics` is read (prom-client would hash and
 * check the four labels on every increment).
 */
export interface RouteMetrics {
  /** A request arrived: it is in flight. */
  started(): void;
  /**
   * It ended after `seconds`: no longer in flight, timed, and counted by `code` (the HTTP
   * status, or `aborted`), `operation` and `allowed` ('' when no review was decided).
   */
  finished(seconds: number, code: string, operation: string, allowed: string): void;
  /**
   * A review was refused by `rules` (its outcome's `refusedBy`): one refusal for each.
   * A name outside `REFUSAL_RULES` is not counted, so no label value is made up at run time.
   */
  refused(rules: readonly string[]): void;
  /**
   * A review in which rules fired (its outcome's `causes`): one decision for each rule, under
   * its action. A rule outside `REFUSAL_RULES` is not counted (no label value made up at run time).
   */
  decided(causes: readonly FiredCause[]): void;
}

export interface WebhookMetrics {
  registry: Registry;
  /** `webhook` (the URL path), `code` (HTTP status), `operation` and `allowed` ('' when no review was decided). */
  requestsTotal: Counter<'webhook' | 'code' | 'operation' | 'allowed'>;
  /**
   * Reviews refused, by `webhook` (the URL path) and `rule` (one of `REFUSAL_RULES`): a
   * review refused by two rules counts under both. Every pair exists from the path's first
   * use, at 0.
   */
  refusalsTotal: Counter<'webhook' | 'rule'>;
  /**
   * Reviews in which a rule fired, by `webhook`, `rule` and `action` (`deny`, `warn`,
   * `audit`: the rule's enforcement action), once per rule per review. Every triple exists
   * from the path's first use, at 0.
   */
  decisionsTotal: Counter<'webhook' | 'rule' | 'action'>;
  /** Seconds from the request's arrival until its answer is written (or its client left), by `webhook`. */
  latencySeconds: Histogram<'webhook'>;
  requestsInFlight: Gauge<'webhook'>;
  /** The metrics of requests to `webhook` (calls for the same path share their counts). */
  route(webhook: string): RouteMetrics;
  /** notAfter of the certificate being served, Unix seconds. */
  certificateExpirationSeconds: Gauge;
  /** Certificate reloads by `result` (`success`, `failure`). */
  certificateReloadsTotal: Counter<'result'>;
  /** The `connections{state}` gauge; its counts are read at each scrape. */
  connections: ConnectionStates;
  /** Connections the server closed early, by `reason` (src/server/connection-table.ts `EVICTION_REASONS`). */
  connectionEvictionsTotal: Counter<'reason'>;
  /** Connections closed on arrival, by `reason` (src/server/connection-table.ts `REJECTION_REASONS`). */
  connectionRejectionsTotal: Counter<'reason'>;
}

/** Where the `connections` gauge reads its counts: the server's connection table. */
interface ConnectionStates {
  /** `read` returns the open connections per state (`handshaking`, `idle`, `active`). */
  readFrom(read: () => Readonly<Record<string, number>>): void;
  /** The counts a scrape would show now (0 for each state before `readFrom`). */
  read(): { handshaking: number; idle: number; active: number };
}

/** Requests counted since the last read of `/metrics`, for one label set of `requests_total`. */
interface PendingCount {
  labels: { webhook: string; code: string; operation: string; allowed: string };
  count: number;
}

/** A path's in-flight count, its `requests_total` label sets (keyed `code operation allowed`), its refusals by rule and decisions by `rule action`. */
interface RouteCounts {
  labels: { webhook: string };
  inFlight: number;
  totals: Map<string, PendingCount>;
  refusals: Map<string, { labels: { webhook: string; rule: string }; count: number }>;
  decisions: Map<string, { labels: { webhook: string; rule: string; action: string }; count: number }>;
}

/** The key of a `decisions_total` label set in {@link RouteCounts}' `decisions`. */
const decisionKey = (rule: string, action: string): string => `${rule} ${action.toLowerCase()}`;

/** Adds the counts pending in `pending` to `counter` and zeroes them (at a scrape). */
function flush<L extends string>(counter: Counter<L>, pending: Iterable<{ labels: Record<L, string>; count: number }>): void {
  for (const p of pending) {
    if (p.count > 0) counter.inc(p.labels, p.count);
    p.count = 0;
  }
}

/**
 * A counter of `name` whose counts wait in each route's `pending` (plain maps on the hot
 * path) and are flushed into it when `/metrics` is read.
 */
function routesCounter<L extends string>(
  routes: ReadonlyMap<string, RouteCounts>,
  pending: (route: RouteCounts) => Iterable<{ labels: Record<L, string>; count: number }>,
  configuration: { name: string; help: string; labelNames: readonly L[]; registers: Registry[] },
): Counter<L> {
  return new Counter<L>({
    ...configuration,
    collect() {
      for (const route of routes.values()) flush(this, pending(route));
    },
  });
}

/**
 * A webhook path's counts, every series at 0 from the start: each rule's refusals and
 * decisions, so increase() sees the first one; and an internal error (500, no review
 * decided), so the Errors alert's rate() sees the first one after a start.
 */
function newRouteCounts(webhook: string, metrics: Pick<WebhookMetrics, 'refusalsTotal' | 'decisionsTotal' | 'requestsTotal'>): RouteCounts {
  const refusals = new Map(REFUSAL_RULES.map((rule) => [rule, { labels: { webhook, rule }, count: 0 }]));
  for (const { labels } of refusals.values()) metrics.refusalsTotal.inc(labels, 0);
  const decisions = new Map(
    REFUSAL_RULES.flatMap((rule) =>
      ENFORCEMENT_ACTIONS.map((action) => [decisionKey(rule, action), { labels: { webhook, rule, action: action.toLowerCase() }, count: 0 }] as const),
    ),
  );
  for (const { labels } of decisions.values()) metrics.decisionsTotal.inc(labels, 0);
  const internalError = { labels: { webhook, code: '500', operation: '', allowed: '' }, count: 0 };
  metrics.requestsTotal.inc(internalError.labels, 0);
  return { labels: { webhook }, inFlight: 0, totals: new Map([[totalsKey('500', '', ''), internalError]]), refusals, decisions };
}

/** Creates the metrics and Node's default process metrics on `registry` (a new one by default). */
export function createWebhookMetrics(registry = new Registry()): WebhookMetrics {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const routes = new Map<string, RouteCounts>();
  let readConnections: (() => Readonly<Record<string, number>>) | undefined;
  const metrics: WebhookMetrics = {
    registry,
    requestsTotal: routesCounter(routes, (route) => route.totals.values(), {
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code.',
      labelNames: ['webhook', 'code', 'operation', 'allowed'],
      registers,
    }),
    refusalsTotal: routesCounter(routes, (route) => route.refusals.values(), {
      name: `${PREFIX}refusals_total`,
      help: 'Admission reviews refused, by webhook path and by each rule that refused them (dry runs included; warnings are no refusal).',
      labelNames: ['webhook', 'rule'],
      registers,
    }),
    decisionsTotal: routesCounter(routes, (route) => route.decisions.values(), {
      name: `${PREFIX}decisions_total`,
      help: 'Admission reviews in which a rule fired, by webhook path, rule and the action taken on it (deny refused, warn warned, audit recorded only); once per rule per review.',
      labelNames: ['webhook', 'rule', 'action'],
      registers,
    }),
    latencySeconds: new Histogram({
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      labelNames: ['webhook'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    requestsInFlight: new Gauge({
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served.',
      labelNames: ['webhook'],
      registers,
      collect() {
        for (const route of routes.values()) this.set(route.labels, route.inFlight);
      },
    }),
    route: (webhook) => {
      let counts = routes.get(webhook);
      if (counts === undefined) {
        counts = newRouteCounts(webhook, metrics);
        routes.set(webhook, counts);
      }
      return routeMetrics(counts, metrics.latencySeconds);
    },
    certificateExpirationSeconds: new Gauge({
      name: `${PREFIX}serving_certificate_expiration_timestamp_seconds`,
      help: 'notAfter of the serving certificate in use, in seconds since the Unix epoch.',
      registers,
    }),
    certificateReloadsTotal: new Counter({
      name: `${PREFIX}certificate_reloads_total`,
      help: 'Serving certificate reloads from the certificate directory, by result (failure: the old pair stays in use).',
      labelNames: ['result'],
      registers,
    }),
    connections: {
      readFrom: (read) => {
        readConnections = read;
      },
      read: () => ({ handshaking: 0, idle: 0, active: 0, ...readConnections?.() }),
    },
    connectionEvictionsTotal: new Counter({
      name: `${PREFIX}connection_evictions_total`,
      help: 'Connections closed by the server before their client was done: handshake_timeout; address_share (a newcomer of the same address at its share of connections waiting for their TLS handshake took the slot); at the cap evicted_handshaking / evicted_idle for a newcomer.',
      labelNames: ['reason'],
      registers,
    }),
    connectionRejectionsTotal: new Counter({
      name: `${PREFIX}connection_rejections_total`,
      help: 'Connections closed on arrival: all_busy (at the cap, every connection serving a request); over_share (at the cap, its address held its fair share, none was idle, and none of its own or of an address past its share was handshaking or lagging).',
      labelNames: ['reason'],
      registers,
    }),
  };
  new Gauge({
    name: `${PREFIX}connections`,
    help: 'Open connections by state: handshaking (TLS not finished), idle (no request in flight), active (serving a request).',
    labelNames: ['state'],
    registers,
    collect() {
      for (const [state, count] of Object.entries(readConnections?.() ?? {})) this.set({ state }, count);
    },
  });
  // Both results exist from the start, so increase() sees the first failure after a restart
  // (a series that appears with value 1 has no earlier sample to increase from).
  for (const result of ['success', 'failure']) metrics.certificateReloadsTotal.inc({ result }, 0);
  return metrics;
}

/** The key of a `requests_total` label set in {@link RouteCounts}' `totals`. */
const totalsKey = (code: string, operation: string, allowed: string): string => `${code} ${operation} ${allowed}`;

function routeMetrics(counts: RouteCounts, latencySeconds: Histogram<'webhook'>): RouteMetrics {
  const { labels, totals } = counts;
  return {
    started: () => {
      counts.inFlight++;
    },
    finished: (seconds, code, operation, allowed) => {
      counts.inFlight--;
      latencySeconds.observe(labels, seconds);
      const key = totalsKey(code, operation, allowed);
      let pending = totals.get(key);
      if (pending === undefined) {
        pending = { labels: { webhook: labels.webhook, code, operation, allowed }, count: 0 };
        totals.set(key, pending);
      }
      pending.count++;
    },
    refused: (rules) => {
      for (const rule of rules) {
        const pending = counts.refusals.get(rule);
        if (pending !== undefined) pending.count++;
      }
    },
    decided: (causes) => {
      const seen = new Set<string>();
      for (const { rule, action } of causes) {
        const pending = seen.has(rule) ? undefined : counts.decisions.get(decisionKey(rule, action));
        seen.add(rule);
        if (pending !== undefined) pending.count++;
      }
    },
  };
}
