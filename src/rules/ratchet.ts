/**
 * Validation ratcheting, as Kubernetes does it for CRDs (KEP-4008, "CRD Validation
 * Ratcheting"): CREATE gets every rule; an UPDATE is refused only for violations it
 * introduces or makes worse, so pools created before this webhook was installed keep
 * working. A violation the old object already had is let through with a warning.
 */
import type { FieldError } from '../kubernetes/field-errors.js';
import type { PoolRule } from './rule-names.js';

/** One broken rule of one object. */
export interface Violation {
  error: FieldError;
  /**
   * Which rule, from a fixed set (`parent-nic-missing`, `pair-capacity`, …): the `rule`
   * label of the violation gauge, and how `audit` names it.
   */
  rule: PoolRule;
  /** For a rule between the two pools of a dual-stack pair: the other pool's name. */
  partner?: string;
  /**
   * The rule and what it is about (e.g. `pair:pool-v6:capacity`): the same key on the old
   * and the new object means the same violation.
   */
  key: string;
  /**
   * How it is broken. A string is a value: the violation is kept only while the value is
   * unchanged (Kubernetes' rule). A bigint is an amount (entries too many, addresses too
   * many): the violation is kept while the amount does not grow.
   */
  measure: string | bigint;
}

/** Findings about one pool: violations to ratchet, and warnings that never refuse. */
export interface Findings {
  violations: Violation[];
  warnings: string[];
}

/** What an object's violations come to: those refused, and warnings for those let through. */
export interface Ratcheted {
  refused: Violation[];
  warnings: string[];
}

function notWorse(before: Violation, after: Violation): boolean {
  if (typeof before.measure === 'bigint' && typeof after.measure === 'bigint') return after.measure <= before.measure;
  return before.measure === after.measure;
}

/**
 * Splits `found` (the new object's violations on UPDATE) into refused ones and let-through
 * warnings, given `existing`, the old object's violations.
 */
export function ratchet(found: readonly Violation[], existing: readonly Violation[]): Ratcheted {
  const refused: Violation[] = [];
  const warnings: string[] = [];
  const byKey = new Map(existing.map((old) => [old.key, old]));
  for (const violation of found) {
    const before = byKey.get(violation.key);
    if (before !== undefined && notWorse(before, violation)) {
      warnings.push(`${violation.error.field}: let through, as it was so before this update and is not made worse: ${violation.error.detail}`);
    } else refused.push(violation);
  }
  return { refused, warnings };
}
