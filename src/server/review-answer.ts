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

/** What to write for a review body. */
export type ReviewAnswer =
  /** HTTP 200 with `json`, the response AdmissionReview; `operation` and `allowed` label the metrics. */
  | {
      type: 'review';
      json: string;
      operation: string;
      allowed: boolean;
      refusedBy: readonly string[];
      /** The review's log line without `latencyMs` (added when written), when its level was asked for. */
      log?: Record<string, unknown>;
    }
  /** A malformed body: a `Status` with `code` and `message`. */
  | { type: 'refuse'; code: number; message: string }
  /** A bug in the worker (the main thread answers 500 and logs `message`). */
  | { type: 'error'; message: string };

/**
 * The answer for `body` sent to `path`, reviewed by `review`. `logs(allowed)` says whether
 * the review's log line is wanted (debug when allowed, info when not).
 *
 * @throws whatever `review` throws besides `InvalidAdmissionReviewError` (a bug: the caller answers 500).
 */
export function answerReview(body: Buffer, path: string, review: (body: unknown) => ReviewOutcome, logs: (allowed: boolean) => boolean): ReviewAnswer {
  const parsed = parseReviewBody(body);
  if (!parsed.ok) return { type: 'refuse', code: parsed.code, message: parsed.message };
  let outcome: ReviewOutcome;
  try {
    outcome = review(parsed.value);
  } catch (e) {
    if (e instanceof InvalidAdmissionReviewError) return { type: 'refuse', code: 400, message: e.message };
    throw e;
  }
  const { request, review: response, refusedBy } = outcome;
  const allowed = response.response.allowed;
  const json = JSON.stringify(response);
  const log = logs(allowed) ? reviewLogFields(path, request, response, 0) : undefined;
  return { type: 'review', json, operation: request.operation, allowed, refusedBy, ...(log ? { log } : {}) };
}

/** The message of the line a review is logged with (at debug when allowed, at info when not). */
export const REVIEW_LOG_MESSAGE = 'admission review';

/**
 * The fields of a review's log line: which object, what was decided, and `latencyMs`
 * (milliseconds from the handler's call to the answer written). User strings are cut as
 * {@link truncate} cuts them. Exported for the benchmark's answer floor, which logs the
 * same line without reviewing.
 */
export function reviewLogFields(path: string, request: AdmissionRequest, review: AdmissionReviewResponse, latencyMs: number): Record<string, unknown> {
  return {
    path,
    uid: shown(request.uid),
    kind: shown(`${request.kind.kind}${request.kind.group ? '.' + request.kind.group : ''}`),
    namespace: shown(request.namespace),
    name: shown(request.name),
    operation: request.operation,
    subResource: shown(request.subResource),
    dryRun: request.dryRun ?? false,
    allowed: review.response.allowed,
    code: review.response.status?.code,
    latencyMs,
  };
}

/** Every string from the request is bounded: a hostile review must not make a huge log line. */
function shown(s: string | undefined): string | undefined {
  return s === undefined ? undefined : truncate(s);
}
