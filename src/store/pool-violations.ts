/**
 * The violations of the stored SpiderIPPools, kept current as the pools change (after Gatekeeper's audit and its `gatekeeper_violations` gauge): every IaaS pool judged
 * as a CREATE would judge it, with the one judgement the webhook uses
 * (`storedPoolViolations`). A change of one pool re-judges only the pools it can affect,
 * as the {@link PoolIndex} reports them (the pool, the pools it names before and after,
 * the pools naming it), so upkeep per event is O(pairs touched), never O(pools). A
 * traditional pool created as the sibling of an IaaS pool never reaches the webhook, but
 * its creation touches the IaaS pool naming it, whose broken pair is counted here.
 * The pass over every pool after a complete list runs in time slices when given a
 * {@link Slicing} (the server's: 10 000 pools take ~2 s to judge, longer than a probe's
 * timeout); meanwhile the counts hold the last judgement of each pool, old or new. A
 * judgement that throws (a rule's bug on an odd pool, a failed pause) ends the pass or
 * event it belongs to only, when the tracker is given a `failed` handler (the server's
 * logs it): it is counted ({@link PoolViolationTracker.failedJudgements}), the counts
 * keep each pool's last judgement, and the next list or event judges again. It never
 * becomes an unhandled rejection (on which Node ends the process) nor a throw into the
 * index's caller (the informer's watch callback).
 */
import type { PoolIndex } from './pool-index.js';
import { inSlices, type Slicing } from './slices.js';
import { fieldErrorBody } from '../kubernetes/field-errors.js';
import { storedPoolViolations } from '../rules/pool-judgement.js';
import { POOL_RULES, type PoolRule } from '../rules/rule-names.js';
import type { Violation } from '../rules/ratchet.js';

/** One violation of one stored pool, as `audit` reports it. */
export interface PoolViolation {
  pool: string;
  rule: PoolRule;
  field: string;
  /** The cause's reason, as in a denial: `FieldValueInvalid`, … */
  reason: string;
  /** The cause's message, as in a denial: `Invalid value: "eth0,eth1": …`. */
  message: string;
}

export function describeViolation(pool: string, violation: Violation): PoolViolation {
  return { pool, rule: violation.rule, field: violation.error.field, reason: violation.error.type, message: fieldErrorBody(violation.error) };
}

/**
 * What the counts need of one violation: its rule and, for a pair rule, the other pool. A
 * violation's message (~400 characters) is not kept: {@link PoolViolationTracker.violations}
 * judges the few violating pools again to say it.
 */
type Tally = { rule: PoolRule; partner?: string };

const tally = ({ rule, partner }: Violation): Tally => (partner === undefined ? { rule } : { rule, partner });

/** The unordered pair of two pools, as one key. */
const pairKey = (a: string, b: string): string => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);

export class PoolViolationTracker {
  /** The violating pools' tallies (a pool without a violation has no entry). */
  private readonly byPool = new Map<string, Tally[]>();
  private readonly ruleCounts = new Map<PoolRule, number>(POOL_RULES.map((rule) => [rule, 0]));
  /** Unordered pair → how many pair violations (from either side) it has. */
  private readonly pairCounts = new Map<string, number>();
  /** Pools judged since the start: what a test counts to see the upkeep stays O(touched). */
  judgements = 0;
  /** Events and passes over every pool whose judgement threw, since the start (with a `failed` handler). */
  failedJudgements = 0;
  /** Which pass over every pool is the current one (a newer complete list abandons an older pass). */
  private pass = 0;
  private passing: Promise<void> = Promise.resolve();

  /**
   * @param slicing how the pass over every pool yields to the event loop; absent, it runs
   *   in one piece (the CLI's `audit`, which has nothing else to answer).
   * @param failed told what a judgement threw, which is then counted in
   *   {@link failedJudgements}; absent, it is thrown to the index's caller (a pass in
   *   slices: {@link judged} rejects with it).
   */
  constructor(
    private readonly index: PoolIndex,
    private readonly slicing?: Slicing,
    private readonly failed?: (error: unknown) => void,
  ) {
    index.onChange((touched) => {
      try {
        if (touched === 'all') this.rejudgeAll();
        else touched.forEach((name) => this.rejudge(name));
      } catch (error) {
        this.failure(error);
      }
    });
    if (index.hasSynced()) this.rejudgeAll();
  }

  /** Resolves once the current pass over every pool (after a complete list) is done, or has failed with a `failed` handler. */
  judged(): Promise<void> {
    return this.passing;
  }

  /** Violations by rule, every rule listed (0 when none). */
  counts(): ReadonlyMap<PoolRule, number> {
    return this.ruleCounts;
  }

  /** Pairs of pools with at least one violation between them. */
  brokenPairs(): number {
    return this.pairCounts.size;
  }

  /** Every current violation, by pool name (the violating pools judged again, for their messages). */
  violations(): PoolViolation[] {
    return [...this.byPool.keys()].flatMap((name) => {
      const pool = this.index.get(name); // undefined: gone from a list whose pass is not done yet
      return pool === undefined ? [] : storedPoolViolations(pool, name, this.index).map((v) => describeViolation(name, v));
    });
  }

  /**
   * Re-judges every stored pool, then the pools judged before that are no longer stored.
   * Each judgement replaces that pool's own (rejudge is idempotent), so a pass that a
   * newer one abandons, or an event re-judging a pool between slices, leaves the counts
   * consistent.
   */
  private rejudgeAll(): void {
    const pass = ++this.pass;
    const wanted = () => pass === this.pass;
    const judge = ([name]: [string, unknown]) => this.rejudge(name);
    const gone = () => [...this.byPool.keys()].filter((name) => this.index.get(name) === undefined);
    if (this.slicing === undefined) {
      for (const entry of this.index.entries()) judge(entry);
      gone().forEach((name) => this.rejudge(name));
      return;
    }
    const slicing = this.slicing;
    this.passing = (async () => {
      if (await inSlices(this.index.entries(), judge, slicing, wanted)) gone().forEach((name) => this.rejudge(name));
    })().catch((error: unknown) => this.failure(error));
  }

  /** Hands what a judgement threw to the `failed` handler and counts it; without one, throws it. */
  private failure(error: unknown): void {
    if (this.failed === undefined) throw error;
    this.failedJudgements++;
    this.failed(error);
  }

  /** Judges `name` before touching the counts, so that a judgement that throws leaves them as they were. */
  private rejudge(name: string): void {
    const pool = this.index.get(name);
    this.judgements++;
    const found = pool === undefined ? [] : storedPoolViolations(pool, name, this.index).map(tally);
    this.account(name, -1);
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
