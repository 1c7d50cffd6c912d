/**
 * `reviewAdmission`: the pure function from an AdmissionReview to the response
 * AdmissionReview, shared by the HTTPS server and the CLI.
 */
import { renderPath } from '../field/path.js';
import { wireValidators, type ReviewContext } from '../validators.js';
import { compiled } from './fast-schema.js';
import { allowed } from './response.js';
import {
  ADMISSION_API_VERSION,
  AdmissionReviewRequestSchema,
  type AdmissionRequest,
  type AdmissionReviewRequest,
  type AdmissionReviewResponse,
  type Verdict,
} from './schema.js';
import { runValidator, type Validator } from './validator.js';

/** A body that is not an `admission.k8s.io/v1` AdmissionReview with a `request.uid`. */
export class InvalidAdmissionReviewError extends Error {
  override name = 'InvalidAdmissionReviewError';
}

/** What the validators may read besides the request; the dispatch only passes it on (src/validators.ts). */
export type ReviewOptions = ReviewContext;


/**
 * Checks that `body` (parsed JSON) is an `admission.k8s.io/v1` AdmissionReview request.
 *
 * @throws InvalidAdmissionReviewError with a one-line reason naming the first bad field,
 *   e.g. `request.uid: is required (a string)`.
 */
export function decodeAdmissionReview(body: unknown): AdmissionReviewRequest {
  const result = compiled(AdmissionReviewRequestSchema).safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = renderPath(issue.path);
  throw new InvalidAdmissionReviewError(
    `not an ${ADMISSION_API_VERSION} AdmissionReview: ${path === '' ? '' : path + ': '}${issue.message}`,
  );
}

/** Wraps a verdict into the response AdmissionReview for the request `uid`. */
export function encodeAdmissionReview(uid: string, verdict: Verdict): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid, ...verdict } };
}

/** A validator bound to the generic dispatch, so validators of different object types share one list. */
interface Guard {
  group: string;
  kind: string;
  webhook: string;
  decide(request: AdmissionRequest): Verdict;
}

function guard<T>(validator: Validator<T>, webhook: string): Guard {
  return { ...validator.groupKind, webhook, decide: (request) => runValidator(validator, request) };
}

/** A review's decoded request (for logging and metrics) beside the response to send. */
export interface ReviewOutcome {
  request: AdmissionRequest;
  review: AdmissionReviewResponse;
  /** The webhook whose validator judged it (kubectl names it in some denials); absent when no validator guards the kind. */
  webhook?: string;
}

/**
 * Builds a reviewer for fixed options (the server builds one at start). The returned
 * function is pure: same body in, same outcome out, no I/O.
 *
 * @throws InvalidAdmissionReviewError when `body` is not an `admission.k8s.io/v1`
 *   AdmissionReview request with a `uid`.
 */
export function createReviewer(options: ReviewOptions = {}): (body: unknown) => ReviewOutcome {
  const guards = wireValidators(options).map(({ validator, webhook }) => guard(validator, webhook));
  return (body) => {
    const { request } = decodeAdmissionReview(body);
    const match = guards.find((g) => g.group === request.kind.group && g.kind === request.kind.kind);
    // Every other kind is allowed.
    if (match === undefined) return { request, review: encodeAdmissionReview(request.uid, allowed()) };
    return { request, review: encodeAdmissionReview(request.uid, match.decide(request)), webhook: match.webhook };
  };
}

const defaultReviewer = createReviewer();

/**
 * Turns an AdmissionReview (parsed JSON) into the response AdmissionReview: same
 * `apiVersion`/`kind`, `response.uid` equal to `request.uid`. `dryRun` requests get the
 * same decision as real ones.
 *
 * @throws InvalidAdmissionReviewError when `review` is not an `admission.k8s.io/v1`
 *   AdmissionReview request with a `uid` (the server answers HTTP 400).
 */
export function reviewAdmission(review: unknown, options?: ReviewOptions): AdmissionReviewResponse {
  return (options === undefined ? defaultReviewer : createReviewer(options))(review).review;
}
