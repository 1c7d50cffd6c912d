/**
 * The one generic dispatch over a {@link Validator} (after controller-runtime's
 * `validatingHandler` and `validationResponseFromStatus`): decode the objects with the
 * resource's schema, call `validateCreate`, `validateUpdate` or `validateDelete` by
 * operation, and turn what it found into the decision: each cause gets its rule's
 * enforcement action (enforcement.ts), `Deny` causes make the `Invalid` status with the
 * validator's GroupKind (`apierrors.NewInvalid`), warnings kept.
 */
import type { FieldError } from '../kubernetes/field-errors.js';
import { firstIssue } from '../kubernetes/field-issue.js';
import { Path } from '../kubernetes/field-path.js';
import { compiled } from '../kubernetes/fast-schema.js';
import { nameOf } from '../kubernetes/metadata.js';
import type { GroupKind } from '../kubernetes/resources.js';
import type { AdmissionRequest, Verdict } from '../kubernetes/schema.js';
import type { Findings, Validator } from './contract.js';
import { auditAnnotationsOf, DENY_ALL, enforce, type ActionOf, type FiredCause } from './enforcement.js';
import { allowed, denied, errored, invalidStatus } from './response.js';

/** What a validator decided of one request: the verdict, and every cause a rule fired with. */
export interface Decision {
  verdict: Verdict;
  /** Each field error found, with its rule and action; empty when no rule fired or the object could not be decoded. */
  causes: readonly FiredCause[];
}

/**
 * Runs `validator` on `request`, each cause given `actionOf` its rule. Operations it does
 * not handle, CONNECT, and subresource requests (e.g. `status`, which cannot change `spec`
 * or `metadata`) are allowed. An object that does not match the schema is answered
 * `Errored(400)`, never thrown.
 */
export function runValidator<T>(validator: Validator<T>, request: AdmissionRequest, actionOf: ActionOf = DENY_ALL): Decision {
  if (request.subResource) return ALLOWED;
  const decode = (field: 'object' | 'oldObject') => decodeObject(validator, request, field);
  const answer = (findings: Findings, field: 'object' | 'oldObject'): Decision => {
    const { errors, warnings, causes } = enforce(findings, actionOf);
    const verdict = verdictOf(validator, request, field, errors, warnings);
    const annotations = auditAnnotationsOf(causes);
    return { verdict: annotations === undefined ? verdict : { ...verdict, auditAnnotations: annotations }, causes };
  };
  switch (request.operation) {
    case 'CREATE': {
      if (!validator.validateCreate) return ALLOWED;
      const object = decode('object');
      return object.ok ? answer(validator.validateCreate(object.value, request), 'object') : object.decision;
    }
    case 'UPDATE': {
      if (!validator.validateUpdate) return ALLOWED;
      const oldObject = decode('oldObject');
      if (!oldObject.ok) return oldObject.decision;
      const object = decode('object');
      return object.ok ? answer(validator.validateUpdate(oldObject.value, object.value, request), 'object') : object.decision;
    }
    case 'DELETE': {
      if (!validator.validateDelete) return ALLOWED;
      const oldObject = decode('oldObject');
      return oldObject.ok ? answer(validator.validateDelete(oldObject.value, request), 'oldObject') : oldObject.decision;
    }
    case 'CONNECT':
      return ALLOWED;
  }
}

const ALLOWED: Decision = { verdict: allowed(), causes: [] };

/** {@link verdictFor} the request's `field` object: its `metadata.name`, else `request.name`. */
function verdictOf<T>(
  validator: Validator<T>,
  request: AdmissionRequest,
  field: 'object' | 'oldObject',
  errors: readonly FieldError[],
  warnings: readonly string[],
): Verdict {
  return verdictFor(validator.groupKind, nameOf(request[field]) || (request.name ?? ''), errors, warnings);
}

/**
 * The decision for the refusing field errors and the warnings on the object `name` of
 * `groupKind`: denied with the `Invalid` status when there is an error, else allowed;
 * warnings in both.
 */
export function verdictFor(groupKind: GroupKind, name: string, errors: readonly FieldError[], warnings: readonly string[]): Verdict {
  if (errors.length === 0) return allowed(warnings);
  return denied(invalidStatus(groupKind, name, errors), warnings);
}

/** One of the request's objects decoded with the validator's schema, or the `Errored(400)` to answer. */
function decodeObject<T>(
  validator: Validator<T>,
  request: AdmissionRequest,
  field: 'object' | 'oldObject',
): { ok: true; value: T } | { ok: false; decision: Decision } {
  const result = compiled(validator.schema).safeParse(request[field]);
  if (result.success) return { ok: true, value: result.data };
  return {
    ok: false,
    decision: { causes: [], verdict: errored(400, `cannot decode ${validator.groupKind.kind} at ${firstIssue(result.error, Path.of('request', field))}`) },
  };
}
