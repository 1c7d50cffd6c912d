/**
 * The violations as OpenReports ClusterReports: one per broken rule, exact counts, the
 * action's result, and a bound of 1 MiB a report at 50 000 violating pools, cut with a note.
 */
import {
  ClusterReportSchema,
  REPORT_LIMITS,
  REPORT_NAMES,
  TRUNCATED_ANNOTATION,
  clusterReports,
  reportContent,
  type ShownViolation,
} from '../../src/store/pool-reports.js';
import { POOL_RULES, type PoolRule } from '../../src/rules/rule-names.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import { PoolViolationTracker } from '../../src/store/pool-violations.js';
import { spiderIPPool } from '../helpers/pools.js';

const MIB = 1024 * 1024;
const violation = (pool: string, rule: PoolRule, message = 'Invalid value: "eth0,eth1": one interface name'): ShownViolation => ({
  pool,
  rule,
  field: 'metadata.annotations[ipam.spidernet.io/parent-nic]',
  reason: 'FieldValueInvalid',
  message,
  uid: '3f1c0b8e-1d2a-4c5b-9e7f-000000000001',
});
const base = { policy: 'spiderippool.iaas-webhook.spidernet.io', actionOf: () => 'Deny' as const };

describe('clusterReports', () => {
  it('writes one report per broken rule: its results name the pool and field, fail for a Deny rule, warn for Warn and Audit', () => {
    const counts = new Map<PoolRule, number>([
      ['parent-nic-one', 1],
      ['pair-ipVersion', 2],
    ]);
    const shown = [violation('v6', 'pair-ipVersion'), violation('a', 'parent-nic-one'), violation('v4', 'pair-ipVersion')];
    const reports = clusterReports({ ...base, counts, shown, actionOf: (rule) => (rule === 'pair-ipVersion' ? 'Audit' : 'Deny') });
    expect(reports.map((r) => [r.metadata.name, r.summary])).toEqual([
      ['spiderpool-iaas-webhook-parent-nic-one', { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 }],
      ['spiderpool-iaas-webhook-pair-ipVersion', { pass: 0, fail: 0, warn: 2, error: 0, skip: 0 }],
    ]);
    for (const report of reports) expect(ClusterReportSchema.parse(report)).toEqual(report);
    expect(reports[1]!.results.map((r) => [r.resources[0]!.name, r.result, r.rule, r.policy])).toEqual([
      ['v4', 'warn', 'pair-ipVersion', base.policy],
      ['v6', 'warn', 'pair-ipVersion', base.policy],
    ]);
    expect(reports[0]!.results[0]).toMatchObject({
      message: 'metadata.annotations[ipam.spidernet.io/parent-nic]: Invalid value: "eth0,eth1": one interface name',
      resources: [{ apiVersion: 'spiderpool.spidernet.io/v2beta1', kind: 'SpiderIPPool', name: 'a', uid: '3f1c0b8e-1d2a-4c5b-9e7f-000000000001' }],
    });
    expect(reports[0]!.metadata.annotations).toBeUndefined();
  });

  it('names each report among REPORT_NAMES, the names RBAC lets the webhook update and delete, one per rule', () => {
    const reports = clusterReports({ ...base, counts: new Map(POOL_RULES.map((rule) => [rule, 1] as const)), shown: [] });
    expect(reports.map((r) => r.metadata.name)).toEqual(REPORT_NAMES);
    expect(new Set(REPORT_NAMES).size).toBe(POOL_RULES.length);
  });

  it('keeps a message to one line of at most 255 characters', () => {
    const [report] = clusterReports({
      ...base,
      counts: new Map([['parent-nic-one', 1]]),
      shown: [violation('a', 'parent-nic-one', `line one\nline two ${'x'.repeat(600)}`)],
    });
    const { message } = report!.results[0]!;
    expect(message).not.toMatch(/\n/);
    expect(message.length).toBeLessThanOrEqual(255);
  });

  it('stays under 1 MiB a report at 50 000 violating pools of every rule, counts exact, the cut noted', () => {
    const POOLS = 50_000;
    const longName = (i: number) => `pool-${String(i).padStart(6, '0')}-${'n'.repeat(230)}`; // 253 characters, the longest name
    const counts = new Map(POOL_RULES.map((rule) => [rule, POOLS] as const));
    // What the shell describes: the first REPORT_LIMITS.maxResults pools of each rule, with the longest messages.
    const shown = POOL_RULES.flatMap((rule) =>
      Array.from({ length: REPORT_LIMITS.maxResults }, (_, i) => violation(longName(i), rule, `Invalid value: "${'é'.repeat(300)}"`)),
    );
    const reports = clusterReports({
      ...base,
      counts,
      shown,
      owner: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'spiderpool-iaas-webhook', uid: 'u' },
    });
    expect(reports).toHaveLength(POOL_RULES.length);
    for (const report of reports) {
      expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThanOrEqual(MIB);
      expect(report.summary.fail).toBe(POOLS);
      expect(report.results.length).toBeGreaterThan(0);
      expect(report.metadata.annotations?.[TRUNCATED_ANNOTATION]).toBe(
        `results list ${report.results.length} of ${POOLS} violations, the first pools by name; spiderpool-iaas-webhook audit lists every one`,
      );
    }
  });

  it('cuts at the byte bound whatever the limits allow in count', () => {
    const shown = Array.from({ length: 3_000 }, (_, i) => violation(`p${i}`, 'node-empty'));
    const [report] = clusterReports({ ...base, counts: new Map([['node-empty', 3_000]]), shown, limits: { maxResults: 10_000, maxBytes: 64 * 1024 } });
    expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThanOrEqual(64 * 1024);
    expect(report!.results.length).toBeLessThan(3_000);
  });

  it('says the same content the same way whatever the key order and what the API server adds', () => {
    const [report] = clusterReports({ ...base, counts: new Map([['node-empty', 1]]), shown: [violation('a', 'node-empty')] });
    const stored = JSON.parse(
      JSON.stringify({ summary: report!.summary, ...report, metadata: { resourceVersion: '7', managedFields: [{}], ...report!.metadata } }),
    );
    expect(reportContent(stored)).toBe(reportContent(report));
    expect(reportContent({ ...report, summary: { ...report!.summary, fail: 2 } })).not.toBe(reportContent(report));
  });
});

