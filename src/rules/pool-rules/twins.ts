/**
 * The SpiderIPPool rules that need only `object` and `oldObject`, each with its twin for the
 * ValidatingAdmissionPolicy, and the policy's variables and validations built from them in the
 * webhook's cause order (scripts/generate/admission-policy.ts writes them out).
 */
import { SPIDERIPPOOL_RULES, type SpiderIPPoolRule } from '../rule-names.js';
import type { CelVariable, PolicyTwin } from './cel.js';
import { CATEGORY_FIXED } from './category.js';
import { PARENT_NIC_FIXED_IN_USE, PROVIDER_FIXED_IN_USE } from './in-use.js';
import { MODE_FIXED } from './mode.js';
import { NODE_EMPTY, NODES_COUNT } from './nodes.js';
import { PAIR_SELF } from './pair-self.js';
import { PARENT_NIC_INVALID, PARENT_NIC_MISSING, PARENT_NIC_ONE } from './parent-nic.js';
import { PROVIDER_EMPTY } from './provider.js';
import { SHARED_VARIABLES } from './variables.js';

/** Every rule with a policy twin, by rule name. */
export const POLICY_TWINS = {
  'provider-fixed-in-use': PROVIDER_FIXED_IN_USE,
  'parent-nic-fixed-in-use': PARENT_NIC_FIXED_IN_USE,
  'category-fixed': CATEGORY_FIXED,
  'mode-fixed': MODE_FIXED,
  'provider-empty': PROVIDER_EMPTY,
  'nodes-count': NODES_COUNT,
  'node-empty': NODE_EMPTY,
  'parent-nic-missing': PARENT_NIC_MISSING,
  'parent-nic-one': PARENT_NIC_ONE,
  'parent-nic-invalid': PARENT_NIC_INVALID,
  'pair-self': PAIR_SELF,
} as const satisfies Partial<Record<SpiderIPPoolRule, PolicyTwin>>;

/** A rule with a policy twin. */
export type TwinnedRule = keyof typeof POLICY_TWINS;

/** The twins in the webhook's cause order ({@link SPIDERIPPOOL_RULES}). */
const TWINS_IN_ORDER: readonly PolicyTwin[] = SPIDERIPPOOL_RULES.flatMap((rule) => (rule in POLICY_TWINS ? [POLICY_TWINS[rule as TwinnedRule]] : []));

/** One validation of the policy: `!variables.<rule's variable>`, with its messages. */
interface PolicyValidation {
  rule: TwinnedRule;
  expression: string;
  message: string;
  messageExpression: string;
}

/** The in-use twins, whose refusal of an annotation is that annotation's only cause. */
const IN_USE = [PROVIDER_FIXED_IN_USE, PARENT_NIC_FIXED_IN_USE];

/**
 * A twin's variable: its `broken`, and (as spiderippool.ts keeps one cause per annotation)
 * not when an in-use rule refuses the same field.
 */
function ruleVariable(twin: PolicyTwin): CelVariable {
  const fixed = IN_USE.filter((t) => t !== twin && t.field === twin.field).map((t) => ` && !variables.${t.variable}`);
  return { name: twin.variable, expression: fixed.length === 0 ? twin.broken : `(${twin.broken})${fixed.join('')}` };
}

/**
 * The policy's `spec.variables` (shared ones, each twin's own, then one per rule, true when
 * the write breaks it) and `spec.validations`, in cause order: the API server shows the first
 * failing validation, so a person sees the webhook's first cause.
 *
 * @throws Error when two twins define one variable name differently.
 */
export function policyParts(): { variables: CelVariable[]; validations: PolicyValidation[] } {
  const byName = new Map<string, CelVariable>();
  for (const variable of [...SHARED_VARIABLES, ...TWINS_IN_ORDER.flatMap((t) => t.variables), ...TWINS_IN_ORDER.map(ruleVariable)]) {
    const known = byName.get(variable.name);
    if (known !== undefined && known.expression !== variable.expression) throw new Error(`policy variable ${variable.name} is defined twice, differently`);
    byName.set(variable.name, known ?? variable);
  }
  const validations = TWINS_IN_ORDER.map((t) => ({
    rule: t.rule as TwinnedRule,
    expression: `!variables.${t.variable}`,
    message: t.message,
    messageExpression: t.messageExpression,
  }));
  return { variables: [...byName.values()], validations };
}
