/**
 * The express floor of issue #13: this project's express 5 with one `app.post` route doing
 * what the Node ceiling does (`answerAllowed`: raw body, `JSON.parse`, `res.end` of a fixed
 * answer), over the same TLS. No validation, metrics or logging: what express itself
 * costs, the least a webhook built on it can cost, so the webhook's own path is read as
 * a ratio to this one.
 *
 * Usage: `node express-floor.js <certDir>` (see reference-server.ts); answers `GET /readyz`.
 */
import express from 'express';
import { WEBHOOK_PATHS } from '../src/defaults.js';
import { answerAllowed } from './fixed-answer.js';
import { serveReference } from './reference-server.js';

const app = express();
app.post(Object.values(WEBHOOK_PATHS), answerAllowed);
app.get('/readyz', (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
});
serveReference(process.argv[2] ?? '.', app);
