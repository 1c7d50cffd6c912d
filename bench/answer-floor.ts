/**
 * The answer floor (`npm run bench -- --paired`): the Node ceiling's bare `node:https`
 * server (reviews skip express in the webhook too), answering every review with this
 * webhook's own answer to one body instead of a bare `allowed`, and logging it as the
 * webhook does (its logger, fields and levels: a denial at info). What it leaves out is the
 * review (decoding and the rules) and the webhook's route and process bookkeeping (request
 * metrics, body budget, header checks, default process metrics): the webhook ÷ this
 * floor is what those cost, this floor ÷ the Node ceiling what the answer and its log
 * line cost.
 *
 * Usage: `node answer-floor.js <cert dir> <answer file>`, where the answer file holds the
 * AdmissionReview the webhook answered the body with; each request's `uid` is put in it.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdmissionReviewResponse } from '../src/kubernetes/schema.js';
import { createLogger } from '../src/server/logger.js';
import { REVIEW_LOG_MESSAGE, reviewLogFields } from '../src/server/review-answer.js';
import { answerJson, onJsonBody } from './fixed-answer.js';
import { serveReference } from './reference-server.js';

const [certDir = '.', answerFile] = process.argv.slice(2);
if (answerFile === undefined) throw new Error('usage: answer-floor <cert dir> <answer file>');
const answer = JSON.parse(readFileSync(answerFile, 'utf8')) as AdmissionReviewResponse;
const logger = createLogger();
const level = answer.response.allowed ? 'debug' : 'info';

function answerAsWebhook(req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  onJsonBody(req, ({ request }) => {
    const review = { ...answer, response: { ...answer.response, uid: request.uid } };
    answerJson(res, JSON.stringify(review));
    if (logger.isLevelEnabled(level))
      logger[level](reviewLogFields(req.url ?? '', request, review, Math.round((performance.now() - started) * 1000)), REVIEW_LOG_MESSAGE);
  });
}

serveReference(certDir, answerAsWebhook);
