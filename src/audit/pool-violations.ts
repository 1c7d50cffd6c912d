/**
 * The violations of the stored SpiderIPPools, kept current as the pools change (after Gatekeeper's audit and its `gatekeeper_violations` gauge): every IaaS pool judged
 * as a CREATE would judge it, with the one judgement the webhook uses
 * (`storedPoolViolations`). A change of one pool re-judges only the pools it can affect,
 * as the {@link PoolIndex} reports them (the pool, the pools it names before and after,
 * the pools naming it), so upkeep per event is O(pairs touched), never O(pools). A
 * traditional pool created as the sibling of an IaaS pool never reaches the webhook, but
 * its creation touches the IaaS pool naming it, whose broken pair is counted here.
 */
import type { PoolIndex } from '../state/pool-index.js';
import { fieldErrorBody } from '../field/errors.js';
import { POOL_RULES, storedPoolViolations } from '../rules/pool-judgement.js';
import type { Violation } from '../rules/ratchet.js';

/** One violation of one stored pool, as `audit` reports it. */
export interface PoolViolation {
  pool: string;
  rule: string;
  field: string;
  /** The cause's reason, as in a denial: `FieldValueInvalid`, … */
  reason: string;
  /** The cause's message, as in a denial: `Invalid value: "eth0,eth1": …`. */
  message: string;
}

export function describeViolation(pool: string, violation: Violation): PoolViolation {
  return { pool, rule: violation.rule, field: violation.error.field, reason: violation.error.type, message: fieldErrorBody(violation.error) };
}

/** The unordered pair of two pools, as one key. */
const pairKey = (a: string, b: string): string => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);

export class PoolViolationTracker {
  private readonly byPool = new Map<string, Violation[]>();
  private readonly ruleCounts = new Map<string, number>(POOL_RULES.map((rule) => [rule, 0]));
  /** Unordered pair → how many pair violations (from either side) it has. */
  private readonly pairCounts = new Map<string, number>();
  /** Pools judged since the start: what a test counts to see the upkeep stays O(touched). */
  judgements = 0;

  constructor(private readonly index: PoolIndex) {
    index.onChange((touched) => (touched === 'all' ? this.rejudgeAll() : touched.forEach((name) => this.rejudge(name))));
    if (index.hasSynced()) this.rejudgeAll();
  }

  /** Violations by rule, every rule listed (0 when none). */
  counts(): ReadonlyMap<string, number> {
    return this.ruleCounts;
  }

  /** Pairs of pools with at least one violation between them. */
  brokenPairs(): number {
    return this.pairCounts.size;
  }

  /** Every current violation, by pool name. */
  violations(): PoolViolation[] {
    return [...this.byPool].flatMap(([pool, found]) => found.map((v) => describeViolation(pool, v)));
  }

  private rejudgeAll(): void {
    this.byPool.clear();
    this.pairCounts.clear();
    for (const rule of this.ruleCounts.keys()) this.ruleCounts.set(rule, 0);
    for (const [name] of this.index.entries()) this.rejudge(name);
  }

  private rejudge(name: string): void {
    this.account(name, -1);
    const pool = this.index.get(name);
    this.judgements++;
    const found = pool === undefined ? [] : storedPoolViolations(pool, name, this.index);
    if (found.length === 0) this.byPool.delete(name);
    else this.byPool.set(name, found);
    this.account(name, +1);
  }

  /** Adds (`+1`) or takes away (`-1`) the counts of `name`'s current violations. */
  private account(name: string, sign: 1 | -1): void {
    for (const violation of this.byPool.get(name) ?? []) {
      this.ruleCounts.set(violation.rule, (this.ruleCounts.get(violation.rule) ?? 0) + sign);
      if (violation.partner === undefined) continue;
      const key = pairKey(name, violation.partner);
      const count = (this.pairCounts.get(key) ?? 0) + sign;
      if (count === 0) this.pairCounts.delete(key);
      else this.pairCounts.set(key, count);
    }
  }
}
