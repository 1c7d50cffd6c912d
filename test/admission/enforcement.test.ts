/**
 * Enforcement actions on every review the tests know (the fixture reviews and pair
 * reviews generated against a stored partner): `Deny` is today's answer plus the audit
 * annotations, `Warn` lets the write through with one warning per cause after its own,
 * `Audit` lets it through with nothing added; mixed tables apply each rule's own action.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { buildAdmissionReview } from '../../src/kubernetes/build.js';
import { MAX_WARNING_CHARS } from '../../src/kubernetes/field-errors.js';
import type { EnforcementAction } from '../../src/admission/enforcement.js';
import { REFUSAL_RULES } from '../../src/rules/rule-names.js';
import { createReviewer, type ReviewOptions } from '../../src/rules/registry.js';
import { ClusterState } from '../../src/store/state.js';
import { loadReview } from '../fixtures/load.js';
import { spiderIPPool } from '../helpers/pools.js';

const fixtures = readdirSync(new URL('../fixtures/reviews/', import.meta.url)).map((f) => f.replace(/\.json$/, ''));

/** A stored IPv4 partner `q`, and pools naming it that break one pair rule or another. */
const { state } = ClusterState.of([spiderIPPool('q', { provider: 'cloud', subnet: '10.0.1.0/24', nic: 'eth0', nodeName: ['n1'] })]);
const pairWrites = [
  spiderIPPool('p', { provider: 'cloud', subnet: '10.0.0.0/24', pair: 'q', nic: 'eth0', nodeName: ['n1'] }),
  spiderIPPool('p', { provider: 'cloud', version: 6, subnet: 'fd00::/120', pair: 'q', nic: 'eth0', nodeName: ['n2'] }),
  spiderIPPool('p', { provider: 'cloud', version: 6, subnet: 'fd00::/120', pair: 'p', nic: 'eth0' }),
  spiderIPPool('p', { provider: '', nodeName: ['n1', 'n2'], pair: 'q' }),
];

/** Each review with the options it is judged with: fixtures alone, pair writes against `state`. */
const cases: [string, unknown, ReviewOptions][] = [
  ...fixtures.map((name): [string, unknown, ReviewOptions] => [name, loadReview(name), {}]),
  ...pairWrites.map((pool, i): [string, unknown, ReviewOptions] => [
    `pair write ${i}`,
    buildAdmissionReview({ operation: 'CREATE', object: pool }),
    { pools: state.pools, cluster: state },
  ]),
];

/** The stored partner only: no warning that pairs are not checked. */
const withState: ReviewOptions = { pools: state.pools, cluster: state };

const judged = (body: unknown, options: ReviewOptions, table?: ReviewOptions['enforcement']) =>
  createReviewer({ ...options, ...(table ? { enforcement: table } : {}) })(body);
const everyRule = (action: EnforcementAction) => ({ default: action, rules: {} });

