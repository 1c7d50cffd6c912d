/**
 * Every rule that can refuse a write, by the name `audit`, `review`'s policy note, the
 * `rule` labels of the violation gauge and the refusal counter and the
 * ValidatingAdmissionPolicy table use: the one list, the rule types derived from it.
 * SpiderIPPool rules: `pool` rules judge one pool, alone and with its dual-stack partners,
 * as a CREATE would (`judgePool`: webhook, `audit`, gauges; ratcheted on UPDATE);
 * `transition` rules compare the stored pool with the new one on UPDATE (Spiderpool
 * PR #5778's in-use rules, mode and category fixed for a pool's life); the `cluster` rule
 * refuses an IaaS pool write while the other pools are not known (`serve --unsynced-pools`,
 * pool-pair.ts), a fact of the webhook, not of the pool, so never ratcheted. The ConfigMap's one
 * rule, `conf-yml`: `data[conf.yml]` is present and lets Spiderpool's agent and controller
 * start (README, "Rules").
 */
const RULES = {
  'provider-fixed-in-use': 'transition',
  'parent-nic-fixed-in-use': 'transition',
  'category-fixed': 'transition',
  'mode-fixed': 'transition',
  'provider-empty': 'pool',
  'nodes-count': 'pool',
  'node-empty': 'pool',
  'parent-nic-missing': 'pool',
  'parent-nic-one': 'pool',
  'parent-nic-invalid': 'pool',
  'pair-self': 'pool',
  'pair-entries': 'pool',
  'pair-entry-malformed': 'pool',
  'pair-not-iaas': 'pool',
  'pair-ipVersion': 'pool',
  'pair-capacity': 'pool',
  'pair-nodeName': 'pool',
  'pair-podAffinity': 'pool',
  'pair-unsynced': 'cluster',
  'conf-yml': 'configmap',
} as const satisfies Record<string, 'pool' | 'transition' | 'cluster' | 'configmap'>;

/** Every rule that can refuse a write. */
export type RuleName = keyof typeof RULES;

/** The rules of {@link RULES} of one sort. */
type RulesOf<Sort> = { [R in RuleName]: (typeof RULES)[R] extends Sort ? R : never }[RuleName];

/** Every rule that can refuse a SpiderIPPool write. */
export type SpiderIPPoolRule = RulesOf<'pool' | 'transition' | 'cluster'>;

/** A rule judging one pool (`Violation.rule`): the `rule` label of the violation gauge. */
export type PoolRule = RulesOf<'pool'>;

/** A rule comparing the stored pool with the new one on UPDATE. */
export type TransitionRule = RulesOf<'transition'>;

/** The rules of `sort`, in the order of {@link RULES}. */
function rulesOf<R extends RuleName>(isOf: (sort: (typeof RULES)[RuleName]) => boolean): readonly R[] {
  return (Object.keys(RULES) as RuleName[]).filter((rule) => isOf(RULES[rule])) as R[];
}

/** Every SpiderIPPool rule, transition rules first (the order the webhook checks them). */
export const SPIDERIPPOOL_RULES = rulesOf<SpiderIPPoolRule>((sort) => sort !== 'configmap');

/** The ConfigMap's rules. */
export const CONFIGMAP_RULES = rulesOf<RulesOf<'configmap'>>((sort) => sort === 'configmap');

/** Every {@link PoolRule}, in the order of {@link SPIDERIPPOOL_RULES}. */
export const POOL_RULES = rulesOf<PoolRule>((sort) => sort === 'pool');

/** Every {@link TransitionRule}, in the order of {@link SPIDERIPPOOL_RULES}. */
export const TRANSITION_RULES = rulesOf<TransitionRule>((sort) => sort === 'transition');

/** The rules refusing because of what the webhook does not know of the cluster (never ratcheted). */
export const CLUSTER_RULES = rulesOf<RulesOf<'cluster'>>((sort) => sort === 'cluster');

/** Every rule a refusing validator names: the `rule` label values of the refusal counter. */
export const REFUSAL_RULES: readonly RuleName[] = [...SPIDERIPPOOL_RULES, ...CONFIGMAP_RULES];
