/**
 * The Node ceiling of the performance comparison: a bare `node:https` server doing `answerAllowed`
 * (fixed-answer.ts). No framework, no validation, no logging: nothing in Node answers a
 * review faster, so the webhook's figures are read as a ratio to this one's.
 *
 * Usage: `node node-ceiling.js <certDir>` (see reference-server.ts); answers `GET /readyz`.
 */
import { answerAllowed } from './fixed-answer.js';
import { serveReference } from './reference-server.js';

serveReference(process.argv[2] ?? '.', answerAllowed);
