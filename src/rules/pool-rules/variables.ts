/**
 * What every policy twin reads of a SpiderIPPool write, as CEL variables, and the values
 * messages show, as holes that both judges fill (cel.ts). Every field is read with optional
 * selection (`?.`, `orValue`) or after an `in` test, so an absent field is never an
 * evaluation error (failurePolicy Fail would turn one into a refusal); `oldObject` is null on CREATE.
 */
import { quoteShown } from '../../go/strconv-quote.js';
import type { FieldError } from '../../kubernetes/field-errors.js';
import type { SpiderIPPoolRule } from '../rule-names.js';
import { annotation, nodeNames, showNodes, type PoolAnnotation, type SpiderIPPool } from '../../spiderpool/pool.js';
import { bothSides, celString, sided, type CelVariable, type Hole, type Side } from './cel.js';

/** The message values shown at most this many characters long, as quoteShown does. */
const SHOWN_CHARS = 256;

/** An annotation's value on `side`, '' when absent: a CEL string. */
export const annotationCel = (side: Side, key: string): string => `${sided(side, 'Annotations')}[?${celString(key)}].orValue('')`;

/** Whether `side` carries annotation `key`: a CEL bool. */
export const hasAnnotationCel = (side: Side, key: string): string => `${celString(key)} in ${sided(side, 'Annotations')}`;

/** The CEL variable name part of an annotation key: `ipam.spidernet.io/parent-nic` → `ParentNic`. */
const keyName = (key: string): string =>
  key
    .split('/')
    .pop()!
    .split('-')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** A string quoted as strings.quote does, cut to {@link SHOWN_CHARS} characters. */
const shownCel = (value: string): string =>
  `${value}.size() > ${SHOWN_CHARS} ? strings.quote(${value}.substring(0, ${SHOWN_CHARS})) + '…' : strings.quote(${value})`;

/** The shared variables, in the order the policy defines them. */
export const SHARED_VARIABLES: readonly CelVariable[] = [
  { name: 'newAnnotations', expression: 'object.metadata.?annotations.orValue({})' },
  { name: 'oldAnnotations', expression: 'oldObject != null ? oldObject.metadata.?annotations.orValue({}) : {}' },
  ...bothSides(
    'IsIaas',
    (side) => hasAnnotationCel(side, 'ipam.spidernet.io/iaas-provider'),
    'An IaaS pool carries the provider annotation, whatever its value.',
  ),
  {
    name: 'newNodes',
    expression: 'object.?spec.?nodeName.orValue([])',
    why: 'spec.nodeName is a list; absent, null (pruned by the API server) and [] are all "no node".',
  },
  { name: 'oldNodes', expression: 'oldObject != null ? oldObject.?spec.?nodeName.orValue([]) : []' },
  { name: 'name', expression: 'strings.quote(object.metadata.name)' },
  ...bothSides(
    'NodesShown',
    (side) =>
      `size(${sided(side, 'Nodes')}) == 0 ? 'none' : '[' + ` +
      `[0, 1, 2].filter(i, i < size(${sided(side, 'Nodes')})).map(i, strings.quote(${sided(side, 'Nodes')}[i])).join(', ') + ` +
      `(size(${sided(side, 'Nodes')}) > 3 ? ', … ' + string(size(${sided(side, 'Nodes')}) - 3) + ' more' : '') + ']'`,
    'spec.nodeName as messages show it (showNodes): at most three entries.',
  ),
];

/** The shown value of annotation `key` on both sides, quoted and cut: `<side><Key>Shown`. */
export function annotationShownVariables(key: string): CelVariable[] {
  return bothSides(
    `${keyName(key)}Shown`,
    (side) => shownCel(annotationCel(side, key)),
    `${key} as messages show it: quoted, at most ${SHOWN_CHARS} characters.`,
  );
}

/** The pool's name, quoted: a hole of any context with the name. */
export const nameShown: Hole<{ name: string }> = { ts: (c) => quoteShown(c.name), cel: 'variables.name' };

/** The nodes of the pool `pool(c)` on `side`, as {@link showNodes} shows them. */
export function nodesShown<C>(side: Side, pool: (c: C) => SpiderIPPool): Hole<C> {
  return { ts: (c) => showNodes(nodeNames(pool(c))), cel: sided(side, 'NodesShown') };
}

/** Annotation `key` of the pool `pool(c)` on `side`, quoted (needs {@link annotationShownVariables}). */
export function annotationShown<C>(side: Side, key: PoolAnnotation, pool: (c: C) => SpiderIPPool): Hole<C> {
  return { ts: (c) => quoteShown(annotation(pool(c), key) ?? ''), cel: sided(side, `${keyName(key)}Shown`) };
}

/** One refusal of a SpiderIPPool write: the rule, and the field error it renders as. */
export interface PoolRefusal {
  rule: SpiderIPPoolRule;
  error: FieldError;
}

/** A write as the transition rules see it: the stored pool, the new one, and the pool's name. */
export interface Write {
  old: SpiderIPPool;
  pool: SpiderIPPool;
  name: string;
}

/** The stored pool of a write. */
export const oldPool = (w: Write): SpiderIPPool => w.old;

/** The new pool of a write. */
export const newPool = (w: Write): SpiderIPPool => w.pool;

/**
 * The SpiderIPPool webhook's and the policy's match condition: only writes where the old or the
 * new object is an IaaS pool (oldObject is null on CREATE, hence the null test first).
 */
export const IAAS_POOL_MATCH_CONDITION = {
  name: 'old-or-new-object-is-iaas-pool',
  expression:
    "(oldObject != null && has(oldObject.metadata.annotations) && 'ipam.spidernet.io/iaas-provider' in oldObject.metadata.annotations) || " +
    "(has(object.metadata.annotations) && 'ipam.spidernet.io/iaas-provider' in object.metadata.annotations)",
} as const;
