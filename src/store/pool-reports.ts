/**
 * The stored pools' violations as OpenReports `ClusterReport`s (`openreports.io/v1alpha1`,
 * the successor of wgpolicyk8s.io's PolicyReport that policy-reporter reads; SpiderIPPools
 * are cluster-scoped): one report per rule with violations, named after it, whose summary
 * counts every violation of that rule and whose results name the first violating pools by
 * name, cut at {@link REPORT_LIMITS} so that no report passes 1 MiB whatever the cluster
 * (docs/adr/0033-reports-per-rule.md). Pure: the shell (src/cluster/pool-reports.ts) writes them.
 */
import { z } from 'zod';
import { MAX_WARNING_CHARS } from '../kubernetes/field-errors.js';
import { POOL_RULES, type PoolRule } from '../rules/rule-names.js';
import type { PoolViolation } from './pool-violations.js';

import type { ActionOf } from '../admission/enforcement.js';

/** The reports' group, version and plural (the CRD `clusterreports.openreports.io`). */
export const CLUSTER_REPORTS = { group: 'openreports.io', version: 'v1alpha1', plural: 'clusterreports' } as const;
/** The reports' and their results' `source`, and the prefix of the reports' names. */
const REPORT_SOURCE = 'spiderpool-iaas-webhook';
/** What the webhook's reports carry, to be listed and told from others' (Kyverno sets `app.kubernetes.io/managed-by: kyverno`). */
export const REPORT_LABELS = { 'app.kubernetes.io/managed-by': REPORT_SOURCE } as const;
/** The name of a rule's report: `spiderpool-iaas-webhook-<rule>`. */
const reportName = (rule: PoolRule): string => `${REPORT_SOURCE}-${rule}`;
/**
 * Every name a report of the webhook can have, one per pool rule: the only reports it
 * replaces or deletes, and the resourceNames of its update and delete in deploy/base/rbac.yaml
 * (test/deploy checks that they agree).
 */
export const REPORT_NAMES: readonly string[] = POOL_RULES.map(reportName);
/** The annotation saying a report's results were cut: how many it shows of how many. */
export const TRUNCATED_ANNOTATION = 'iaas-webhook.spidernet.io/truncated';

/**
 * Results per report (`configuration.limits.maxResults`) and bytes per report as JSON: a
 * result is at most ~1.2 KB (a 253-character name, a 255-character message), so 500 fit in
 * 0.6 MiB; the byte cap holds whatever the characters, below 1 MiB with room for the API
 * server's metadata (managedFields) and under etcd's 1.5 MiB.
 */
export const REPORT_LIMITS = { maxResults: 500, maxBytes: 900 * 1024 } as const;

const ResultSchema = z.object({
  source: z.string(),
  policy: z.string(),
  rule: z.string(),
  result: z.enum(['fail', 'warn']),
  message: z.string(),
  category: z.string(),
  properties: z.record(z.string(), z.string()),
  resources: z.array(z.object({ apiVersion: z.string(), kind: z.string(), name: z.string(), uid: z.string().optional() })),
});

/** A ClusterReport as the webhook writes it: the CRD's fields it fills (the CRD itself is OpenReports'). */
export const ClusterReportSchema = z.object({
  apiVersion: z.literal(`${CLUSTER_REPORTS.group}/${CLUSTER_REPORTS.version}`),
  kind: z.literal('ClusterReport'),
  metadata: z.object({
    name: z.string(),
    labels: z.record(z.string(), z.string()),
    annotations: z.record(z.string(), z.string()).optional(),
    ownerReferences: z.array(z.object({ apiVersion: z.string(), kind: z.string(), name: z.string(), uid: z.string() })).optional(),
  }),
  source: z.string(),
  configuration: z.object({ limits: z.object({ maxResults: z.number().int() }) }),
  summary: z.object({ pass: z.number().int(), fail: z.number().int(), warn: z.number().int(), error: z.number().int(), skip: z.number().int() }),
  results: z.array(ResultSchema),
});
export type ClusterReport = z.infer<typeof ClusterReportSchema>;
type ReportResult = z.infer<typeof ResultSchema>;

/** A violation to show, with the pool's uid when known. */
export interface ShownViolation extends PoolViolation {
  uid?: string;
}

export interface ReportInput {
  /** The policy every result names: the refusing webhook's name. */
  policy: string;
  /** Violations by rule, exact (`PoolViolationTracker.counts()`): the summaries. */
  counts: ReadonlyMap<PoolRule, number>;
  /** The violations to list, any order (`firstViolators`, described): each report keeps its first by pool name. */
  shown: readonly ShownViolation[];
  actionOf: ActionOf;
  /** Owner of every report (the install's ClusterRole), so that uninstalling removes them. */
  owner?: { apiVersion: string; kind: string; name: string; uid: string };
  limits?: { maxResults: number; maxBytes: number };
}

