/**
 * Where each refusal of the webhook is enforced: also inside the API server, by the
 * ValidatingAdmissionPolicy of deploy/components/validating-admission-policy/ (Kubernetes
 * ≥ 1.30, in-process CEL: it holds while the webhook is down), or by the webhook only, and
 * why. A policy sees the request's `object` and `oldObject` and nothing else, so only the
 * rules that read those two stay true there. The policy holds each twin as a variable of
 * the name below, true when the write breaks the rule, and a validation
 * `!variables.<name>`; a test keeps the policy file and this table equal, and the
 * end-to-end differential (test/e2e/admission-policy.test.ts) proves each twin decides
 * as the webhook does.
 *
 * Where reading all of a value would cost the API server more than its CEL budget allows
 * (test/e2e/admission-policy-cost.test.ts), a twin reads less and refuses on the safe side,
 * for values no real pool holds: a `parent-nic` over 4096 characters is refused as not one
 * NIC, a `status.allocatedIPs` over 256 characters counts as in use, and a `spec.nodeName`
 * over 256 entries with an empty entry is refused without ratcheting.
 */
import { WEBHOOKS } from '../defaults.js';
import type { SpiderIPPoolRule } from './rule-names.js';

/** The ValidatingAdmissionPolicy and its binding (both bear this name). */
export const ADMISSION_POLICY_NAME = 'spiderippool.iaas-webhook.spidernet.io';

/** A rule's twin in the policy (its variable's name), or why it has none. */
export type Enforcement = { policyVariable: string } | { webhookOnly: string };

const CANDIDATES = 'warns only, and compares the categories of other SpiderIPPools';

const PAIR_PARTNER = 'compares the pool with the other pool of its dual-stack pair, which a policy cannot read';

/** Every SpiderIPPool rule (the type makes a new rule need an entry). */
export const SPIDERIPPOOL_ENFORCEMENT: Readonly<Record<SpiderIPPoolRule, Enforcement>> = {
  'provider-fixed-in-use': { policyVariable: 'inUseProviderChanged' },
  'parent-nic-fixed-in-use': { policyVariable: 'inUseParentNicChanged' },
  'category-fixed': { policyVariable: 'categoryChanged' },
  'mode-fixed': { policyVariable: 'modeChanged' },
  'provider-empty': { policyVariable: 'providerEmpty' },
  'nodes-count': { policyVariable: 'tooManyNodes' },
  'node-empty': { policyVariable: 'emptyNodeName' },
  'parent-nic-missing': { policyVariable: 'parentNicMissing' },
  'parent-nic-one': { policyVariable: 'parentNicNotOne' },
  'parent-nic-invalid': { policyVariable: 'parentNicInvalid' },
  'pair-self': { policyVariable: 'pairSelf' },
  'pair-entries': { webhookOnly: 'applies to a pool in a pair, and whether other pools name this one is in those pools' },
  'pair-entry-malformed': { webhookOnly: PAIR_PARTNER },
  'pair-not-iaas': { webhookOnly: PAIR_PARTNER },
  'pair-ipVersion': { webhookOnly: PAIR_PARTNER },
  'pair-capacity': { webhookOnly: PAIR_PARTNER },
  'pair-nodeName': { webhookOnly: PAIR_PARTNER },
  'pair-podAffinity': { webhookOnly: PAIR_PARTNER },
  'pair-unsynced': { webhookOnly: "refuses while the webhook's pool cache has not synced, which a policy does not have" },
};

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
