/**
 * A review body in, the answer to write out: parse, review, encode. Pure and free of
 * `req`/`res`, so the same steps run on the main thread (the refusing webhooks) and in the
 * warn-only reviews' worker (warn-only-worker.ts), whose answer crosses the thread as this
 * plain data.
 */
import { InvalidAdmissionReviewError, type ReviewOutcome } from '../admission/review.js';
import type { AdmissionRequest, AdmissionReviewResponse } from '../kubernetes/schema.js';
import { truncate } from '../go/strconv-quote.js';
import { parseReviewBody } from './review-body.js';
import { decisionOf, firedRules, type FiredCause } from '../admission/enforcement.js';
import { MAX_LISTED } from '../admission/response.js';

/** What to write for a review body. */
export type ReviewAnswer =
  /** HTTP 200 with `json`, the response AdmissionReview; `operation` and `allowed` label the metrics. */
  | {
      type: 'review';
      json: string;
      operation: string;
      allowed: boolean;
      refusedBy: readonly string[];
      /** Every cause a rule fired with (the decision counter's labels, the log line's rules). */
      causes: readonly FiredCause[];
      /** The review's log line without `latencyUs` (added when written), when its level was asked for. */
      log?: Record<string, unknown>;
    }
  | Refusal
  /** A bug in the worker (the main thread answers 500 and logs `message`). */
  | { type: 'error'; message: string };

/** A malformed request: a `Status` with `code` and `message`. */
export type Refusal = { type: 'refuse'; code: number; message: string };

/** The {@link Refusal} answered with `code` (controller-runtime's `Errored(code, err)`). */
export const errored = (code: number, message: string): Refusal => ({ type: 'refuse', code, message });

/**
 * The answer for `body` sent to `path`, reviewed by `review`. `logs(level)` says whether
 * the review's log line is wanted at its {@link reviewLogLevel}.
 *
 * @throws whatever `review` throws besides `InvalidAdmissionReviewError` (a bug: the caller answers 500).
 */
export function answerReview(body: Buffer, path: string, review: (body: unknown) => ReviewOutcome, logs: (level: ReviewLogLevel) => boolean): ReviewAnswer {
  const parsed = parseReviewBody(body);
  if (!parsed.ok) return errored(parsed.code, parsed.message);
  let outcome: ReviewOutcome;
  try {
    outcome = review(parsed.value);
  } catch (e) {
    if (e instanceof InvalidAdmissionReviewError) return errored(400, e.message);
    throw e;
  }
  const { request, review: response, refusedBy, causes } = outcome;
  const allowed = response.response.allowed;
  const json = JSON.stringify(response);
  const log = logs(reviewLogLevel(allowed, causes)) ? reviewLogFields(path, request, response, 0, causes) : undefined;
  return { type: 'review', json, operation: request.operation, allowed, refusedBy, causes, ...(log ? { log } : {}) };
}

/** The message of a review's log line. */
export const REVIEW_LOG_MESSAGE = 'admission review';

export type ReviewLogLevel = 'info' | 'debug';

/**
 * A review is logged at info when refused or when a rule fired (whatever its action: the
 * record of a `Warn` or `Audit` rollout); a clean allowed one at debug, as controller-runtime's V(5).
 */
export function reviewLogLevel(allowed: boolean, causes: readonly FiredCause[]): ReviewLogLevel {
  return allowed && causes.length === 0 ? 'debug' : 'info';
}

/**
 * The fields of a review's log line: which object and who asked, what was decided (with the
 * rules that fired, their fields and the strongest action, when any did), and `latencyUs`
 * (whole microseconds from the handler's call to the answer written). User strings are cut
 * as {@link truncate} cuts them, fields to {@link MAX_LISTED}. Exported for the benchmark's
 * answer floor, which logs the same line without reviewing.
 */
export function reviewLogFields(
  path: string,
  request: AdmissionRequest,
  review: AdmissionReviewResponse,
  latencyUs: number,
  causes: readonly FiredCause[] = [],
): Record<string, unknown> {
  const fired = causes.length > 0;
  return {
    path,
    uid: shown(request.uid),
    kind: shown(`${request.kind.kind}${request.kind.group ? `.${request.kind.group}` : ''}`),
    namespace: shown(request.namespace),
    name: shown(request.name),
    operation: request.operation,
    subResource: shown(request.subResource),
    user: shown(request.userInfo?.username),
    dryRun: request.dryRun ?? false,
    allowed: review.response.allowed,
    code: review.response.status?.code,
    ...(fired
      ? { decision: decisionOf(causes), rules: firedRules(causes), fields: [...new Set(causes.map((c) => truncate(c.field)))].slice(0, MAX_LISTED) }
      : {}),
    latencyUs,
  };
}

/** Every string from the request is bounded: a hostile review must not make a huge log line. */
function shown(s: string | undefined): string | undefined {
  return s === undefined ? undefined : truncate(s);
}
