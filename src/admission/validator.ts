/**
 * The one generic dispatch over a {@link Validator} (after controller-runtime's
 * `validatingHandler` and `validationResponseFromStatus`): decode the objects with the
 * resource's schema, call `validateCreate`, `validateUpdate` or `validateDelete` by
 * operation, and turn what it found into the decision: field errors into the `Invalid`
 * status with the validator's GroupKind (`apierrors.NewInvalid`), warnings kept.
 */
import { firstIssue } from '../kubernetes/field-issue.js';
import { Path } from '../kubernetes/field-path.js';
import { compiled } from '../kubernetes/fast-schema.js';
import { nameOf } from '../kubernetes/metadata.js';
import type { GroupKind } from '../kubernetes/resources.js';
import type { AdmissionRequest, Verdict } from '../kubernetes/schema.js';
import type { Findings, Validator } from './contract.js';
import { allowed, denied, errored, invalidStatus } from './response.js';

/** What a validator decided of one request: the verdict, and the rules that refused it (empty when allowed). */
export interface Decision {
  verdict: Verdict;
  /** The `refusedBy` of the findings; empty when allowed or when the object could not be decoded. */
  refusedBy: readonly string[];
}

/**
 * Runs `validator` on `request`. Operations it does not handle, CONNECT, and subresource
 * requests (e.g. `status`, which cannot change `spec` or `metadata`) are allowed.
 * An object that does not match the schema is answered `Errored(400)`, never thrown.
 */
export function runValidator<T>(validator: Validator<T>, request: AdmissionRequest): Decision {
  if (request.subResource) return ALLOWED;
  const decode = (field: 'object' | 'oldObject') => decodeObject(validator, request, field);
  const answer = (findings: Findings, field: 'object' | 'oldObject'): Decision => ({
    verdict: verdictOf(validator, request, field, findings),
    refusedBy: findings.refusedBy,
  });
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

const ALLOWED: Decision = { verdict: allowed(), refusedBy: [] };

/** {@link verdictFor} the request's `field` object: its `metadata.name`, else `request.name`. */
function verdictOf<T>(validator: Validator<T>, request: AdmissionRequest, field: 'object' | 'oldObject', findings: Findings): Verdict {
  return verdictFor(validator.groupKind, nameOf(request[field]) || (request.name ?? ''), findings);
}

/**
 * The decision for what a validator found on the object `name` of `groupKind`: denied with
 * the `Invalid` status when there is a field error, else allowed; warnings in both.
 */
export function verdictFor(groupKind: GroupKind, name: string, findings: Findings): Verdict {
  if (findings.errors.length === 0) return allowed(findings.warnings);
  return denied(invalidStatus(groupKind, name, findings.errors), findings.warnings);
}

/** One of the request's objects decoded with the validator's schema, or the `Errored(400)` to answer. */
function decodeObject<T>(
  validator: Validator<T>,
  request: AdmissionRequest,
  field: 'object' | 'oldObject',
): { ok: true; value: T } | { ok: false; decision: Decision } {
  const result = compiled(validator.schema).safeParse(request[field]);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, decision: { refusedBy: [], verdict: errored(400, `cannot decode ${validator.groupKind.kind} at ${firstIssue(result.error, Path.of('request', field))}`) } };
}
