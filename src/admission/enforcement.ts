/**
 * Enforcement actions, applied to what a validator found (after Gatekeeper's
 * `enforcementAction` and a ValidatingAdmissionPolicy binding's `validationActions`):
 * `Deny` refuses as the validator would, `Warn` lets the write through with one warning per
 * cause, `Audit` lets it through with nothing added. Every review in which a rule fired
 * carries `auditAnnotations` (`decision`, `rules`), which the API server records in its
 * audit log as `<webhook name>/<key>`. Generic: the actions arrive as data, per rule name.
 */
import { fieldErrorString, MAX_WARNING_CHARS, type FieldError } from '../kubernetes/field-errors.js';
import type { Findings } from './contract.js';

/** The actions, weakest last; `Deny` is the default of every rule. */
export const ENFORCEMENT_ACTIONS = ['Deny', 'Warn', 'Audit'] as const;
export type EnforcementAction = (typeof ENFORCEMENT_ACTIONS)[number];

/** The action of each rule, by its name (a validator's `rules`). */
export type ActionOf = (rule: string) => EnforcementAction;

/** Every rule refuses: the webhook as it was before enforcement actions. */
export const DENY_ALL: ActionOf = () => 'Deny';

/** One cause a rule fired with: its rule, its field and the action taken on it. */
export interface FiredCause {
  rule: string;
  field: string;
  action: EnforcementAction;
}

/** What is left of a validator's findings once each cause got its rule's action. */
export interface Enforced {
  /** The `Deny` causes alone: any refuses the write. */
  errors: readonly FieldError[];
  /** The findings' own warnings, then one per `Warn` cause. */
  warnings: readonly string[];
  /** Every cause, in the validator's order. */
  causes: readonly FiredCause[];
}

/**
 * Applies `actionOf` to each cause of `findings` (`findings.errorRules[i]` is the rule of
 * `findings.errors[i]`).
 */
export function enforce(findings: Findings, actionOf: ActionOf): Enforced {
  // Most reviews find nothing: they allocate nothing here.
  if (findings.errors.length === 0) return { errors: [], warnings: findings.warnings, causes: [] };
  const errors: FieldError[] = [];
  const warnings = [...findings.warnings];
  const causes = findings.errors.map((error, i): FiredCause => {
    const rule = findings.errorRules[i]!;
    const action = actionOf(rule);
    if (action === 'Deny') errors.push(error);
    else if (action === 'Warn') warnings.push(causeWarning(error));
    return { rule, field: error.field, action };
  });
  return { errors, warnings, causes };
}

/**
 * A cause as a warning: `<field>: <Type>: <detail>`, kubectl's line for the cause, cut to
 * {@link MAX_WARNING_CHARS} (the developer guide's limit for a warning; details are one line).
 */
function causeWarning(error: FieldError): string {
  const text = fieldErrorString(error);
  if (text.length <= MAX_WARNING_CHARS) return text;
  const end = /[\ud800-\udbff]/.test(text[MAX_WARNING_CHARS - 2]!) ? MAX_WARNING_CHARS - 2 : MAX_WARNING_CHARS - 1;
  return `${text.slice(0, end)}…`;
}

/** The `decision` audit annotation: the strongest action taken, lower case as kubectl and Kyverno write it. */
export type DecisionName = 'deny' | 'warn' | 'audit';

/** The strongest action among `causes`; undefined when none fired. */
export function decisionOf(causes: readonly FiredCause[]): DecisionName | undefined {
  if (causes.length === 0) return undefined;
  const strongest = ENFORCEMENT_ACTIONS.find((action) => causes.some((cause) => cause.action === action));
  return strongest?.toLowerCase() as DecisionName | undefined;
}

/** The rules of `causes`, each once, in the order of their first cause. */
export function firedRules(causes: readonly FiredCause[], action?: EnforcementAction): string[] {
  return [...new Set(causes.filter((cause) => action === undefined || cause.action === action).map((cause) => cause.rule))];
}

/** `decision` and `rules` of a review in which a rule fired; undefined when none did. */
export function auditAnnotationsOf(causes: readonly FiredCause[]): Record<string, string> | undefined {
  const decision = decisionOf(causes);
  return decision === undefined ? undefined : { decision, rules: firedRules(causes).join(',') };
}
