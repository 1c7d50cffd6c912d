/**
 * What a guarded resource provides, and the one generic dispatch over it (after
 * controller-runtime's `CustomValidator` and its `validatingHandler`): decode the objects
 * with the resource's schema, then call `validateCreate`, `validateUpdate` or
 * `validateDelete` by operation.
 */
import type { z } from 'zod';
import { renderPath } from '../field/path.js';
import { compiled } from './fast-schema.js';
import { allowed, errored, type GroupKind } from './response.js';
import type { AdmissionRequest, Verdict } from './schema.js';

/**
 * One guarded kind. Each `validate*` is pure and returns the decision for its operation
 * (allowed, possibly with warnings, or denied with a status); an operation without one is
 * allowed.
 */
export interface Validator<T> {
  /** The kind it guards; requests are routed by `request.kind` group and kind, any version. */
  groupKind: GroupKind;
  /** The fields it reads; other fields are ignored, so any future field is tolerated. */
  schema: z.ZodType<T>;
  /** CREATE: `object` is the object to be created. */
  validateCreate?(object: T, request: AdmissionRequest): Verdict;
  /** UPDATE: `oldObject` as stored, `object` as it would be stored. */
  validateUpdate?(oldObject: T, object: T, request: AdmissionRequest): Verdict;
  /** DELETE: `oldObject` as stored. */
  validateDelete?(oldObject: T, request: AdmissionRequest): Verdict;
}

/**
 * Runs `validator` on `request`. Operations it does not handle, CONNECT, and subresource
 * requests (e.g. `status`, which cannot change `spec` or `metadata`) are allowed.
 * An object that does not match the schema is answered `Errored(400)`, never thrown.
 */
export function runValidator<T>(validator: Validator<T>, request: AdmissionRequest): Verdict {
  if (request.subResource) return allowed();
  const decode = (field: 'object' | 'oldObject') => decodeObject(validator, request, field);
  switch (request.operation) {
    case 'CREATE': {
      if (!validator.validateCreate) return allowed();
      const object = decode('object');
      return object.ok ? validator.validateCreate(object.value, request) : object.verdict;
    }
    case 'UPDATE': {
      if (!validator.validateUpdate) return allowed();
      const oldObject = decode('oldObject');
      if (!oldObject.ok) return oldObject.verdict;
      const object = decode('object');
      return object.ok ? validator.validateUpdate(oldObject.value, object.value, request) : object.verdict;
    }
    case 'DELETE': {
      if (!validator.validateDelete) return allowed();
      const oldObject = decode('oldObject');
      return oldObject.ok ? validator.validateDelete(oldObject.value, request) : oldObject.verdict;
    }
    case 'CONNECT':
      return allowed();
  }
}

/** One of the request's objects decoded with the validator's schema, or the `Errored(400)` to answer. */
function decodeObject<T>(
  validator: Validator<T>,
  request: AdmissionRequest,
  field: 'object' | 'oldObject',
): { ok: true; value: T } | { ok: false; verdict: Verdict } {
  const result = compiled(validator.schema).safeParse(request[field]);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  const path = renderPath(['request', field, ...issue.path]);
  return { ok: false, verdict: errored(400, `cannot decode ${validator.groupKind.kind} at ${path}: ${issue.message}`) };
}
