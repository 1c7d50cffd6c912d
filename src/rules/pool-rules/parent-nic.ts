/**
 * `parent-nic-missing`, `parent-nic-one`, `parent-nic-invalid` (rule 3 of the shape;
 * Spiderpool's IaaS-pool webhook, `validateIaasParentNic`): the parent NIC names one interface
 * on any IaaS pool; a node pool must name it, as a valid Linux interface name. On a global pool
 * the annotation has no meaning (its sub-ENIs go to whichever node a Pod runs on): a warning only.
 */
import { PARENT_NIC_ANNOTATION, annotation, annotationField, nodeNames, type SpiderIPPool } from '../../spiderpool/pool.js';
import type { Findings, Violation } from '../ratchet.js';
import { causeError, causePlain, celString, literal, ratcheted, text, twinMessage, type Cause, type CelVariable, type PolicyTwin } from './cel.js';
import { annotationShown, annotationShownVariables, hasAnnotationCel } from './variables.js';

/** The kernel's limit for an interface name, `IFNAMSIZ` minus the terminating NUL. */
const MAX_IFNAME_BYTES = 15;

/** Why a parent NIC is refused, as both judges word it. */
const WHY = {
  blank: 'is empty after trimming whitespace',
  comma: 'holds a ","',
  space: 'contains whitespace',
  dots: 'is not allowed as an interface name by Linux',
  chars: 'contains "/", ":", a NUL or whitespace, which Linux does not allow in an interface name',
  tooLong: ` bytes long, more than Linux allows for an interface name (${MAX_IFNAME_BYTES})`,
} as const;

/**
 * Why `name` is not a Linux interface name, or `undefined` when it is one. The rules are
 * the kernel's `dev_valid_name` (net/core/dev.c): 1-15 bytes, not `.` or `..`, and no
 * `/`, `:` or whitespace (`isspace`); a NUL byte cannot be part of a C string either.
 */
export function interfaceNameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0) return 'is empty';
  if (bytes > MAX_IFNAME_BYTES) return `is ${bytes}${WHY.tooLong}`;
  if (name === '.' || name === '..') return WHY.dots;
  if (/[/:\0 \t\n\v\f\r]/.test(name)) return WHY.chars;
  return undefined;
}

/**
 * Go's `unicode.IsSpace` (what `strings.TrimSpace` and `strings.Fields` use): JavaScript's
 * `\s` differs, adding U+FEFF and lacking U+0085.
 */
const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
/** Nothing but Go whitespace (or nothing at all): what `strings.TrimSpace` empties. */
const ONLY_GO_SPACE = new RegExp(`^${GO_SPACE.source}*$`, 'u');
/** {@link GO_SPACE} in RE2, for CEL. */
const GO_SPACE_RE2 = String.raw`[\t\n\v\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]`;

/**
 * Why `nic` does not name exactly one NIC, or `undefined` when it does (Spiderpool's
 * IaaS-pool webhook, `validateIaasParentNic`, on any IaaS pool): empty after Go's
 * `strings.TrimSpace`, a `,` (a comma is legal in a Linux interface name, so the kernel's
 * rule alone lets `eth0,eth1` through), or whitespace.
 */
export function oneNicProblem(nic: string): string | undefined {
  if (ONLY_GO_SPACE.test(nic)) return WHY.blank;
  if (nic.includes(',')) return WHY.comma;
  if (GO_SPACE.test(nic)) return WHY.space;
  return undefined;
}

const FIELD = annotationField(PARENT_NIC_ANNOTATION);
const NIC = `variables.newAnnotations[${celString(PARENT_NIC_ANNOTATION)}]`;
const HAS_NIC = hasAnnotationCel('new', PARENT_NIC_ANNOTATION);
/** A parent NIC longer than this is refused unread in CEL (no interface name is longer than 15 bytes; reading it would cost more). */
const READ_NIC_CHARS = 4096;

/** Why the new parent NIC is not one NIC (parentNicOneProblem) or no interface name (parentNicNameProblem), or '': as the two functions above. */
const NIC_VARIABLES: readonly CelVariable[] = [
  ...annotationShownVariables(PARENT_NIC_ANNOTATION),
  {
    name: 'parentNicOneProblem',
    expression:
      `!(${HAS_NIC}) ? '' : ${NIC}.size() > ${READ_NIC_CHARS} ? 'is longer than the ${READ_NIC_CHARS} characters this policy reads' : ` +
      `${NIC}.matches(r'^${GO_SPACE_RE2}*$') ? ${celString(WHY.blank)} : ${NIC}.contains(',') ? ${celString(WHY.comma)} : ` +
      `${NIC}.matches(r'${GO_SPACE_RE2}') ? ${celString(WHY.space)} : ''`,
  },
  {
    name: 'parentNicNameProblem',
    expression:
      `!(${HAS_NIC}) ? '' : bytes(${NIC}).size() > ${MAX_IFNAME_BYTES} ? 'is ' + string(bytes(${NIC}).size()) + ${celString(WHY.tooLong)} : ` +
      `${NIC} in ['.', '..'] ? ${celString(WHY.dots)} : ${NIC}.matches(r'[/:\\x00]') ? ${celString(WHY.chars)} : ''`,
  },
];

