/**
 * The express floor of the lean review path: this project's express 5 with one `app.post` route doing
 * what the Node ceiling does (`answerAllowed`: raw body, `JSON.parse`, `res.end` of a fixed
 * answer), over the same TLS. No validation, metrics or logging: what express itself
 * costs, the least a webhook built on it can cost, so the webhook's own path is read as
 * a ratio to this one.
 *
 * Usage: `node express-floor.js <certDir>` (see reference-server.ts); answers `GET /readyz`.
 */
import { answerAllowed } from './fixed-answer.js';
import { floorApp } from './floor-app.js';
import { serveReference } from './reference-server.js';

serveReference(process.argv[2] ?? '.', floorApp(answerAllowed));