describe('enforcement actions', () => {
  it('the cases fire rules of both refusing validators, pair rules included (the checks below are not vacuous)', () => {
    const fired = new Set(cases.flatMap(([, body, options]) => judged(body, options).causes.map((c) => c.rule)));
    expect([...fired]).toEqual(
      expect.arrayContaining(['nodes-count', 'mode-fixed', 'category-fixed', 'conf-yml', 'pair-ipVersion', 'pair-self', 'provider-empty']),
    );
    expect(fired.size).toBeGreaterThanOrEqual(12);
  });

  it.each(cases)('%s: Deny is the answer without a table, byte for byte, plus the audit annotations', (_name, body, options) => {
    const before = judged(body, options);
    const deny = judged(body, options, everyRule('Deny'));
    const { auditAnnotations, ...response } = deny.review.response;
    expect(JSON.stringify(response)).toBe(JSON.stringify(before.review.response).replace(/,"auditAnnotations":\{[^}]*\}/, ''));
    const rules = [...new Set(deny.causes.map((c) => c.rule))];
    expect(auditAnnotations).toEqual(rules.length > 0 ? { decision: 'deny', rules: rules.join(',') } : undefined);
    expect(deny.refusedBy).toEqual(rules);
  });

  it.each(cases)("%s: Warn allows, each cause one warning after the review's own; Audit allows with only its own", (_name, body, options) => {
    const deny = judged(body, options).review.response;
    const warn = judged(body, options, everyRule('Warn'));
    const audit = judged(body, options, everyRule('Audit'));
    if (deny.status?.reason !== 'Invalid') {
      // Allowed, or not decodable (Errored): no rule fired, the action changes nothing.
      expect([warn.review.response, audit.review.response]).toEqual([deny, deny]);
      return;
    }
    const causes = deny.status.details!.causes;
    const own = deny.warnings ?? [];
    expect(warn.review.response.allowed).toBe(true);
    expect(warn.review.response.status).toBeUndefined();
    const warnings = warn.review.response.warnings!;
    expect(warnings.slice(0, own.length)).toEqual(own);
    const added = warnings.slice(own.length);
    expect(added).toHaveLength(Math.min(causes.length, 16 - own.length));
    added.forEach((w, i) => {
      expect(w.startsWith(`${causes[i]!.field}: `)).toBe(true);
      expect(w.length).toBeLessThanOrEqual(MAX_WARNING_CHARS);
      expect(w).not.toMatch(/[\n\r]/);
    });
    expect(warn.review.response.auditAnnotations?.['decision']).toBe('warn');
    expect(warn.refusedBy).toEqual([]);
    expect(audit.review.response).toEqual({
      uid: deny.uid,
      allowed: true,
      ...(own.length ? { warnings: own } : {}),
      auditAnnotations: { decision: 'audit', rules: warn.review.response.auditAnnotations!['rules'] },
    });
  });

  it.each(REFUSAL_RULES)('%s alone in Warn: its causes warn, the others still refuse with only theirs', (rule) => {
    for (const [, body, options] of cases) {
      const all = judged(body, options);
      if (!all.causes.some((c) => c.rule === rule)) continue;
      const mixed = judged(body, options, { default: 'Deny', rules: { [rule]: 'Warn' } });
      const denied = all.causes.filter((c) => c.rule !== rule);
      expect(mixed.review.response.allowed).toBe(denied.length === 0);
      expect(mixed.review.response.status?.details?.causes.map((c) => c.field) ?? []).toEqual(denied.map((c) => c.field));
      expect(mixed.review.response.auditAnnotations).toEqual({
        decision: denied.length > 0 ? 'deny' : 'warn',
        rules: [...new Set(all.causes.map((c) => c.rule))].join(','),
      });
      expect(mixed.review.response.warnings ?? []).toEqual(
        expect.arrayContaining(all.causes.filter((c) => c.rule === rule).map((c) => expect.stringMatching(`^${c.field.replace(/[[\].]/g, '\\$&')}: `))),
      );
    }
  });

  it('a mixed table: Deny refuses with the Deny causes alone, Warn causes warn, Audit causes are silent', () => {
    const pool = spiderIPPool('pool-a', { provider: '', nodeName: ['node-1', 'node-2'] }); // provider-empty, nodes-count, parent-nic-missing
    const body = buildAdmissionReview({ operation: 'CREATE', object: pool });
    const outcome = judged(body, withState, { default: 'Deny', rules: { 'provider-empty': 'Warn', 'parent-nic-missing': 'Audit' } });
    const { response } = outcome.review;
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes.map((c) => c.field)).toEqual(['spec.nodeName']);
    expect(response.warnings).toEqual([expect.stringMatching(/^metadata\.annotations\[ipam\.spidernet\.io\/iaas-provider\]: /)]);
    expect(response.auditAnnotations).toEqual({ decision: 'deny', rules: 'provider-empty,nodes-count,parent-nic-missing' });
    expect(outcome.refusedBy).toEqual(['nodes-count']);
    expect(outcome.causes.map((c) => c.action)).toEqual(['Warn', 'Deny', 'Audit']);
  });

  it('no annotation on a review where no rule fired, whatever the table', () => {
    const clean = buildAdmissionReview({ operation: 'CREATE', object: spiderIPPool('pool-a', { provider: 'aws', nic: 'eth0', nodeName: ['node-1'] }) });
    for (const action of ['Deny', 'Warn', 'Audit'] as const)
      expect(judged(clean, withState, everyRule(action)).review.response).toEqual({ uid: clean.request.uid, allowed: true });
  });
});
