/**
 * The table of where each rule is enforced (src/rules/admission-policy.ts) against the
 * rules the webhook has and the ValidatingAdmissionPolicy deploy/ installs; `review`'s
 * line saying whether the policy refuses a refused pool too. That each twin decides as
 * the webhook does is proven on a real API server (test/e2e/admission-policy.test.ts).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { stringify } from 'yaml';
import { runReview } from '../../src/cli/review.js';
import { ADMISSION_POLICY_NAME, OTHER_WEBHOOKS_ENFORCEMENT, SPIDERIPPOOL_ENFORCEMENT, policyEnforcementLine } from '../../src/rules/admission-policy.js';
import { judgeSpiderIPPoolWrite } from '../../src/rules/spiderippool.js';
import { SPIDERIPPOOL_RULES } from '../../src/rules/rule-names.js';
import { noPoolDirectory } from '../../src/rules/pool-pair.js';
import { createReviewer, wireValidators } from '../../src/rules/registry.js';
import { buildAdmissionReview } from '../../src/kubernetes/build.js';
import { ClusterState } from '../../src/store/state.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { spiderIPPool } from '../helpers/pools.js';

type Obj = Record<string, any>;

const POLICY_FILE = new URL('../../deploy/components/validating-admission-policy/validatingadmissionpolicy.yaml', import.meta.url);
const documents = (): Obj[] => parseAllDocuments(readFileSync(POLICY_FILE, 'utf8')).map((d) => d.toJS() as Obj);
const policy = (): Obj => documents().find((d) => d['kind'] === 'ValidatingAdmissionPolicy')!;

const twins = Object.entries(SPIDERIPPOOL_ENFORCEMENT).flatMap(([rule, e]) => ('policyVariable' in e ? [[rule, e.policyVariable] as const] : []));

describe('the enforcement table', () => {
  test('names every rule of the SpiderIPPool webhook, and nothing else', () => {
    expect(Object.keys(SPIDERIPPOOL_ENFORCEMENT)).toEqual(SPIDERIPPOOL_RULES);
  });

  test('names every other webhook, with why it has no policy twin', () => {
    const others = Object.values(WEBHOOKS)
      .map((w) => w.name)
      .filter((w) => w !== WEBHOOKS.spiderIPPool.name);
    expect(Object.keys(OTHER_WEBHOOKS_ENFORCEMENT).sort()).toEqual(others.sort());
    for (const { webhook } of wireValidators({})) expect([WEBHOOKS.spiderIPPool.name, ...others]).toContain(webhook);
    for (const why of Object.values(OTHER_WEBHOOKS_ENFORCEMENT)) expect(why).not.toBe('');
  });

  test('every twin is a variable of the policy and a validation `!variables.<name>`, in the order of the table', () => {
    const spec = policy()['spec'];
    const variables = (spec['variables'] as Obj[]).map((v) => v['name']);
    const validations = (spec['validations'] as Obj[]).map((v) => v['expression']);
    for (const [, variable] of twins) expect(variables).toContain(variable);
    expect(validations).toEqual(twins.map(([, variable]) => `!variables.${variable}`));
  });

  test('every validation says what to do: a message naming the field, and a messageExpression, evaluated only when its rule fails, naming it too', () => {
    for (const validation of policy()['spec']['validations'] as Obj[]) {
      expect(validation['message']).toMatch(
        /^(spec\.nodeName|metadata\.annotations\[ipam\.spidernet\.io\/[a-z-]+\]): (Forbidden|Invalid value|Required value): .*; .+/,
      );
      expect(validation['message']).not.toMatch(/\n/);
      const messageExpression: string | undefined = validation['messageExpression'];
      if (messageExpression === undefined) continue;
      expect(messageExpression.startsWith(`${validation['expression']} ? '' : (`)).toBe(true);
      expect(messageExpression.slice(`${validation['expression']} ? '' : (`.length)).toMatch(/^ '(spec\.nodeName|metadata\.annotations)/);
    }
  });

  test('the policy and its binding: Deny, Fail, named as the table says, matching as narrowly as the webhook', () => {
    const [vap, binding] = documents();
    expect(vap!['metadata']['name']).toBe(ADMISSION_POLICY_NAME);
    expect(vap!['spec']['failurePolicy']).toBe('Fail');
    expect(binding!['kind']).toBe('ValidatingAdmissionPolicyBinding');
    expect(binding!['spec']).toEqual({ policyName: ADMISSION_POLICY_NAME, validationActions: ['Deny'] });
    const webhookFile = new URL('../../deploy/base/validatingwebhookconfiguration.yaml', import.meta.url);
    const vwc = parseAllDocuments(readFileSync(webhookFile, 'utf8'))[0]!.toJS() as Obj;
    const webhook = (vwc['webhooks'] as Obj[]).find((w) => w['name'] === WEBHOOKS.spiderIPPool.name)!;
    expect(vap!['spec']['matchConditions']).toEqual(webhook['matchConditions']);
    expect(vap!['spec']['matchConstraints']['resourceRules']).toEqual(webhook['rules']);
  });
});

/** The IaaS pool `p` with parent NIC `nic`, on the nodes `nodeName` (a global pool without). */
const iaas = (nic?: string, nodeName?: string[]): Obj =>
  spiderIPPool('p', { provider: 'cloud', ...(nic !== undefined ? { nic } : {}), subnet: '10.0.0.0/24', ...(nodeName ? { nodeName } : {}) });

