/**
 * The express app of the express floor and the answer floor: `handler` on every webhook
 * path as one `app.post` route, and `GET /readyz`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import { WEBHOOK_SERVED_PATHS } from '../src/defaults.js';

export function floorApp(handler: (req: IncomingMessage, res: ServerResponse) => void): Express {
  const app = express();
  app.post([...WEBHOOK_SERVED_PATHS], handler);
  app.get('/readyz', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
  });
  return app;
}
