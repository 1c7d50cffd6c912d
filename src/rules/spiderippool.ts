/**
 * SpiderIPPool (`spiderpool.spidernet.io`, cluster-scoped): an IaaS pool's shape is fixed for
 * its life (design document, "IaaS 池分配模式" / IaaS pool allocation modes): "the validating
 * webhook rejects adding or removing spec.nodeName on an IaaS pool that already exists".
 * Its category (IaaS or traditional, the `ipam.spidernet.io/iaas-provider` annotation) is
 * fixed the same way (issue #2). CREATE and DELETE are not restricted.
 */
import { z } from 'zod';
import { allowed, denied, invalidStatus, type GroupKind } from '../admission/response.js';
import type { AdmissionRequest, Verdict } from '../admission/schema.js';
import type { Validator } from '../admission/validator.js';
import { forbidden, type FieldError } from '../field/errors.js';
import { quoteShown } from '../field/quote.js';

/** Spiderpool's IP pool kind (cluster-scoped, served as `v2beta1`). */
export const SPIDERIPPOOL: GroupKind = { group: 'spiderpool.spidernet.io', kind: 'SpiderIPPool' };

/** Its presence marks an IaaS pool, whose addresses are cloud sub-ENIs the provider manages. */
export const IAAS_PROVIDER_ANNOTATION = 'ipam.spidernet.io/iaas-provider';

/** The SpiderIPPool fields the rules read; any other field, present or future, is ignored. */
export const SpiderIPPoolSchema = z.object({
  metadata: z.object({
    name: z.string().optional(),
    annotations: z.record(z.string(), z.string()).nullish(),
  }),
  spec: z
    .object({
      /** `[]string` with `omitempty`: absent, `null` and `[]` all mean "no node". */
      nodeName: z.array(z.string()).nullish(),
    })
    .nullish(),
});
export type SpiderIPPool = z.infer<typeof SpiderIPPoolSchema>;

/** The provider annotation's value, or `undefined` for a traditional pool. */
function iaasProvider(pool: SpiderIPPool): string | undefined {
  return pool.metadata.annotations?.[IAAS_PROVIDER_ANNOTATION];
}

function nodeNames(pool: SpiderIPPool): string[] {
  return pool.spec?.nodeName ?? [];
}

const WHY_MODE_IS_FIXED =
  "an IaaS pool's mode is fixed for its life: a node pool's addresses are sub-ENIs pre-warmed on its node, " +
  'a global pool allocates them on any node and keeps them there as a cache, and switching would strand those allocations';

const WHY_CATEGORY_IS_FIXED =
  "a pool's category is fixed for its life: an IaaS pool's addresses are cloud sub-ENIs whose MAC and VLAN the IaaS " +
  "provider manages, a traditional pool's are not, and switching would leave allocated addresses managed by the wrong side";

/** Forbids turning a node pool into a global pool or the reverse; changing the node is fine. */
function modeChange(oldPool: SpiderIPPool, pool: SpiderIPPool, name: string): FieldError | undefined {
  const before = nodeNames(oldPool);
  const after = nodeNames(pool);
  if (before.length > 0 === after.length > 0) return undefined;
  const change = `changing spec.nodeName from ${showNodes(before)} to ${showNodes(after)}`;
  return before.length > 0
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
}

/** Forbids adding or removing the IaaS provider annotation; changing its value is fine. */
function categoryChange(oldPool: SpiderIPPool, pool: SpiderIPPool, name: string): FieldError | undefined {
  const before = iaasProvider(oldPool);
  const after = iaasProvider(pool);
  if ((before === undefined) === (after === undefined)) return undefined;
  const field = `metadata.annotations[${IAAS_PROVIDER_ANNOTATION}]`;
  return before !== undefined
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
}

/** How many node names a message lists before summarising the rest. */
const NODES_SHOWN = 3;

/** `none` or `["worker-1", "worker-2"]`, bounded so a hostile list cannot flood the message. */
function showNodes(nodes: readonly string[]): string {
  if (nodes.length === 0) return 'none';
  const shown = nodes.slice(0, NODES_SHOWN).map(quoteShown);
  if (nodes.length > NODES_SHOWN) shown.push(`… ${nodes.length - NODES_SHOWN} more`);
  return `[${shown.join(', ')}]`;
}

/**
 * UPDATE of a SpiderIPPool: denied (422 `Invalid`, one `FieldValueForbidden` cause per
 * field) when it adds or removes the IaaS annotation, or when the old object is an IaaS
 * pool and "has a non-empty spec.nodeName" differs between old and new. Everything else,
 * including moving a node pool to another node, is allowed.
 */
export function validateSpiderIPPoolUpdate(oldPool: SpiderIPPool, pool: SpiderIPPool, request: AdmissionRequest): Verdict {
  const name = pool.metadata.name ?? request.name ?? '';
  const errors = [categoryChange(oldPool, pool, name)];
  if (iaasProvider(oldPool) !== undefined) errors.push(modeChange(oldPool, pool, name));
  const refused = errors.filter((e): e is FieldError => e !== undefined);
  return refused.length > 0 ? denied(invalidStatus(SPIDERIPPOOL, name, refused)) : allowed();
}

/** SpiderIPPool guard: UPDATE only (CREATE and DELETE are not restricted by the design). */
export const spiderIPPoolValidator: Validator<SpiderIPPool> = {
  groupKind: SPIDERIPPOOL,
  schema: SpiderIPPoolSchema,
  validateUpdate: validateSpiderIPPoolUpdate,
};
