/**
 * `provider-fixed-in-use`, `parent-nic-fixed-in-use` (Spiderpool's IaaS-pool webhook,
 * spidernet-io/spiderpool PR #5778, "annotations fixed while in use"): while the stored IaaS
 * pool has addresses allocated, its provider and parent-NIC annotations may be neither
 * removed nor changed, one `Forbidden` per annotation: the sub-ENIs behind those addresses
 * were made by that provider on that NIC. Adding a parent NIC that was absent is not a
 * change of either. Without allocations both may change.
 */
import type { SpiderIPPoolRule } from '../rule-names.js';
import {
  IAAS_PROVIDER_ANNOTATION,
  PARENT_NIC_ANNOTATION,
  allocations,
  annotation,
  annotationField,
  iaasProvider,
  type PoolAnnotation,
} from '../../spiderpool/pool.js';
import {
  causeError,
  causePlain,
  celString,
  either,
  literal,
  text,
  twinMessage,
  type Cause,
  type CelVariable,
  type Condition,
  type Hole,
  type PolicyTwin,
} from './cel.js';
import { annotationShown, annotationShownVariables, hasAnnotationCel, nameShown, newPool, oldPool, type PoolRefusal, type Write } from './variables.js';

// What JSON.parse reads as nothing, and `String.prototype.trim`'s whitespace (allocations in pool.ts), in RE2.
const UNICODE_SPACE = String.raw`[\t\n\v\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]`;
const QUOTED_SPACE = String.raw`[ \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]`;
const JSON_SPACE = String.raw`[\t\n\r ]`;
const NUMBER = String.raw`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`;
const NOTHING = String.raw`(null|true|false|${NUMBER}|\{[\t\n\r ]*\}|\[[\t\n\r ]*\])`;
const NOTHING_QUOTED = String.raw`(null|true|false|${NUMBER}|\{ *\}|\[ *\])`;

/**
 * The stored pool has addresses in use (src/spiderpool/pool.ts, allocations): a positive
 * status.allocatedIPCount, or a status.allocatedIPs that is not blank and not JSON for nothing.
 */
const IN_USE_VARIABLES: readonly CelVariable[] = [
  { name: 'allocatedIPCount', expression: 'oldObject != null ? oldObject.?status.?allocatedIPCount.orValue(0) : 0' },
  { name: 'allocatedIPs', expression: "oldObject != null ? oldObject.?status.?allocatedIPs.orValue('') : ''" },
  {
    name: 'inUse',
    why:
      'JSON for nothing: null, true, false, a number, {}, [], or such a value quoted once; matched up to 256 characters ' +
      '(a match costs more as the text grows), a longer text counts as in use, as every real one is.',
    expression:
      'variables.oldIsIaas && (variables.allocatedIPCount > 0 || size(variables.allocatedIPs) > 256 || ' +
      `!variables.allocatedIPs.matches(r'''^(${UNICODE_SPACE}*|${JSON_SPACE}*(${NOTHING}|"(${QUOTED_SPACE}*| *${NOTHING_QUOTED} *)")${JSON_SPACE}*)$'''))`,
  },
  {
    name: 'inUseShown',
    expression: "variables.allocatedIPCount > 0 ? 'status.allocatedIPCount ' + string(variables.allocatedIPCount) : 'status.allocatedIPs not empty'",
  },
  ...annotationShownVariables(IAAS_PROVIDER_ANNOTATION),
  ...annotationShownVariables(PARENT_NIC_ANNOTATION),
];

const inUseShown: Hole<Write> = { ts: (w) => allocations(w.old) ?? '', cel: 'variables.inUseShown' };

const hadNic: Condition<Write> = { ts: (w) => annotation(w.old, PARENT_NIC_ANNOTATION) !== undefined, cel: hasAnnotationCel('old', PARENT_NIC_ANNOTATION) };

const providerBefore = annotationShown('old', IAAS_PROVIDER_ANNOTATION, oldPool);

const madeBy = text<Write>`the sub-ENIs already attached for its Pods were made by provider ${providerBefore}${either(
  hadNic,
  text` on NIC ${annotationShown('old', PARENT_NIC_ANNOTATION, oldPool)}`,
  literal(''),
)}`;

const LEFT_TO_OTHERS = literal<Write>('and would be left to a provider or NIC that did not make them');
const MOVE_PODS = literal<Write>('move the Pods off this pool first, or create a new pool ');

/** The cause for annotation `key` fixed while in use. */
function inUseCause(key: PoolAnnotation): Cause<Write> {
  const [before, after] = [annotationShown('old', key, oldPool), annotationShown('new', key, newPool)];
  const removed: Condition<Write> = { ts: (w) => annotation(w.pool, key) === undefined, cel: `!(${hasAnnotationCel('new', key)})` };
  const change = either(removed, text`removing the annotation (was ${before})`, text`changing the annotation from ${before} to ${after}`);
  const instead = text`${MOVE_PODS}${either(removed, literal('without the annotation'), text`with ${after}`)}`;
  return {
    type: 'FieldValueForbidden',
    field: literal(annotationField(key)),
    detail: text`${change} is refused while IaaS pool ${nameShown} has addresses in use (${inUseShown}): ${madeBy}, ${LEFT_TO_OTHERS}; ${instead}`,
  };
}

/** A twin of the in-use rule of annotation `key`. */
function inUseTwin(rule: SpiderIPPoolRule, key: PoolAnnotation, variable: string): PolicyTwin {
  const k = celString(key);
  const same = `variables.newAnnotations[${k}] == variables.oldAnnotations[${k}]`;
  return {
    rule,
    variable,
    field: annotationField(key),
    variables: IN_USE_VARIABLES,
    broken: `variables.inUse && ${hasAnnotationCel('old', key)} && !(${hasAnnotationCel('new', key)} && ${same})`,
    messageExpression: twinMessage(variable, inUseCause(key)),
    message: causePlain(inUseCause(key)),
  };
}

/** The annotations fixed while a pool is in use, each with its rule, in the webhook's order. */
const IN_USE_RULES = [
  [IAAS_PROVIDER_ANNOTATION, 'provider-fixed-in-use'],
  [PARENT_NIC_ANNOTATION, 'parent-nic-fixed-in-use'],
] as const;

export const PROVIDER_FIXED_IN_USE = inUseTwin('provider-fixed-in-use', IAAS_PROVIDER_ANNOTATION, 'inUseProviderChanged');
export const PARENT_NIC_FIXED_IN_USE = inUseTwin('parent-nic-fixed-in-use', PARENT_NIC_ANNOTATION, 'inUseParentNicChanged');

/** The refusals, each with its rule, of removing or changing an annotation fixed while the stored pool `w.old` is in use. */
export function fixedWhileInUse(w: Write): PoolRefusal[] {
  if (iaasProvider(w.old) === undefined || allocations(w.old) === undefined) return [];
  return IN_USE_RULES.filter(([key]) => {
    const before = annotation(w.old, key);
    return before !== undefined && before !== annotation(w.pool, key);
  }).map(([key, rule]) => ({ rule, error: causeError(inUseCause(key), w) }));
}
