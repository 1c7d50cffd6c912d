/**
 * What a guarded kind provides (after controller-runtime's `CustomValidator`): the kind, the
 * schema of the fields it reads, and a pure `validate*` per operation returning what it
 * found, field errors and warnings (controller-runtime's `(Warnings, error)`). Rules never
 * build responses: the generic dispatch (src/admission/validator.ts) decodes the objects,
 * calls these, and turns errors into the `Invalid` status with the validator's GroupKind,
 * as controller-runtime's adapter calls `apierrors.NewInvalid`.
 */
import type { z } from 'zod';
import type { FieldError } from '../kubernetes/field-errors.js';
import type { GroupKind } from '../kubernetes/resources.js';
import type { AdmissionRequest } from '../kubernetes/schema.js';

/** What a validator found: any field error refuses the write; warnings never do (kubectl prints each as `Warning: <text>`). */
export interface Findings {
  errors: readonly FieldError[];
  warnings: readonly string[];
  /**
   * The rules whose errors `errors` are, each once, in the order of their first error
   * (names from the validator's `rules`): empty exactly when `errors` is. The server
   * counts refusals by them (`spiderpool_iaas_webhook_refusals_total{rule}`).
   */
  refusedBy: readonly string[];
}

/** Findings with no error: the write is allowed, with `warnings`. */
export function warningsOnly(warnings: readonly string[] = []): Findings {
  return { errors: [], warnings, refusedBy: [] };
}

/**
 * One guarded kind; an operation without its `validate*` is allowed. The `validate*` are
 * function properties, not methods, so their parameters are checked contravariantly: a
 * `validate*` taking another type than `schema` decodes does not typecheck.
 */
export interface Validator<T> {
  /** The kind it guards; requests are routed by `request.kind` group and kind, any version. */
  groupKind: GroupKind;
  /** The fields it reads; other fields are ignored, so any future field is tolerated. */
  schema: z.ZodType<T>;
  /**
   * Every rule its findings' `refusedBy` can name (a fixed list: the `rule` label of the
   * refusal counter); absent for a validator that only warns.
   */
  rules?: readonly string[];
  /** CREATE: `object` is the object to be created. */
  validateCreate?: (object: T, request: AdmissionRequest) => Findings;
  /** UPDATE: `oldObject` as stored, `object` as it would be stored. */
  validateUpdate?: (oldObject: T, object: T, request: AdmissionRequest) => Findings;
  /** DELETE: `oldObject` as stored. */
  validateDelete?: (oldObject: T, request: AdmissionRequest) => Findings;
}

/**
 * A {@link Validator} of some object type, the type hidden (an existential type), so that
 * validators of different object types share one registry: `open` hands the validator to a
 * function generic in its type, so its schema and its `validate*` can only be used together.
 * Made by {@link someValidator} alone.
 */
export interface SomeValidator {
  readonly groupKind: GroupKind;
  /** The validator's schema, its output type hidden. */
  readonly schema: z.ZodType<unknown>;
  readonly rules?: readonly string[];
  open<R>(use: <T>(validator: Validator<T>) => R): R;
}

/** `validator` with its object type hidden; `T` is inferred, so a schema and `validate*` of different types fail here. */
export function someValidator<T>(validator: Validator<T>): SomeValidator {
  return { groupKind: validator.groupKind, schema: validator.schema, ...(validator.rules ? { rules: validator.rules } : {}), open: (use) => use(validator) };
}
