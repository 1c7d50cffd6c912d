/**
 * One statement of a rule for both of its judges: the webhook (TypeScript) and the
 * ValidatingAdmissionPolicy (CEL, run inside the API server). A message is written once as a
 * template whose holes know how the webhook computes a value and which CEL expression gives the
 * same text; a policy twin is the CEL that is true when a write breaks the rule
 * (docs/adr/0008-one-source-per-rule-cel.md).
 */
import { fieldErrorBody, forbidden, invalid, required, type FieldError } from '../../kubernetes/field-errors.js';
import type { SpiderIPPoolRule } from '../rule-names.js';

/** A piece of message text: as the webhook computes it from context `C`, and as a CEL string expression. */
export interface Hole<C> {
  readonly ts: (c: C) => string;
  readonly cel: string;
  /** The text without values (`…` for each), for the policy's static `message`. */
  readonly plain?: string;
  /** Set when the piece is fixed text: adjacent ones are joined into one CEL literal. */
  readonly literal?: string;
  /** The pieces of a template, spliced into a template that holds it. */
  readonly pieces?: readonly Hole<C>[];
}

const plainOf = <C>(hole: Hole<C>): string => hole.plain ?? '…';

/** A condition: as the webhook decides it, and as a CEL bool expression. */
export interface Condition<C> {
  readonly ts: (c: C) => boolean;
  readonly cel: string;
}

/** `s` as a CEL string literal (single-quoted). */
export function celString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

/** A fixed piece of text. */
export function literal<C>(s: string): Hole<C> {
  return { ts: () => s, cel: celString(s), plain: s, literal: s };
}

/** A message template: literal text with holes, rendered by either judge. */
export function text<C>(parts: TemplateStringsArray, ...holes: readonly Hole<C>[]): Hole<C> {
  const pieces: Hole<C>[] = [];
  for (const piece of parts.flatMap((part, i) => [literal<C>(part), ...(i < holes.length ? (holes[i]!.pieces ?? [holes[i]!]) : [])])) {
    const last = pieces.at(-1);
    if (piece.literal === '') continue;
    if (last?.literal !== undefined && piece.literal !== undefined) pieces[pieces.length - 1] = literal(last.literal + piece.literal);
    else pieces.push(piece);
  }
  if (pieces.length === 1) return pieces[0]!;
  return {
    ts: (c) => pieces.map((p) => p.ts(c)).join(''),
    cel: pieces.length === 0 ? "''" : pieces.map((p) => p.cel).join(' + '),
    plain: pieces.map(plainOf).join(''),
    pieces,
  };
}

/** `yes` when `when` holds, else `no`. */
export function either<C>(when: Condition<C>, yes: Hole<C>, no: Hole<C>): Hole<C> {
  return { ts: (c) => (when.ts(c) ? yes.ts(c) : no.ts(c)), cel: `(${when.cel} ? ${yes.cel} : ${no.cel})`, plain: plainOf(yes) };
}

/** Kubernetes' words for a cause type (`Forbidden`, `Invalid value`), as the one renderer writes them. */
const typeWords = (type: FieldError['type']): string => fieldErrorBody({ type, field: '', detail: '' });

/**
 * One field error of a rule. `badValue` (Invalid only) is the value as written for the
 * webhook (its renderer quotes it) and the quoted, shown value in CEL.
 */
export interface Cause<C> {
  readonly type: 'FieldValueForbidden' | 'FieldValueInvalid' | 'FieldValueRequired';
  readonly field: Hole<C>;
  readonly badValue?: Hole<C>;
  readonly detail: Hole<C>;
}

/** The webhook's field error for `cause` in context `c`. */
export function causeError<C>(cause: Cause<C>, c: C): FieldError {
  const [field, detail] = [cause.field.ts(c), cause.detail.ts(c)];
  if (cause.type === 'FieldValueForbidden') return forbidden(field, detail);
  if (cause.type === 'FieldValueRequired') return required(field, detail);
  return invalid(field, cause.badValue?.ts(c), detail);
}

/** The same cause as a CEL string expression: `<field>: <Type>: [<value>: ]<detail>` (`fieldErrorString`). */
function causeCel<C>(cause: Cause<C>): string {
  const type = literal<C>(typeWords(cause.type));
  const { field, badValue, detail } = cause;
  return (badValue === undefined ? text<C>`${field}: ${type}: ${detail}` : text<C>`${field}: ${type}: ${badValue}: ${detail}`).cel;
}

/** The cause without values, one line: the policy's static `message`, shown if its messageExpression fails. */
export function causePlain<C>(cause: Cause<C>): string {
  return `${plainOf(cause.field)}: ${typeWords(cause.type)}: ${plainOf(cause.detail)}`;
}

/** A named CEL expression of the policy (`spec.variables[]`); `why`, when given, becomes its comment. */
export interface CelVariable {
  readonly name: string;
  readonly expression: string;
  readonly why?: string;
}

/**
 * A rule's twin in the ValidatingAdmissionPolicy: `broken` is true when the write breaks the
 * rule (it reads `variables.<name>` of the shared variables and its own), `cause` gives the
 * message, and `field` the field it refuses (one cause per annotation: see twins.ts).
 */
export interface PolicyTwin {
  readonly rule: SpiderIPPoolRule;
  /** The variable holding `broken`, a CEL identifier. */
  readonly variable: string;
  readonly field: string;
  readonly variables: readonly CelVariable[];
  readonly broken: string;
  /** The messageExpression (see {@link twinMessage}) and the static message ({@link causePlain}). */
  readonly messageExpression: string;
  readonly message: string;
}

/** The side of a write a pool rule reads: the new object, or the stored one. */
export type Side = 'new' | 'old';

/** `variables.<side><Name>`: a variable defined for both sides. */
export const sided = (side: Side, name: string): string => `variables.${side}${name}`;

/** Both sides of a variable: `<side><Name>` from `expression(side)`; `why` comments the first. */
export function bothSides(name: string, expression: (side: Side) => string, why?: string): CelVariable[] {
  return [
    { name: `new${name}`, expression: expression('new'), ...(why === undefined ? {} : { why }) },
    { name: `old${name}`, expression: expression('old') },
  ];
}

/**
 * A pool rule ratcheted as ratchet.ts does (KEP-4008): `newBroken` by the new IaaS pool, unless
 * `keptFromOld`: the stored IaaS pool broke it the same way and the write makes it no worse.
 */
export function ratcheted(newBroken: string, keptFromOld: string): string {
  return `variables.newIsIaas && ${newBroken} && !(variables.oldIsIaas && ${keptFromOld})`;
}

/** The message of a twin: `!variables.<v> ? '' : (<cause>)`, so that it is computed only when the rule fails. */
export function twinMessage<C>(variable: string, cause: Cause<C>): string {
  return `!variables.${variable} ? '' : ( ${causeCel(cause)})`;
}
