/**
 * `reviewAdmission`: the pure function from an AdmissionReview to the response
 * AdmissionReview, shared by the HTTPS server and the CLI.
 */
import type { DualStack } from '../candidates/categories.js';
import { candidatePoolValidators } from '../rules/candidate-pools.js';
import { configMapValidator, type SpiderpoolConfigMapRef } from '../rules/configmap.js';
import { noPoolDirectory, type PoolDirectory } from '../rules/pool-pair.js';
import { spiderIPPoolValidator } from '../rules/spiderippool.js';
import { renderPath } from '../field/path.js';
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

export interface ReviewOptions {
  /** Spiderpool's ConfigMap; default `spiderpool-conf` in any namespace. */
  configMap?: SpiderpoolConfigMapRef;
  /**
   * Other SpiderIPPools, for the dual-stack pair checks (the server's informer cache).
   * Without it those checks are skipped with a warning saying so.
   */
  pools?: PoolDirectory;
  /**
   * Whether Spiderpool runs dual-stack (`enableIPv6` of the watched `spiderpool-conf`), read
   * at each review; without it, not known (paired IaaS pools are then ranked with a warning).
   */
  dualStack?: () => DualStack;
}

/** Why pair checks are skipped when no pool directory is given. */
export const NO_CLUSTER_REASON = 'no cluster connection, so other SpiderIPPools are not known';

/** Why dual-stack is not known when no ConfigMap cache is given. */
export const NO_CONF_REASON = 'no cluster connection, so spiderpool-conf is not known';

/**
 * Checks that `body` (parsed JSON) is an `admission.k8s.io/v1` AdmissionReview request.
 *
 * @throws InvalidAdmissionReviewError with a one-line reason naming the first bad field,
 *   e.g. `request.uid: is required (a string)`.
 */
export function decodeAdmissionReview(body: unknown): AdmissionReviewRequest {
  const result = AdmissionReviewRequestSchema.safeParse(body);
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
  decide(request: AdmissionRequest): Verdict;
}

function guard<T>(validator: Validator<T>): Guard {
  return { ...validator.groupKind, decide: (request) => runValidator(validator, request) };
}

/** A review's decoded request (for logging and metrics) beside the response to send. */
export interface ReviewOutcome {
  request: AdmissionRequest;
  review: AdmissionReviewResponse;
}

/**
 * Builds a reviewer for fixed options (the server builds one at start). The returned
 * function is pure: same body in, same outcome out, no I/O.
 *
 * @throws InvalidAdmissionReviewError when `body` is not an `admission.k8s.io/v1`
 *   AdmissionReview request with a `uid`.
 */
export function createReviewer(options: ReviewOptions = {}): (body: unknown) => ReviewOutcome {
  const pools = options.pools ?? noPoolDirectory(NO_CLUSTER_REASON);
  const dualStack = options.dualStack ?? (() => ({ known: false, reason: NO_CONF_REASON }));
  const guards = [
    guard(spiderIPPoolValidator(pools, dualStack)),
    guard(configMapValidator(options.configMap)),
    ...candidatePoolValidators({ pools, dualStack }).map(guard),
  ];
  return (body) => {
    const { request } = decodeAdmissionReview(body);
    const match = guards.find((g) => g.group === request.kind.group && g.kind === request.kind.kind);
    // Every other kind is allowed.
    return { request, review: encodeAdmissionReview(request.uid, match ? match.decide(request) : allowed()) };
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
