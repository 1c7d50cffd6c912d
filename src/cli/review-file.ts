import { InvalidAdmissionReviewError } from '../admission/review.js';
import { reviewAdmission, type ReviewOptions } from '../rules/registry.js';

/** What a CLI command prints and how it exits: 0 success/allowed, 1 refused, 2 unusable input. */
export interface CommandResult {
  exitCode: 0 | 1 | 2;
  stdout: string;
  stderr: string;
}

/**
 * `review`: the response AdmissionReview for an AdmissionReview given as JSON text, through
 * the same `reviewAdmission` the server uses.
 *
 * @returns exit code 0 when allowed, 1 when denied, 2 when the text is not an AdmissionReview.
 */
export function reviewText(text: string, options?: ReviewOptions): CommandResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { exitCode: 2, stdout: '', stderr: 'error: input is not valid JSON\n' };
  }
  try {
    const review = reviewAdmission(body, options);
    return { exitCode: review.response.allowed ? 0 : 1, stdout: JSON.stringify(review, null, 2) + '\n', stderr: '' };
  } catch (e) {
    if (e instanceof InvalidAdmissionReviewError) return { exitCode: 2, stdout: '', stderr: `error: ${e.message}\n` };
    throw e;
  }
}