const POOL_RESOURCE = { apiVersion: 'spiderpool.spidernet.io/v2beta1', kind: 'SpiderIPPool' } as const;

/** `text` on one line, at most `MAX_WARNING_CHARS` characters (an ellipsis when cut). */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_WARNING_CHARS ? `${line.slice(0, MAX_WARNING_CHARS - 1)}…` : line;
}

function resultOf(violation: ShownViolation, input: ReportInput): ReportResult {
  return {
    source: REPORT_SOURCE,
    policy: input.policy,
    rule: violation.rule,
    result: input.actionOf(violation.rule) === 'Deny' ? 'fail' : 'warn',
    message: oneLine(`${violation.field}: ${violation.message}`),
    category: 'SpiderIPPool',
    properties: { field: oneLine(violation.field), reason: violation.reason, action: input.actionOf(violation.rule) },
    resources: [{ ...POOL_RESOURCE, name: violation.pool, ...(violation.uid === undefined ? {} : { uid: violation.uid }) }],
  };
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** The results that fit `limits` after `base` (the report without results), in order. */
function fitting(base: ClusterReport, results: readonly ReportResult[], limits: { maxResults: number; maxBytes: number }): ReportResult[] {
  let bytes = bytesOf(base);
  const kept: ReportResult[] = [];
  for (const result of results) {
    const more = bytesOf(result) + 1; // and its comma
    if (kept.length >= limits.maxResults || bytes + more > limits.maxBytes) break;
    kept.push(result);
    bytes += more;
  }
  return kept;
}

/** One rule's report: `count` violations, of which `violations` (sorted by pool) are listed as far as the limits allow. */
function ruleReport(rule: PoolRule, count: number, violations: readonly ShownViolation[], input: ReportInput): ClusterReport {
  const limits = input.limits ?? REPORT_LIMITS;
  const failing = input.actionOf(rule) === 'Deny';
  const base: ClusterReport = {
    apiVersion: `${CLUSTER_REPORTS.group}/${CLUSTER_REPORTS.version}`,
    kind: 'ClusterReport',
    metadata: { name: reportName(rule), labels: { ...REPORT_LABELS }, ...(input.owner ? { ownerReferences: [input.owner] } : {}) },
    source: REPORT_SOURCE,
    configuration: { limits: { maxResults: limits.maxResults } },
    summary: { pass: 0, fail: failing ? count : 0, warn: failing ? 0 : count, error: 0, skip: 0 },
    results: [],
  };
  // Room for the note, whose numbers are not known before the cut.
  const note = (shown: number) => ({
    [TRUNCATED_ANNOTATION]: `results list ${shown} of ${count} violations, the first pools by name; spiderpool-iaas-webhook audit lists every one`,
  });
  const results = fitting(
    { ...base, metadata: { ...base.metadata, annotations: note(count) } },
    violations.map((v) => resultOf(v, input)),
    limits,
  );
  return { ...base, metadata: { ...base.metadata, ...(results.length < count ? { annotations: note(results.length) } : {}) }, results };
}

/**
 * The reports of the violations in `input`: one per rule counted above 0, in the order of
 * {@link POOL_RULES}, each at most `limits.maxBytes` bytes as JSON and
 * `limits.maxResults` results, its summary exact (`fail` for a `Deny` rule, `warn` for the
 * others) and annotated {@link TRUNCATED_ANNOTATION} when it lists fewer results than it counts.
 */
export function clusterReports(input: ReportInput): ClusterReport[] {
  const byPool = (a: ShownViolation, b: ShownViolation) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0);
  return POOL_RULES.filter((rule) => (input.counts.get(rule) ?? 0) > 0).map((rule) =>
    ruleReport(rule, input.counts.get(rule)!, input.shown.filter((v) => v.rule === rule).sort(byPool), input),
  );
}

/**
 * What of a report the webhook decides, as one string with object keys sorted (the API
 * server returns a custom object's keys sorted): two reports with the same content give
 * the same string, whatever the server added (resourceVersion, managedFields).
 */
export function reportContent(report: unknown): string {
  const parsed = ClusterReportSchema.safeParse(report);
  if (!parsed.success) return '';
  const { metadata, ...rest } = parsed.data;
  return sortedJson({
    ...rest,
    metadata: { labels: metadata.labels, annotations: metadata.annotations ?? {}, ownerReferences: metadata.ownerReferences ?? [] },
  });
}

function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return `{${entries
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`)
    .join(',')}}`;
}
