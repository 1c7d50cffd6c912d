/**
 * The warn-only reviews' worker thread (started by warn-only-reviews.ts): reviews each body
 * it is handed with the candidate-pool validators against a {@link PoolMirror} kept by the
 * main thread's messages, and posts the answer back. The same reviewer and the same
 * `answerReview` as the main thread's; no I/O but its message port.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { ReviewOutcome } from '../admission/review.js';
import { createCandidateReviewer } from '../rules/candidate-registry.js';
import { MirrorMessageSchema, PoolMirror } from '../store/pool-mirror.js';
import { answerReview, type ReviewAnswer } from './review-answer.js';
import type { FromWorker, ToWorker } from './warn-only-reviews.js';

/** The worker's loop: mirror changes applied, bodies answered, until the thread ends. */
function serve(port: MessagePort): void {
  const mirror = new PoolMirror('the candidate-pool worker has not received the pools yet', { known: false, reason: 'spiderpool-conf is not known yet' });
  const review = createCandidateReviewer({ pools: mirror, dualStack: () => mirror.dualStack() });
  port.on('message', (message: ToWorker) => {
    if (message.type !== 'review') return mirror.apply(MirrorMessageSchema.parse(message));
    port.postMessage({ id: message.id, ...answerOf(Buffer.from(message.body), message.path, review) } satisfies FromWorker);
  });
}

/** The answer to one body; a bug is answered as one (the main thread answers 500), never thrown out of the worker. */
function answerOf(body: Buffer, path: string, review: (body: unknown) => ReviewOutcome): ReviewAnswer {
  try {
    return answerReview(body, path, review, () => true);
  } catch (e) {
    return { type: 'error', message: `candidate-pool worker: ${(e as Error)?.message ?? String(e)}` };
  }
}

// Imported on a main thread (image/compile-cache.mjs loads every module of dist/), it serves nothing.
if (parentPort !== null) serve(parentPort);
