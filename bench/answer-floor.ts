/**
 * The answer floor (`npm run bench -- --paired`): the express floor's route, answering
 * every review with this webhook's own answer to one body instead of a bare `allowed`,
 * and logging it as the webhook does (its logger, fields and levels: a denial at info).
 * It is everything a review's answer costs except the review: the webhook ÷ this floor is
 * what deciding costs, this floor ÷ the express floor what the answer and its log line cost.
 *
 * Usage: `node answer-floor.js <cert dir> <answer file>`, where the answer file holds the
 * AdmissionReview the webhook answered the body with; each request's `uid` is put in it.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { AdmissionReviewResponse } from '../src/admission/schema.js';
import { WEBHOOK_PATHS } from '../src/defaults.js';
import { createLogger } from '../src/server/logger.js';
import { REVIEW_LOG_MESSAGE, reviewLogFields } from '../src/server/review-route.js';
import { serveReference } from './reference-server.js';

const [certDir = '.', answerFile] = process.argv.slice(2);
if (answerFile === undefined) throw new Error('usage: answer-floor <cert dir> <answer file>');
const answer = JSON.parse(readFileSync(answerFile, 'utf8')) as AdmissionReviewResponse;
const logger = createLogger();
const level = answer.response.allowed ? 'debug' : 'info';

function answerAsWebhook(req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const { request } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const review = { ...answer, response: { ...answer.response, uid: request.uid } };
    const json = JSON.stringify(review);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) }).end(json);
    if (logger.isLevelEnabled(level)) logger[level](reviewLogFields(req.url ?? '', request, review, performance.now() - started), REVIEW_LOG_MESSAGE);
  });
}

const app = express();
app.post(Object.values(WEBHOOK_PATHS), answerAsWebhook);
app.get('/readyz', (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
});
serveReference(certDir, app);