/** The end of every parent-NIC message: what to write. Short, as a ratcheted one becomes a warning. */
const ONE_NIC = 'write the one interface the sub-ENIs hang from (1-15 bytes; no "/", ":", "," or whitespace; not "." or ".."), e.g. eth0';

const nicOf = (pool: SpiderIPPool): string => annotation(pool, PARENT_NIC_ANNOTATION) ?? '';

/** An Invalid cause on the parent NIC, `problem` saying why. */
const nicInvalid = (problem: (nic: string) => string | undefined, cel: string): Cause<SpiderIPPool> => ({
  type: 'FieldValueInvalid',
  field: literal(FIELD),
  badValue: { ts: nicOf, cel: annotationShown<SpiderIPPool>('new', PARENT_NIC_ANNOTATION, (p) => p).cel },
  detail: text`${{ ts: (p) => problem(nicOf(p)) ?? '', cel }}; ${literal(ONE_NIC)}`,
});

const CAUSES: Record<'parent-nic-missing' | 'parent-nic-one' | 'parent-nic-invalid', Cause<SpiderIPPool>> = {
  'parent-nic-missing': {
    type: 'FieldValueRequired',
    field: literal(FIELD),
    detail: literal(
      'an IaaS node pool must name the interface on its node that its sub-ENIs hang from, or the provider cannot attach them ' +
        "and Pods fail at start; add the annotation with the node's parent interface, e.g. eth0",
    ),
  },
  'parent-nic-one': nicInvalid(oneNicProblem, 'variables.parentNicOneProblem'),
  'parent-nic-invalid': nicInvalid(interfaceNameProblem, 'variables.parentNicNameProblem'),
};

const violation = (rule: keyof typeof CAUSES, pool: SpiderIPPool, measure: string): Violation => ({
  rule,
  key: rule,
  measure,
  error: causeError(CAUSES[rule], pool),
});

/** Rule 3 for an IaaS pool: its parent-NIC violations, and the warning of a parent NIC on a global pool. */
export function parentNic(pool: SpiderIPPool): Findings {
  const nic = annotation(pool, PARENT_NIC_ANNOTATION);
  const nodePool = nodeNames(pool).length > 0;
  const warnings =
    !nodePool && nic !== undefined
      ? [`${FIELD}: has no meaning on a global pool (no spec.nodeName), whose sub-ENIs are attached on whichever node a Pod runs; it is ignored, remove it`]
      : [];
  if (nic === undefined) return { violations: nodePool ? [violation('parent-nic-missing', pool, '')] : [], warnings };
  if (oneNicProblem(nic) !== undefined) return { violations: [violation('parent-nic-one', pool, nic)], warnings };
  if (nodePool && interfaceNameProblem(nic) !== undefined) return { violations: [violation('parent-nic-invalid', pool, nic)], warnings };
  return { violations: [], warnings };
}

const hasNic = (side: 'new' | 'old') => hasAnnotationCel(side, PARENT_NIC_ANNOTATION);
const nicUnchanged = `${hasNic('new')} && ${hasNic('old')} && ${NIC} == variables.oldAnnotations[${celString(PARENT_NIC_ANNOTATION)}]`;

/** A twin of one of the parent-NIC rules; `broken` as {@link ratcheted}. */
function nicTwin(rule: keyof typeof CAUSES, variable: string, newBroken: string, keptFromOld: string): PolicyTwin {
  return {
    rule,
    variable,
    field: FIELD,
    variables: NIC_VARIABLES,
    broken: ratcheted(newBroken, keptFromOld),
    messageExpression: twinMessage(variable, CAUSES[rule]),
    message: causePlain(CAUSES[rule]),
  };
}

export const PARENT_NIC_MISSING = nicTwin(
  'parent-nic-missing',
  'parentNicMissing',
  `size(variables.newNodes) > 0 && !(${hasNic('new')})`,
  `size(variables.oldNodes) > 0 && !(${hasNic('old')})`,
);
// A violation of the parent NIC's value is carried over when the value is the same on both sides.
export const PARENT_NIC_ONE = nicTwin('parent-nic-one', 'parentNicNotOne', "variables.parentNicOneProblem != ''", nicUnchanged);
export const PARENT_NIC_INVALID = nicTwin(
  'parent-nic-invalid',
  'parentNicInvalid',
  "size(variables.newNodes) > 0 && variables.parentNicOneProblem == '' && variables.parentNicNameProblem != ''",
  `size(variables.oldNodes) > 0 && ${nicUnchanged}`,
);
