/**
 * The rules a review was refused by (`ReviewOutcome.refusedBy`, what the server's refusal
 * counter counts): named exactly when the validators refuse, from the refusing
 * validator's own `rules`, each once; none for an allowed write, a warning or an object
 * that cannot be decoded.
 */
import { readdirSync } from 'node:fs';
import { buildAdmissionReview } from '../../src/kubernetes/build.js';
import { CLUSTER_RULES, CONFIGMAP_RULES, POOL_RULES, REFUSAL_RULES, SPIDERIPPOOL_RULES, TRANSITION_RULES } from '../../src/rules/rule-names.js';
import { SPIDERIPPOOL_ENFORCEMENT } from '../../src/rules/admission-policy.js';
import { createReviewer, wireValidators } from '../../src/rules/registry.js';
import { loadReview } from '../fixtures/load.js';
import { spiderIPPool } from '../helpers/pools.js';

const review = createReviewer();
const fixtures = readdirSync(new URL('../fixtures/reviews/', import.meta.url)).map((f) => f.replace(/\.json$/, ''));
const rulesOf = new Map(wireValidators({}).map(({ webhook, validator }) => [webhook, validator.rules ?? []]));

describe('refusedBy', () => {
  it.each(fixtures)('%s: names rules exactly when the review is refused as Invalid, each once, from its validator', (name) => {
    const { review: answer, refusedBy, webhook } = review(loadReview(name));
    const invalid = answer.response.allowed === false && answer.response.status?.reason === 'Invalid';
    expect({ refused: refusedBy.length > 0, invalid }).toEqual({ refused: invalid, invalid });
    expect(new Set(refusedBy).size).toBe(refusedBy.length);
    for (const rule of refusedBy) expect(rulesOf.get(webhook!)).toContain(rule);
  });

  it('the fixtures refuse by rules of both refusing validators (the check above is not vacuous)', () => {
    const named = new Set(fixtures.flatMap((name) => review(loadReview(name)).refusedBy));
    expect([...named]).toEqual(expect.arrayContaining(['nodes-count', 'mode-fixed', 'category-fixed', 'parent-nic-missing', 'conf-yml']));
  });

  it('names every rule that refused a write, each once, in the order of their first error', () => {
    const pool = spiderIPPool('pool-a', { provider: '', nodeName: ['node-1', 'node-2'] });
    expect(review(buildAdmissionReview({ operation: 'CREATE', object: pool })).refusedBy).toEqual(['provider-empty', 'nodes-count', 'parent-nic-missing']);
    const stored = spiderIPPool('pool-a', { provider: 'aws', nic: 'eth0', nodeName: ['node-1'] });
    expect(review(buildAdmissionReview({ operation: 'UPDATE', oldObject: stored, object: spiderIPPool('pool-a', { nic: 'eth0' }) })).refusedBy).toEqual([
      'category-fixed',
      'mode-fixed',
    ]);
  });

  it('names none for an allowed write, a write with warnings only, a ratcheted violation, or an undecodable object', () => {
    const node = spiderIPPool('pool-a', { provider: 'aws', nic: 'eth0', nodeName: ['node-1'] });
    expect(review(buildAdmissionReview({ operation: 'CREATE', object: node })).refusedBy).toEqual([]);
    const warned = review(loadReview('pool-create-global-with-parent-nic'));
    expect({ allowed: warned.review.response.allowed, warned: (warned.review.response.warnings ?? []).length > 0, refusedBy: warned.refusedBy }).toEqual({
      allowed: true,
      warned: true,
      refusedBy: [],
    });
    const legacy = spiderIPPool('pool-a', { provider: 'aws', nic: 'eth0', nodeName: ['node-1', 'node-2'] });
    const ratcheted = review(
      buildAdmissionReview({ operation: 'UPDATE', oldObject: legacy, object: { ...legacy, metadata: { ...legacy.metadata, labels: { a: 'b' } } } }),
    );
    expect({ allowed: ratcheted.review.response.allowed, refusedBy: ratcheted.refusedBy }).toEqual({ allowed: true, refusedBy: [] });
    const undecodable = review(buildAdmissionReview({ operation: 'CREATE', object: { ...node, spec: { nodeName: 5 } } }));
    expect({ allowed: undecodable.review.response.allowed, code: undecodable.review.response.status?.code, refusedBy: undecodable.refusedBy }).toEqual({
      allowed: false,
      code: 400,
      refusedBy: [],
    });
  });
});

describe('REFUSAL_RULES, the rule label values', () => {
  it("are the refusing validators' rules: the SpiderIPPool rules and the ConfigMap's, each once", () => {
    expect([...new Set(wireValidators({}).flatMap(({ validator }) => validator.rules ?? []))]).toEqual(REFUSAL_RULES);
    expect(REFUSAL_RULES).toEqual([...SPIDERIPPOOL_RULES, ...CONFIGMAP_RULES]);
    expect(new Set(REFUSAL_RULES).size).toBe(REFUSAL_RULES.length);
  });

  it('hold every SpiderIPPool rule, stored-pool, transition and cluster, as the enforcement table does', () => {
    expect([...SPIDERIPPOOL_RULES].sort()).toEqual(Object.keys(SPIDERIPPOOL_ENFORCEMENT).sort());
    expect(SPIDERIPPOOL_RULES).toEqual([...TRANSITION_RULES, ...POOL_RULES, ...CLUSTER_RULES]);
  });
});