describe('clusterReports of a PoolViolationTracker', () => {
  it('from a tracker of 50 000 violating pools: the first pools by name of each rule, exact counts, under 1 MiB', () => {
    const POOLS = 50_000;
    const index = new PoolIndex();
    const tracker = new PoolViolationTracker(index);
    // Every pool breaks parent-nic-one; every tenth also names itself as its pair (pair-self).
    const name = (i: number) => `pool-${String(POOLS - i).padStart(5, '0')}`; // listed in reverse name order
    index.replaceAll(
      Array.from({ length: POOLS }, (_, i) =>
        spiderIPPool(name(i), { provider: 'cloud', nic: 'eth0,eth1', ...(i % 10 === 0 ? { pair: name(i) } : {}), ips: ['10.0.0.1-10.0.0.10'] }),
      ),
    );
    const firsts = tracker.firstViolators(REPORT_LIMITS.maxResults);
    expect(firsts.get('parent-nic-one')).toEqual(Array.from({ length: REPORT_LIMITS.maxResults }, (_, i) => `pool-${String(i + 1).padStart(5, '0')}`));
    const described = new Set([...firsts.values()].flat());
    expect(described.size).toBeLessThanOrEqual(POOL_RULES.length * REPORT_LIMITS.maxResults);
    const shown = [...described].flatMap((pool) => tracker.describe(pool).filter((v) => firsts.get(v.rule)?.includes(pool)));
    const reports = clusterReports({ ...base, counts: tracker.counts(), shown });
    expect(reports.map((r) => [r.metadata.name, r.summary.fail, r.results.length])).toEqual([
      ['spiderpool-iaas-webhook-parent-nic-one', POOLS, REPORT_LIMITS.maxResults],
      ['spiderpool-iaas-webhook-pair-self', POOLS / 10, REPORT_LIMITS.maxResults],
    ]);
    for (const report of reports) expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThanOrEqual(MIB);
  });
});
