/**
 * Every CEL twin decides as its TypeScript rule: the committed ValidatingAdmissionPolicy,
 * evaluated with a CEL evaluator for JavaScript (test/helpers/cel-policy.ts), refuses exactly
 * the writes the webhook's judgement refuses by a twinned rule, with the same rules in the same
 * order, over the review fixtures and seeded generated (old, new) pairs; and, where the values
 * are printable ASCII of at most 256 characters (so that Go's quoting and cel-go's
 * `strings.quote` agree), each message is the webhook's cause word for word.
 */
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';
import { noPoolDirectory } from '../../src/rules/pool-pair.js';
import { POLICY_TWINS, type TwinnedRule } from '../../src/rules/pool-rules/twins.js';
import { judgeSpiderIPPoolWrite, SpiderIPPoolSchema } from '../../src/rules/spiderippool.js';
import { committedPolicy } from '../helpers/cel-policy.js';
import { manifest, pair } from '../helpers/pool-pairs.js';

type Obj = Record<string, any>;

const NO_POOLS = noPoolDirectory('not needed: the twinned rules read no other pool');
const RULE_OF = new Map(Object.values(POLICY_TWINS).map((t) => [`!variables.${t.variable}`, t.rule]));
const policy = committedPolicy();

/** Values both quotings show alike: printable ASCII, at most 256 characters (and lists of at most 256). */
const plain = (o: Obj | null): boolean =>
  o === null ||
  [o['metadata']?.['name'], ...Object.values(o['metadata']?.['annotations'] ?? {}), ...(o['spec']?.['nodeName'] ?? [])].every(
    (v) => typeof v !== 'string' || /^[\x20-\x7e]{0,256}$/.test(v),
  );

interface Judged {
  rules: string[];
  messages: string[];
}

/** The webhook's refusals by a twinned rule, and the policy's, for one write. */
function judge(object: Obj, oldObject: Obj | null): { webhook: Judged; policy: Judged } {
  const name = object['metadata']?.['name'] ?? '';
  const old = oldObject === null ? undefined : SpiderIPPoolSchema.parse(oldObject);
  const refused = judgeSpiderIPPoolWrite(old, SpiderIPPoolSchema.parse(object), name, NO_POOLS).refused.filter((r) => r.rule in POLICY_TWINS);
  const verdict = policy(object, oldObject);
  const failed = verdict.matched ? verdict.failed : [];
  return {
    webhook: { rules: refused.map((r) => r.rule), messages: refused.map((r) => fieldErrorString(r.error)) },
    policy: { rules: failed.map((f) => RULE_OF.get(f.expression) ?? f.expression), messages: failed.map((f) => f.message) },
  };
}

/** The disagreements over `writes`, the rules the policy refused with, and how many refusals' messages were compared. */
function differential(writes: readonly { what: string; object: Obj; oldObject: Obj | null }[]): {
  disagreements: string[];
  fired: Set<string>;
  worded: number;
} {
  const disagreements: string[] = [];
  const fired = new Set<string>();
  let worded = 0;
  for (const { what, object, oldObject } of writes) {
    const { webhook, policy: byPolicy } = judge(object, oldObject);
    byPolicy.rules.forEach((rule) => fired.add(rule));
    const compared = plain(object) && plain(oldObject);
    if (compared && webhook.rules.length > 0) worded++;
    const same =
      JSON.stringify(webhook.rules) === JSON.stringify(byPolicy.rules) && (!compared || JSON.stringify(webhook.messages) === JSON.stringify(byPolicy.messages));
    if (!same)
      disagreements.push(
        `${what}: webhook ${JSON.stringify(webhook)}, policy ${JSON.stringify(byPolicy)}; old ${JSON.stringify(oldObject)}, new ${JSON.stringify(object)}`,
      );
  }
  return { disagreements, fired, worded };
}

describe('the policy and the webhook decide alike (CEL evaluated in Node)', () => {
  test('over the review fixtures of SpiderIPPool writes', () => {
    const dir = new URL('../fixtures/reviews/', import.meta.url);
    const writes = readdirSync(dir)
      .filter((f) => f.startsWith('pool-'))
      .map((f) => ({ what: f, request: JSON.parse(readFileSync(new URL(f, dir), 'utf8'))['request'] as Obj }))
      .filter(({ request }) => ['CREATE', 'UPDATE'].includes(request['operation']) && request['subResource'] === undefined)
      .map(({ what, request }) => ({ what, object: request['object'], oldObject: request['oldObject'] ?? null }));
    expect(writes.length).toBeGreaterThan(30);
    const { disagreements, fired, worded } = differential(writes);
    expect(disagreements).toEqual([]);
    expect(fired.size).toBeGreaterThan(5);
    expect(worded).toBeGreaterThan(15);
  });

  test('over 3000 seeded generated (old, new) pairs, as UPDATE and CREATE: every twin fires', () => {
    const writes = fc.sample(pair, { seed: 20261207, numRuns: 3000 }).flatMap((p, i) => {
      const status = {
        ...(p.status.count !== undefined ? { allocatedIPCount: p.status.count } : {}),
        ...(p.status.ips !== undefined ? { allocatedIPs: p.status.ips } : {}),
      };
      const old = { ...manifest(`d-${i}`, p.old), status };
      return [
        { what: `UPDATE of pair ${i}`, object: { ...manifest(`d-${i}`, p.next), status }, oldObject: old },
        { what: `CREATE of pair ${i}`, object: manifest(`c-${i}`, p.next), oldObject: null },
      ];
    });
    const { disagreements, fired, worded } = differential(writes);
    expect(disagreements.slice(0, 3)).toEqual([]);
    expect(worded).toBeGreaterThan(500);
    expect(Object.keys(POLICY_TWINS).filter((rule) => !fired.has(rule as TwinnedRule))).toEqual([]);
  });
});
