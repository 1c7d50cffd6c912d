/**
 * The express floor of the lean review path: this project's express 5 with one `app.post` route doing
 * what the Node ceiling does (`answerAllowed`: raw body, `JSON.parse`, `res.end` of a fixed
 * answer), over the same TLS. No validation, metrics or logging: what express itself
 * costs, the least a webhook whose reviews go through express can cost.
 *
 * Usage: `node express-floor.js <certDir>` (see reference-server.ts); answers `GET /readyz`.
 */
import express from 'express';
import { WEBHOOK_SERVED_PATHS } from '../src/defaults.js';
import { answerAllowed } from './fixed-answer.js';
import { serveReference } from './reference-server.js';

serveReference(process.argv[2] ?? '.', express().post([...WEBHOOK_SERVED_PATHS], answerAllowed));
