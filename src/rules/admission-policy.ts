/**
 * Where each refusal of the webhook is enforced: also inside the API server, by the
 * ValidatingAdmissionPolicy of deploy/components/validating-admission-policy/ (Kubernetes
 * ≥ 1.30, in-process CEL: it holds while the webhook is down), or by the webhook only, and
 * why. A policy sees the request's `object` and `oldObject` and nothing else, so only the
 * rules that read those two have a twin there: each is written with its twin in one module
 * of pool-rules/, and the policy is generated from them (scripts/generate/admission-policy.ts).
 * The end-to-end differential (test/e2e/admission-policy.test.ts) proves on a real API server
 * that each twin decides as the webhook does.
 *
 * Where reading all of a value would cost the API server more than its CEL budget allows
 * (test/e2e/admission-policy-cost.test.ts), a twin reads less and refuses on the safe side,
 * for values no real pool holds: a `parent-nic` over 4096 characters is refused as not one
 * NIC, a `status.allocatedIPs` over 256 characters counts as in use, and a `spec.nodeName`
 * over 256 entries with an empty entry is refused without ratcheting.
 */
import { WEBHOOKS } from '../defaults.js';
import { SPIDERIPPOOL_RULES, type SpiderIPPoolRule } from './rule-names.js';
import { POLICY_TWINS, type TwinnedRule } from './pool-rules/twins.js';

/** The ValidatingAdmissionPolicy and its binding (both bear this name). */
export const ADMISSION_POLICY_NAME = 'spiderippool.iaas-webhook.spidernet.io';

/** A rule's twin in the policy (its variable's name), or why it has none. */
export type Enforcement = { policyVariable: string } | { webhookOnly: string };

const CANDIDATES = 'warns only, and compares the categories of other SpiderIPPools';

const PAIR_PARTNER = 'compares the pool with the other pool of its dual-stack pair, which a policy cannot read';

/** Why each rule without a policy twin has none (the type makes a new rule need an entry or a twin). */
const WEBHOOK_ONLY: Readonly<Record<Exclude<SpiderIPPoolRule, TwinnedRule>, string>> = {
  'pair-entries': 'applies to a pool in a pair, and whether other pools name this one is in those pools',
  'pair-entry-malformed': PAIR_PARTNER,
  'pair-not-iaas': PAIR_PARTNER,
  'pair-ipVersion': PAIR_PARTNER,
  'pair-capacity': PAIR_PARTNER,
  'pair-nodeName': PAIR_PARTNER,
  'pair-podAffinity': PAIR_PARTNER,
  'pair-unsynced': "refuses while the webhook's pool cache has not synced, which a policy does not have",
};

const isTwinned = (rule: SpiderIPPoolRule): rule is TwinnedRule => rule in POLICY_TWINS;

/** Every SpiderIPPool rule, in the webhook's order: its twin's variable, or why it has none. */
export const SPIDERIPPOOL_ENFORCEMENT: Readonly<Record<SpiderIPPoolRule, Enforcement>> = Object.fromEntries(
  SPIDERIPPOOL_RULES.map((rule) => [rule, isTwinned(rule) ? { policyVariable: POLICY_TWINS[rule].variable } : { webhookOnly: WEBHOOK_ONLY[rule] }]),
) as Record<SpiderIPPoolRule, Enforcement>;

/**
 * The webhooks other than the SpiderIPPool one, none of them with a policy twin, and why
 * (by the names of `WEBHOOKS`).
 */
export const OTHER_WEBHOOKS_ENFORCEMENT: Readonly<Record<string, string>> = {
  [WEBHOOKS.configMap.name]: "judges conf.yml, YAML text read as Spiderpool's two Go decoders read it, which CEL cannot parse",
  [WEBHOOKS.pod.name]: CANDIDATES,
  [WEBHOOKS.workload.name]: CANDIDATES,
  [WEBHOOKS.namespace.name]: CANDIDATES,
  [WEBHOOKS.defaultPools.name]: 'warns only, and compares the categories of other default SpiderIPPools',
};

/**
 * One line for a refused SpiderIPPool write, saying whether the policy refuses it too
 * (`rules`: the rules that refused, in the webhook's order; at least one).
 */
export function policyEnforcementLine(rules: readonly SpiderIPPoolRule[]): string {
  const twinned = rules.filter((rule) => 'policyVariable' in SPIDERIPPOOL_ENFORCEMENT[rule]);
  if (twinned.length > 0) {
    return `ValidatingAdmissionPolicy ${JSON.stringify(ADMISSION_POLICY_NAME)} refuses it too (${twinned.join(', ')}): it stays refused while the webhook is down`;
  }
  const why = [...new Set(rules.map((rule) => `${rule}: ${(SPIDERIPPOOL_ENFORCEMENT[rule] as { webhookOnly: string }).webhookOnly}`))];
  return `only the webhook refuses it, not ValidatingAdmissionPolicy ${JSON.stringify(ADMISSION_POLICY_NAME)} (${why.join('; ')})`;
}
