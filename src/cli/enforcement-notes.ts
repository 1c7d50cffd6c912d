/**
 * What `--enforcement` changes in the offline commands (`review`, `audit`,
 * `validate-config`), kept apart from their input and output handling: a `note:` line for
 * each write a `Warn` or `Audit` rule let through, the count of findings by action, and
 * kubectl's `--warnings-as-errors` exit code.
 */
import type { EnforcementAction, FiredCause } from '../admission/enforcement.js';
import { ENFORCEMENT_ACTIONS } from '../admission/enforcement.js';
import { parseEnforcement, type EnforcementTable } from '../rules/enforcement-table.js';
import type { CommandResult } from './review-file.js';

/** What each action does to a write, as the notes say it. */
const DOES: Record<EnforcementAction, string> = {
  Deny: 'refused',
  Warn: 'allowed with a warning',
  Audit: 'allowed, recorded in the audit log only',
};

/** The table of `--enforcement` values already checked by commander (`collectEnforcement`); undefined for none. */
export function enforcementTable(values: readonly string[] | undefined): EnforcementTable | undefined {
  return values === undefined || values.length === 0 ? undefined : parseEnforcement(values);
}

/**
 * `note: <what>: allowed by --enforcement: mode-fixed (Warn: allowed with a warning); Deny would refuse it`,
 * for a write whose causes include a `Warn` or `Audit` rule; '' otherwise.
 */
export function enforcementNote(what: string, causes: readonly FiredCause[]): string {
  const rules = new Map<string, EnforcementAction>();
  for (const { rule, action } of causes) if (action !== 'Deny') rules.set(rule, action);
  if (rules.size === 0) return '';
  const listed = [...rules].map(([rule, action]) => `${rule} (${action}: ${DOES[action]})`).join(', ');
  return `note: ${what}: let through by --enforcement: ${listed}; Deny would refuse it\n`;
}

/** `Deny 3 (refused), Warn 1 (allowed with a warning)`: findings counted by their rule's action. */
export function countByAction(actions: readonly EnforcementAction[]): string {
  return ENFORCEMENT_ACTIONS.filter((a) => actions.includes(a))
    .map((a) => `${a} ${actions.filter((b) => b === a).length} (${DOES[a]})`)
    .join(', ');
}

/** kubectl's `--warnings-as-errors`: exit 1 when any warning was printed, as a refusal does. */
export function warningsAsErrors(result: CommandResult, warned: boolean, asErrors: boolean | undefined): CommandResult {
  return asErrors === true && warned && result.exitCode === 0 ? { ...result, exitCode: 1 } : result;
}
