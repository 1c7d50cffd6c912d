/**
 * SpiderIPPool (`spiderpool.spidernet.io`, cluster-scoped): an IaaS pool's shape is fixed for
 * its life (design document, "IaaS 池分配模式" / IaaS pool allocation modes): "the validating
 * webhook rejects adding or removing spec.nodeName on an IaaS pool that already exists".
 * Its category (IaaS or traditional, the `ipam.spidernet.io/iaas-provider` annotation) is
 * fixed the same way. The whole IaaS pool shape is checked on CREATE and
 * UPDATE (pool-shape.ts, pool-pair.ts), ratcheted on UPDATE (ratchet.ts). A warning comes
 * when a default pool's category differs from the other default pools' (default-pools.ts),
 * traditional pools included. DELETE is not restricted.
 */
import type { AdmissionRequest } from '../kubernetes/schema.js';
import type { DualStack } from '../spiderpool/candidate-categories.js';
import { defaultPoolWarnings } from './default-pools.js';
import { unsyncedRefusal, type PoolDirectory, type UnsyncedPools } from './pool-pair.js';
import { judgePool } from './pool-judgement.js';
import { SPIDERIPPOOL_RULES } from './rule-names.js';
import { categoryChange } from './pool-rules/category.js';
import { fixedWhileInUse } from './pool-rules/in-use.js';
import { modeChange } from './pool-rules/mode.js';
import type { PoolRefusal } from './pool-rules/variables.js';
import { SPIDERIPPOOL, SpiderIPPoolSchema, iaasProvider, type SpiderIPPool } from '../spiderpool/pool.js';
import { ratchet } from './ratchet.js';
import type { Findings, Validator } from '../admission/contract.js';

/** What the rules say of one write: the refusals (none: allowed) and the warnings. */
export interface PoolJudgement {
  refused: PoolRefusal[];
  warnings: string[];
}

/** The judgement as a validator's findings: the refusals' field errors and rules, and the warnings. */
function findings({ refused, warnings }: PoolJudgement): Findings {
  return { errors: refused.map((r) => r.error), warnings, errorRules: refused.map((r) => r.rule) };
}

const poolName = (pool: SpiderIPPool, request: AdmissionRequest): string => pool.metadata.name ?? request.name ?? '';

/**
 * The refusals, each with its rule, and the warnings of a write of pool `name` (denied with
 * 422 `Invalid`, one cause per field; the rule of each refusal is read by `review`'s policy note).
 * - CREATE (`oldPool` undefined): an IaaS pool gets every shape rule (non-empty provider, one
 *   node, a valid parent NIC on node pools, dual-stack pairs checked against `pools`);
 *   traditional pools are warned only as a default pool of another category (default-pools.ts).
 * - UPDATE: the IaaS annotation added or removed, "has a non-empty spec.nodeName" changed
 *   (both `FieldValueForbidden`), a shape rule newly or worse broken (ratcheting: one carried
 *   over is a warning), or the provider or parent-NIC annotation removed or changed while
 *   addresses are in use (that annotation's only cause). Moving a node pool to another node is allowed.
 */
export function judgeSpiderIPPoolWrite(
  oldPool: SpiderIPPool | undefined,
  pool: SpiderIPPool,
  name: string,
  pools: PoolDirectory,
  dualStack: DualStack = NO_DUAL_STACK,
  unsynced: UnsyncedPools = 'Warn',
): PoolJudgement {
  const defaults = defaultPoolWarnings(pool, name, pools, dualStack);
  const write = oldPool === undefined ? undefined : { old: oldPool, pool, name };
  const fixed = write === undefined ? [] : fixedWhileInUse(write);
  // One cause per annotation: a change refused because the pool is in use is not refused again by another rule.
  const fixedFields = fixed.map((r) => r.error.field);
  const others = (refusals: readonly (PoolRefusal | undefined)[]) =>
    refusals.filter((r): r is PoolRefusal => r !== undefined && !fixedFields.includes(r.error.field));
  const transitions = write === undefined ? [] : [categoryChange(write), iaasProvider(write.old) !== undefined ? modeChange(write) : undefined];
  const refused = [...fixed, ...others(transitions)];
  if (iaasProvider(pool) === undefined) return { refused, warnings: defaults };
  const found = judgePool(pool, name, pools);
  const existing = oldPool === undefined || iaasProvider(oldPool) === undefined ? [] : judgePool(oldPool, name, pools).violations;
  const ratcheted = ratchet(found.violations, existing);
  const notSynced = unsyncedRefusal(pools, unsynced);
  const cache: PoolRefusal[] = notSynced === undefined ? [] : [{ rule: 'pair-unsynced', error: notSynced }];
  return { refused: [...refused, ...others(ratcheted.refused), ...cache], warnings: [...ratcheted.warnings, ...found.warnings, ...defaults] };
}

/** Without a ConfigMap cache: whether dual-stack is on is not known. */
const NO_DUAL_STACK: DualStack = { known: false, reason: 'spiderpool-conf is not known' };

/**
 * The SpiderIPPool guard: CREATE and UPDATE (DELETE is not restricted), reading sibling
 * pools from `pools` and the dual-stack setting from `dualStack` (memory only: the review
 * stays pure and never waits on the API); `unsynced` says whether an IaaS pool write is
 * refused (`pair-unsynced`) or warned while `pools` is unavailable.
 */
export function spiderIPPoolValidator(
  pools: PoolDirectory,
  dualStack: () => DualStack = () => NO_DUAL_STACK,
  unsynced: UnsyncedPools = 'Warn',
): Validator<SpiderIPPool> {
  return {
    groupKind: SPIDERIPPOOL,
    schema: SpiderIPPoolSchema,
    rules: SPIDERIPPOOL_RULES,
    validateCreate: (pool, request) => findings(judgeSpiderIPPoolWrite(undefined, pool, poolName(pool, request), pools, dualStack(), unsynced)),
    validateUpdate: (oldPool, pool, request) => findings(judgeSpiderIPPoolWrite(oldPool, pool, poolName(pool, request), pools, dualStack(), unsynced)),
  };
}

export { SPIDERIPPOOL, SpiderIPPoolSchema, type SpiderIPPool };
