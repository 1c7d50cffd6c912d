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
import { forbidden, type FieldError } from '../kubernetes/field-errors.js';
import { quoteShown } from '../go/strconv-quote.js';
import type { AdmissionRequest } from '../kubernetes/schema.js';
import type { DualStack } from '../spiderpool/candidate-categories.js';
import { defaultPoolWarnings } from './default-pools.js';
import { unsyncedRefusal, type PoolDirectory, type UnsyncedPools } from './pool-pair.js';
import { judgePool } from './pool-judgement.js';
import { SPIDERIPPOOL_RULES } from './rule-names.js';
import type { SpiderIPPoolRule } from './rule-names.js';
import {
  IAAS_PROVIDER_ANNOTATION,
  PARENT_NIC_ANNOTATION,
  SPIDERIPPOOL,
  SpiderIPPoolSchema,
  allocations,
  annotation,
  annotationField,
  iaasProvider,
  nodeNames,
  showNodes,
  type SpiderIPPool,
} from '../spiderpool/pool.js';
import { ratchet } from './ratchet.js';
import type { Findings, Validator } from '../admission/contract.js';

/** One refusal of a SpiderIPPool write: the rule, and the field error it renders as. */
export interface PoolRefusal {
  rule: SpiderIPPoolRule;
  error: FieldError;
}

const WHY_MODE_IS_FIXED =
  "an IaaS pool's mode is fixed for its life: a node pool's addresses are sub-ENIs pre-warmed on its node, " +
  'a global pool allocates them on any node and keeps them there as a cache, and switching would strand those allocations';

const WHY_CATEGORY_IS_FIXED =
  "a pool's category is fixed for its life: an IaaS pool's addresses are cloud sub-ENIs whose MAC and VLAN the IaaS " +
  "provider manages, a traditional pool's are not, and switching would leave allocated addresses managed by the wrong side";

/** Forbids turning a node pool into a global pool or the reverse; changing the node is fine. */
function modeChange(oldPool: SpiderIPPool, pool: SpiderIPPool, name: string): PoolRefusal | undefined {
  const before = nodeNames(oldPool);
  const after = nodeNames(pool);
  if (before.length > 0 === after.length > 0) return undefined;
  const change = `changing spec.nodeName from ${showNodes(before)} to ${showNodes(after)}`;
  const error = before.length > 0
    ? forbidden(
        'spec.nodeName',
        `${change} would turn IaaS node pool ${quoteShown(name)} into a global pool, but ${WHY_MODE_IS_FIXED}; ` +
          'to make it a global pool, delete it once no Pod uses it and create it again without spec.nodeName',
      )
    : forbidden(
        'spec.nodeName',
        `${change} would turn IaaS global pool ${quoteShown(name)} into a node pool, but ${WHY_MODE_IS_FIXED}; ` +
          'to pin it to a node, delete it once no Pod uses it and create it again with spec.nodeName',
      );
  return { rule: 'mode-fixed', error };
}

/** Forbids adding or removing the IaaS provider annotation; changing its value is fine. */
function categoryChange(oldPool: SpiderIPPool, pool: SpiderIPPool, name: string): PoolRefusal | undefined {
  const before = iaasProvider(oldPool);
  const after = iaasProvider(pool);
  if ((before === undefined) === (after === undefined)) return undefined;
  const field = annotationField(IAAS_PROVIDER_ANNOTATION);
  const error = before !== undefined
    ? forbidden(
        field,
        `removing the annotation (was ${quoteShown(before)}) would turn IaaS pool ${quoteShown(name)} into a ` +
          `traditional pool, but ${WHY_CATEGORY_IS_FIXED}; delete the pool once no Pod uses it and create it again without the annotation`,
      )
    : forbidden(
        field,
        `adding the annotation (${quoteShown(after!)}) would turn traditional pool ${quoteShown(name)} into an ` +
          `IaaS pool, but ${WHY_CATEGORY_IS_FIXED}; create a new pool with the annotation instead`,
      );
  return { rule: 'category-fixed', error };
}

/**
 * Spiderpool's IaaS-pool webhook (spidernet-io/spiderpool PR #5778, "annotations fixed while in use"): while the
 * stored IaaS pool has addresses allocated, its provider and parent-NIC annotations may
 * be neither removed nor changed, one `Forbidden` per annotation: the sub-ENIs behind
 * those addresses were made by that provider on that NIC. Adding a parent NIC that was
 * absent is not a change of either. Without allocations both may change.
 */