describe('judgeSpiderIPPoolWrite names the rules that refuse', () => {
  const none = noPoolDirectory('no pools in this test');
  test.each([
    ['removing spec.nodeName', iaas('eth0', ['w1']), iaas('eth0'), ['mode-fixed']],
    ['removing the provider', iaas(), spiderIPPool('p', { subnet: '10.0.0.0/24' }), ['category-fixed']],
    ['a second node', iaas('eth0', ['w1']), iaas('eth0', ['w1', 'w2']), ['nodes-count']],
    ['nothing broken', iaas('eth0', ['w1']), iaas('eth1', ['w1']), []],
  ])('%s', (_, old, pool, rules) => {
    expect(judgeSpiderIPPoolWrite(old as never, pool as never, 'p', none).refused.map((r) => r.rule)).toEqual(rules);
  });
});

describe('review says whether the policy refuses a refused pool too', () => {
  const run = (text: string, old?: string) =>
    runReview({ inputs: [{ text, source: 'new.yaml' }], ...(old ? { old: { text: old, source: 'old.yaml' } } : {}), configMap: { name: 'spiderpool-conf' } });

  test('a rule with a twin: the policy refuses it too', () => {
    const result = run(stringify(iaas('eth0')), stringify(iaas('eth0', ['w1'])));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      `note: SpiderIPPool "p": ValidatingAdmissionPolicy "${ADMISSION_POLICY_NAME}" refuses it too (mode-fixed): it stays refused while the webhook is down\n`,
    );
  });

  test('an allowed pool gets no note', () => {
    const result = run(stringify(iaas('eth0', ['w1'])));
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toMatch(/^note: SpiderIPPool/m);
  });

  test('the note reads the rules from the review itself: the write is judged once, the other pools asked as often as by the webhook alone', () => {
    const { state } = ClusterState.of([spiderIPPool('q', { provider: 'cloud', subnet: '10.0.1.0/24' })]);
    let reads = 0; // of the pools naming a pool: what judging a write asks (review's own lookup of a stored "p" does not)
    const pairedWith = state.pools.pairedWith.bind(state.pools);
    state.pools.pairedWith = (name: string) => (reads++, pairedWith(name));
    const broken = spiderIPPool('p', { provider: 'cloud', subnet: '10.0.0.0/24', pair: 'q' }); // q is IPv4 too
    const result = runReview({ inputs: [{ text: stringify(broken), source: 'new.yaml' }], state, configMap: { name: 'spiderpool-conf' } });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/note: SpiderIPPool "p": only the webhook refuses it, not ValidatingAdmissionPolicy ".*" \(pair-ipVersion: /);
    const byReview = reads;
    reads = 0;
    const outcome = createReviewer({ configMap: { name: 'spiderpool-conf' }, pools: state.pools, cluster: state })(
      buildAdmissionReview({ operation: 'CREATE', object: broken }),
    );
    expect(outcome.refusedBy).toEqual(['pair-ipVersion']);
    expect(byReview).toBe(reads);
  });

  test('rules without a twin: only the webhook refuses, and why', () => {
    expect(policyEnforcementLine(['pair-capacity', 'pair-nodeName'])).toBe(
      `only the webhook refuses it, not ValidatingAdmissionPolicy "${ADMISSION_POLICY_NAME}" (pair-capacity: ${(SPIDERIPPOOL_ENFORCEMENT['pair-capacity'] as { webhookOnly: string }).webhookOnly}; ` +
        `pair-nodeName: ${(SPIDERIPPOOL_ENFORCEMENT['pair-nodeName'] as { webhookOnly: string }).webhookOnly})`,
    );
    expect(policyEnforcementLine(['pair-capacity', 'mode-fixed'])).toMatch(/refuses it too \(mode-fixed\)/);
  });
});
