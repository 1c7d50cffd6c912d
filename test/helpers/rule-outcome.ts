/**
 * How a load loop judges the answer to a write that breaks a rule (test/kube/faults.ts),
 * by the enforcement action it shows (src/admission/enforcement.ts; docs/operations.md,
 * "Rolling out"): `Deny` refuses it with the rule's cause (HTTP 422, the cause in the
 * Status), `Warn` lets it through with the cause as a `Warning` header, `Audit` lets it
 * through without one. Pure: the loop sends, this decides.
 */
import type { EnforcementAction } from '../../src/admission/enforcement.js';

/** What a write that breaks a rule got: one of the actions, or allowed with no webhook configuration; `failed` for anything else. */
export type RuleOutcome = 'refused' | 'warned' | 'audited' | 'unguarded' | 'failed';

/** An API server's answer: status, body and `Warning` headers (`299 - "…"`). */
export interface Answer {
  status: number;
  body: string;
  warnings: readonly string[];
}

const OUTCOME_OF = { Deny: 'refused', Warn: 'warned', Audit: 'audited' } as const satisfies Record<EnforcementAction, RuleOutcome>;

/** The action `answer` shows for the rule whose cause (`<field>: <Type>: `) is `cause`; undefined when it shows none. */
function actionShown(answer: Answer, cause: string): EnforcementAction | undefined {
  if (answer.status === 422) return answer.body.includes(cause) ? 'Deny' : undefined;
  if (answer.status !== 200) return undefined;
  return answer.warnings.some((w) => w.includes(cause)) ? 'Warn' : 'Audit';
}

/**
 * Judges `answer` to a write breaking the rule of `cause`: the outcome of the action it
 * shows when that action is among `due`; `unguarded` for an answer let through without the
 * warning when `unguardedOk` (no webhook configuration: nothing was called; it looks like
 * `Audit`); `failed` otherwise (a 500 "failed calling webhook", another cause, a refusal
 * where only `Warn` or `Audit` were due, a write let through where `Deny` was).
 */
export function ruleOutcome(answer: Answer, cause: string, due: readonly EnforcementAction[], unguardedOk: boolean): RuleOutcome {
  const shown = actionShown(answer, cause);
  if (shown !== undefined && due.includes(shown)) return OUTCOME_OF[shown];
  return unguardedOk && shown === 'Audit' ? 'unguarded' : 'failed';
}
