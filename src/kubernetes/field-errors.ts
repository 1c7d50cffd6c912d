import { quoteShown } from '../go/strconv-quote.js';

/**
 * One refused field, as Kubernetes' `field.Error` (k8s.io/apimachinery/pkg/util/validation/field).
 * `type` is the value Kubernetes puts in `status.details.causes[].reason`.
 */
export interface FieldError {
  type: 'FieldValueForbidden' | 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueTooMany';
  /** Field path as Kubernetes writes it: `spec.nodeName`, `data[conf.yml].iaasNetworkProvider.httpRequestTimeout`. */
  field: string;
  /** The value as written, shown only when present: `%q`-quoted for `Invalid`, as is for `TooMany` (a count). */
  badValue?: string;
  /** What was refused, why, and what to do instead: one line, standing alone. */
  detail: string;
}

/** `field.Forbidden`: the field may not be set or changed this way. */
export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

/** `field.Invalid`: the value is wrong; pass `badValue` to show it as written. */
export function invalid(field: string, badValue: string | undefined, detail: string): FieldError {
  return badValue === undefined ? { type: 'FieldValueInvalid', field, detail } : { type: 'FieldValueInvalid', field, badValue, detail };
}

/** `field.Required`: the field must be present. */
export function required(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, detail };
}

/**
 * `field.TooMany`: a list holds more items than allowed. Kubernetes' detail is
 * `must have at most <max> items`; `why` (what the bound protects, what to do instead)
 * follows it.
 */
export function tooMany(field: string, actualQuantity: number, maxQuantity: number, why: string): FieldError {
  return { type: 'FieldValueTooMany', field, badValue: String(actualQuantity), detail: `must have at most ${maxQuantity} items; ${why}` };
}

const TYPE_WORDS: Record<FieldError['type'], string> = {
  FieldValueForbidden: 'Forbidden',
  FieldValueInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueTooMany: 'Too many',
};

/**
 * The cause message, as `field.Error.ErrorBody()`: `Forbidden: <detail>`,
 * `Invalid value: "100s": <detail>` or `Too many: 70000: <detail>`.
 * kubectl prints `<field>: <this>` for each cause of an `Invalid` status.
 */
export function fieldErrorBody(e: FieldError): string {
  let body = TYPE_WORDS[e.type];
  if (e.type === 'FieldValueInvalid' && e.badValue !== undefined) body += `: ${quoteShown(e.badValue)}`;
  if (e.type === 'FieldValueTooMany' && e.badValue !== undefined) body += `: ${e.badValue}`;
  return e.detail === '' ? body : `${body}: ${e.detail}`;
}

/** `field.Error.Error()`: `<field>: <body>`. */
export function fieldErrorString(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/**
 * The aggregate text Kubernetes puts after `is invalid: ` (`utilerrors.NewAggregate`):
 * the one message alone, or `[a, b]` for several, duplicates dropped.
 */
export function aggregateFieldErrors(errors: readonly FieldError[]): string {
  const messages = [...new Set(errors.map(fieldErrorString))];
  return messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`;
}

/**
 * Longest warning, in characters, that stays whole and on one line for the person who
 * applied (developer guide: warnings are under 256 characters).
 */
export const MAX_WARNING_CHARS = 255;

/** A warning about one field: accepted, but worth the user's attention. */
export interface FieldWarning {
  field: string;
  message: string;
}

/** The warning text returned to the user, in the same `<field>: <message>` form as errors. */
export function fieldWarningString(w: FieldWarning): string {
  return `${w.field}: ${w.message}`;
}

/**
 * Re-roots field paths under `prefix`, e.g. `iaasNetworkProvider.x` →
 * `data[conf.yml].iaasNetworkProvider.x`, and `""` (the whole value) → `data[conf.yml]`.
 */
export function underField<T extends { field: string }>(prefix: string, items: readonly T[]): T[] {
  return items.map((item) => ({ ...item, field: item.field === '' ? prefix : `${prefix}.${item.field}` }));
}
