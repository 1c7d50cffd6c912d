/**
 * The enforcement table: each rule's action (`Deny`, `Warn` or `Audit`, admission/enforcement.ts),
 * as `--enforcement ACTION` (every rule) and `--enforcement RULE=ACTION` (one rule, over the
 * default; repeatable) set it, the chart's `enforcement.default` and `enforcement.rules`.
 * Actions are read in any case; rules by their names in rule-names.ts.
 */
import { z } from 'zod';
import { ENFORCEMENT_ACTIONS, type ActionOf, type EnforcementAction } from '../admission/enforcement.js';
import { quoteShown } from '../go/strconv-quote.js';
import { closestName } from '../kubernetes/closest-name.js';
import { REFUSAL_RULES, type RuleName } from './rule-names.js';

/** Each rule's action: `default`, unless `rules` names it. */
const EnforcementTableSchema = z.object({
  default: z.enum(ENFORCEMENT_ACTIONS),
  rules: z.partialRecord(z.enum(REFUSAL_RULES as [RuleName, ...RuleName[]]), z.enum(ENFORCEMENT_ACTIONS)),
});
export type EnforcementTable = z.infer<typeof EnforcementTableSchema>;

/** Every rule `Deny`: the webhook without `--enforcement`. */
export const DENY_EVERY_RULE: EnforcementTable = { default: 'Deny', rules: {} };

/** An `--enforcement` value the table cannot take: the message is one line, for the start error. */
export class EnforcementError extends Error {
  override name = 'EnforcementError';
}

/**
 * The table the values set, in order, over {@link DENY_EVERY_RULE}.
 *
 * @throws EnforcementError for an unknown action or rule (with the closest rule name when
 *   one is near), or a rule or the default given two different actions.
 */
export function parseEnforcement(values: readonly string[]): EnforcementTable {
  const rules: Partial<Record<RuleName, EnforcementAction>> = {};
  let fallback: EnforcementAction | undefined;
  for (const value of values) {
    const at = value.indexOf('=');
    const action = actionNamed(at < 0 ? value : value.slice(at + 1), value);
    if (at < 0) {
      if (fallback !== undefined && fallback !== action) throw new EnforcementError(`the default action is already ${fallback}, not ${action}; give it once`);
      fallback = action;
      continue;
    }
    const rule = ruleNamed(value.slice(0, at));
    const before = rules[rule];
    if (before !== undefined && before !== action) throw new EnforcementError(`rule ${rule} is already ${before}, not ${action}; give it once`);
    rules[rule] = action;
  }
  return { default: fallback ?? 'Deny', rules };
}

/** The action `name` spells, in any case. */
function actionNamed(name: string, value: string): EnforcementAction {
  const action = ENFORCEMENT_ACTIONS.find((a) => a.toLowerCase() === name.trim().toLowerCase());
  if (action !== undefined) return action;
  throw new EnforcementError(`${quoteShown(value)}: the action must be ${ENFORCEMENT_ACTIONS.join(', ')} (any case), alone or after RULE=`);
}

/** The rule `name` names exactly. */
function ruleNamed(name: string): RuleName {
  if ((REFUSAL_RULES as readonly string[]).includes(name)) return name as RuleName;
  const near = closestName(name, REFUSAL_RULES);
  const hint = near === undefined ? `rules: ${REFUSAL_RULES.join(', ')}` : `did you mean ${near}?`;
  throw new EnforcementError(`no rule is named ${quoteShown(name)}; ${hint}`);
}

/** The action of each rule of `table`; a name it does not know gets the default. */
export function actionsOf(table: EnforcementTable): ActionOf {
  const rules: Partial<Record<string, EnforcementAction>> = table.rules;
  return (rule) => rules[rule] ?? table.default;
}

/** The `--enforcement` values that give `table` back (`serve`'s args from the chart's values, and tests). */
export function enforcementArgs(table: EnforcementTable): string[] {
  return [table.default, ...Object.entries(table.rules).map(([rule, action]) => `${rule}=${action}`)];
}