function fixedWhileInUse(oldPool: SpiderIPPool, pool: SpiderIPPool, name: string): PoolRefusal[] {
  const provider = iaasProvider(oldPool);
  const inUse = allocations(oldPool);
  if (provider === undefined || inUse === undefined) return [];
  const nic = annotation(oldPool, PARENT_NIC_ANNOTATION);
  const madeBy = () => `the sub-ENIs already attached for its Pods were made by provider ${quoteShown(provider)}${nic === undefined ? '' : ` on NIC ${quoteShown(nic)}`}`;
  const refused: PoolRefusal[] = [];
  for (const [key, rule] of IN_USE_RULES) {
    const before = annotation(oldPool, key);
    const after = annotation(pool, key);
    if (before === undefined || before === after) continue;
    const change = after === undefined ? `removing the annotation (was ${quoteShown(before)})` : `changing the annotation from ${quoteShown(before)} to ${quoteShown(after)}`;
    const instead = after === undefined ? 'without the annotation' : `with ${quoteShown(after)}`;
    const detail =
      `${change} is refused while IaaS pool ${quoteShown(name)} has addresses in use (${inUse}): ${madeBy()}, and would be left ` +
      `to a provider or NIC that did not make them; move the Pods off this pool first, or create a new pool ${instead}`;
    refused.push({ rule, error: forbidden(annotationField(key), detail) });
  }
  return refused;
}

/** The annotations fixed while a pool is in use, each with its rule. */
const IN_USE_RULES = [
  [IAAS_PROVIDER_ANNOTATION, 'provider-fixed-in-use'],
  [PARENT_NIC_ANNOTATION, 'parent-nic-fixed-in-use'],
] as const;

/** What the rules say of one write: the refusals (none: allowed) and the warnings. */
export interface PoolJudgement {
  refused: PoolRefusal[];
  warnings: string[];
}

/** The judgement as a validator's findings: the refusals' field errors and rules, and the warnings. */
function findings({ refused, warnings }: PoolJudgement): Findings {
  return { errors: refused.map((r) => r.error), warnings, refusedBy: [...new Set(refused.map((r) => r.rule))] };
}

const poolName = (pool: SpiderIPPool, request: AdmissionRequest): string => pool.metadata.name ?? request.name ?? '';

/**
 * CREATE of a SpiderIPPool: an IaaS pool gets every shape rule (non-empty provider,
 * one node, a valid parent NIC on node pools, dual-stack pairs checked against `pools`);
 * traditional pools are allowed, warned only as a default pool of another category than the
 * other default pools (default-pools.ts). Denied with 422 `Invalid`, one cause per field.
 */
export function validateSpiderIPPoolCreate(pool: SpiderIPPool, request: AdmissionRequest, pools: PoolDirectory, dualStack: DualStack = NO_DUAL_STACK): Findings {
  return findings(judgeSpiderIPPoolWrite(undefined, pool, poolName(pool, request), pools, dualStack));
}

/**
 * UPDATE of a SpiderIPPool: denied (422 `Invalid`, one cause per field) when it adds or
 * removes the IaaS annotation, when the old object is an IaaS pool and "has a non-empty
 * spec.nodeName" differs between old and new (both `FieldValueForbidden`), or when the
 * new IaaS pool breaks a shape rule that the old one did not break, or breaks it
 * worse (ratcheting; a violation carried over is a warning), or when it removes or
 * changes the provider or parent-NIC annotation of a pool with addresses in use
 * (`FieldValueForbidden`, that annotation's only cause). Moving a node pool to another
 * node is allowed.
 */
export function validateSpiderIPPoolUpdate(
  oldPool: SpiderIPPool,
  pool: SpiderIPPool,
  request: AdmissionRequest,
  pools: PoolDirectory,
  dualStack: DualStack = NO_DUAL_STACK,
): Findings {
  return findings(judgeSpiderIPPoolWrite(oldPool, pool, poolName(pool, request), pools, dualStack));
}

/**
 * The refusals, each with its rule, and the warnings of a CREATE (`oldPool` undefined) or
 * UPDATE of pool `name`: what {@link validateSpiderIPPoolCreate} and
 * {@link validateSpiderIPPoolUpdate} decide, with the rule of each refusal (their
 * `refusedBy`, which `review`'s policy note reads from the review's outcome).
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
  const fixed = oldPool === undefined ? [] : fixedWhileInUse(oldPool, pool, name);
  // One cause per annotation: a change refused because the pool is in use is not refused again by another rule.
  const fixedFields = fixed.map((r) => r.error.field);
  const others = (refusals: readonly (PoolRefusal | undefined)[]) =>
    refusals.filter((r): r is PoolRefusal => r !== undefined && !fixedFields.includes(r.error.field));
  const transitions =
    oldPool === undefined ? [] : [categoryChange(oldPool, pool, name), iaasProvider(oldPool) !== undefined ? modeChange(oldPool, pool, name) : undefined];
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
export function spiderIPPoolValidator(pools: PoolDirectory, dualStack: () => DualStack = () => NO_DUAL_STACK, unsynced: UnsyncedPools = 'Warn'): Validator<SpiderIPPool> {
  return {
    groupKind: SPIDERIPPOOL,
    schema: SpiderIPPoolSchema,
    rules: SPIDERIPPOOL_RULES,
    validateCreate: (pool, request) => findings(judgeSpiderIPPoolWrite(undefined, pool, poolName(pool, request), pools, dualStack(), unsynced)),
    validateUpdate: (oldPool, pool, request) => findings(judgeSpiderIPPoolWrite(oldPool, pool, poolName(pool, request), pools, dualStack(), unsynced)),
  };
}

export { IAAS_PROVIDER_ANNOTATION, SPIDERIPPOOL, SpiderIPPoolSchema, type SpiderIPPool };
