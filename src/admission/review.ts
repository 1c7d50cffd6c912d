/**
 * The generic reviewer: the pure function from an AdmissionReview to the response
 * AdmissionReview for the validators it is handed (src/rules/registry.ts hands it every one),
 * shared by the HTTPS server and the CLI. It knows no guarded kind.
 */
import { firstIssue } from '../kubernetes/field-issue.js';
import { resourceOf } from '../kubernetes/resources.js';
import { compiled } from '../kubernetes/fast-schema.js';
import type { SomeValidator } from './contract.js';
import { allowed } from './response.js';
import {
  ADMISSION_API_VERSION,
  AdmissionReviewRequestSchema,
  type AdmissionRequest,
  type AdmissionReviewRequest,
  type AdmissionReviewResponse,
  type Verdict,
} from '../kubernetes/schema.js';
import { runValidator, type Decision } from './validator.js';

/** A body that is not an `admission.k8s.io/v1` AdmissionReview with a `request.uid`. */
export class InvalidAdmissionReviewError extends Error {
  override name = 'InvalidAdmissionReviewError';
}

/**
 * Checks that `body` (parsed JSON) is an `admission.k8s.io/v1` AdmissionReview request.
 *
 * @throws InvalidAdmissionReviewError with a one-line reason naming the first bad field,
 *   e.g. `request.uid: is required (a string)`.
 */
export function decodeAdmissionReview(body: unknown): AdmissionReviewRequest {
  const result = compiled(AdmissionReviewRequestSchema).safeParse(body);
  if (result.success) return result.data;
  throw new InvalidAdmissionReviewError(`not an ${ADMISSION_API_VERSION} AdmissionReview: ${firstIssue(result.error)}`);
}

/** Wraps a verdict into the response AdmissionReview for the request `uid`. */
export function encodeAdmissionReview(uid: string, verdict: Verdict): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid, ...verdict } };
}

/** A validator and the webhook that calls it: kubectl names that webhook when a denial is not `Invalid`. */
export interface WiredValidator {
  webhook: string;
  /** Each validator decodes its own object type; the dispatch opens it to hand it requests. */
  validator: SomeValidator;
}

/** A webhook of the configuration, as far as routing a kind to it goes. */
export interface WebhookRoute {
  name: string;
  apiGroups: readonly string[];
  resources: readonly string[];
}

/**
 * The webhook that sends `validator`'s kind: the first of `webhooks` listing its group and
 * resource (so order decides between a refusing and a warn-only webhook of one kind).
 *
 * @throws Error when no webhook sends the kind (a validator no configuration would call).
 */
function webhookOf(validator: SomeValidator, webhooks: readonly WebhookRoute[]): string {
  const { group, kind } = validator.groupKind;
  const { resource } = resourceOf(validator.groupKind, false);
  const row = webhooks.find((webhook) => webhook.apiGroups.includes(group) && webhook.resources.includes(resource));
  if (row === undefined) throw new Error(`no webhook sends ${kind}${group ? `.${group}` : ''} (${resource})`);
  return row.name;
}

/**
 * Each of `validators` with the first of `webhooks` that sends its kind.
 *
 * @throws Error when no webhook sends one of the kinds.
 */
export function withWebhooks(validators: readonly SomeValidator[], webhooks: readonly WebhookRoute[]): WiredValidator[] {
  return validators.map((validator) => ({ webhook: webhookOf(validator, webhooks), validator }));
}

/** A validator bound to the generic dispatch, so validators of different object types share one list. */
interface Guard {
  group: string;
  kind: string;
  webhook: string;
  decide(request: AdmissionRequest): Decision;
}

function guard(validator: SomeValidator, webhook: string): Guard {
  return { ...validator.groupKind, webhook, decide: validator.open((typed) => (request: AdmissionRequest) => runValidator(typed, request)) };
}

/** A review's decoded request (for logging and metrics) beside the response to send. */
export interface ReviewOutcome {
  request: AdmissionRequest;
  review: AdmissionReviewResponse;
  /** The webhook whose validator judged it (kubectl names it in some denials); absent when no validator guards the kind. */
  webhook?: string;
  /** The rules of that validator that refused the review, each once; empty when it was allowed or not decodable. */
  refusedBy: readonly string[];
}

/**
 * The reviewer for `validators` (routed by `request.kind` group and kind; every other kind
 * is allowed). The returned function is pure: same body in, same outcome out, no I/O.
 *
 * @throws InvalidAdmissionReviewError when `body` is not an `admission.k8s.io/v1`
 *   AdmissionReview request with a `uid`.
 */
export function createDispatcher(validators: readonly WiredValidator[]): (body: unknown) => ReviewOutcome {
  const guards = validators.map(({ validator, webhook }) => guard(validator, webhook));
  return (body) => {
    const { request } = decodeAdmissionReview(body);
    const match = guards.find((g) => g.group === request.kind.group && g.kind === request.kind.kind);
    if (match === undefined) return { request, review: encodeAdmissionReview(request.uid, allowed()), refusedBy: [] };
    const { verdict, refusedBy } = match.decide(request);
    return { request, review: encodeAdmissionReview(request.uid, verdict), webhook: match.webhook, refusedBy };
  };
}
