/**
 * The request listener: a review's `POST` goes straight to its `ReviewRoute`
 * (review-route.ts, the one HTTP adapter of the reviewer); everything else goes to the
 * express application (health, metrics, and the answers for requests that match no webhook).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ReviewOutcome } from '../admission/review.js';
import { BODY_STALL_MS, BODY_WAIT_MS, WEBHOOK_SERVED_PATHS } from '../defaults.js';
import { quoteShown, truncate } from '../go/strconv-quote.js';
import type { WebhookMetrics } from './metrics.js';
import { BodyBudget, MAX_PARSED_BYTES_IN_FLIGHT } from './body-budget.js';
import { readinessReport, type ReadinessCheck } from '../kubernetes/healthz.js';
import { ReviewRoute } from './review-route.js';
import type { WarnOnlyReviews } from './warn-only-reviews.js';
import { refuse, sendJson, statusBody } from './status.js';

export interface AppOptions {
  /** The pure reviewer (see `createReviewer`). */
  review: (body: unknown) => ReviewOutcome;
  logger: Logger;
  /** What `/readyz` checks, in order. */
  readinessChecks: readonly ReadinessCheck[];
  metrics: WebhookMetrics;
  /**
   * Require a verified client certificate on the webhook paths (the TLS layer asked for one
   * and checked it against the client CA; see `startServer`).
   */
  verifyClientCertificates: boolean;
  /** Parsed bytes of the bodies read and parsed at once (default {@link MAX_PARSED_BYTES_IN_FLIGHT}). */
  parsedBytesInFlight?: number;
  /** How long a review waits for room before a 429, in milliseconds (default {@link BODY_WAIT_MS}). */
  bodyWaitMs?: number;
  /** How long after its request a body may arrive slowly while others wait for room, in milliseconds (default {@link BODY_STALL_MS}). */
  bodyStallMs?: number;
  /**
   * The warn-only worker and the paths it reviews (see warn-only-reviews.ts); those paths
   * get a body budget of their own, so that their bodies never hold the refusing paths' room.
   */
  isolated?: { reviews: WarnOnlyReviews; paths: readonly string[] };
}

/**
 * The request listener: `POST /validate-spiderippool` and `POST /validate-configmap`
 * (HTTP 200 with the response AdmissionReview; 4xx with a `Status` for a malformed or
 * unauthenticated request, 429 for one that waited too long for room, see `ReviewRoute`),
 * `GET /healthz` and `/livez` (always 200), `GET /readyz` (200 when every check passes,
 * else 503; `?verbose` lists them) and `GET /metrics` (Prometheus text). TLS and
 * listening are `startServer`'s (serve.ts).
 *
 * A review whose request target is a webhook path exactly (with any query: the API server
 * adds `?timeout=10s`) skips express, whose per-request work cost about as much CPU as the
 * whole review (docs/adr/0053-reviews-before-express.md); any other spelling goes through
 * express to the same `ReviewRoute`, so both answer alike.
 */
export function createApp({
  review,
  logger,
  readinessChecks,
  metrics,
  verifyClientCertificates,
  parsedBytesInFlight = MAX_PARSED_BYTES_IN_FLIGHT,
  bodyWaitMs = BODY_WAIT_MS,
  bodyStallMs = BODY_STALL_MS,
  isolated,
}: AppOptions): RequestListener {
  const app = express();
  // Paths are exact: /validate-configmap only, not /VALIDATE-CONFIGMAP/.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.disable('x-powered-by');
  app.set('etag', false);

  // The webhook paths first: a review is matched by the first route express tries.
  const budget = new BodyBudget(parsedBytesInFlight, bodyStallMs); // one budget for all paths but the isolated ones
  const worker = isolated && { budget: new BodyBudget(parsedBytesInFlight, bodyStallMs), isolated: isolated.reviews, paths: isolated.paths };
  const routes = new Map<string, ReviewRoute>();
  for (const path of WEBHOOK_SERVED_PATHS) {
    const own = worker?.paths.includes(path) ? { budget: worker.budget, isolated: worker.isolated } : { budget };
    const route = new ReviewRoute({ path, review, logger, metrics: metrics.route(path), verifyClientCertificates, bodyWaitMs, ...own });
    routes.set(path, route);
    app.post(path, (req, res, next) => route.handle(req, res, next));
    app.all(path, (req, res) => {
      res.setHeader('Allow', 'POST');
      refuse(res, logger, req.path, 405, `use POST with an admission.k8s.io/v1 AdmissionReview body`);
    });
  }

  app.get(['/healthz', '/livez'], (_req, res) => {
    res.type('text/plain').send('ok\n');
  });
  app.get('/readyz', (req, res) => {
    const { ready, text } = readinessReport(readinessChecks, req.query['verbose'] !== undefined);
    res
      .status(ready ? 200 : 503)
      .type('text/plain')
      .send(text);
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  app.use((req, res) => {
    refuse(res, logger, req.path, 404, `no handler for ${req.method} ${quoteShown(req.path)}; webhooks are served at ${WEBHOOK_SERVED_PATHS.join(', ')}`);
  });
  // Last resort: a bug must not take the process down or show a stack trace to the client;
  // when even that throws, the connection goes.
  const failed = (err: unknown, req: IncomingMessage, res: ServerResponse) => {
    try {
      logger.error({ err, path: truncate(pathOf(req.url)) }, 'internal error while serving a request');
      if (!res.headersSent) sendJson(res, 500, statusBody(500, 'internal error; see the webhook log'));
    } catch {
      res.destroy();
    }
  };
  const internalErrors: ErrorRequestHandler = (err: unknown, req, res, _next) => failed(err, req, res);
  app.use(internalErrors);
  return (req, res) => {
    const route = req.method === 'POST' ? routes.get(pathOf(req.url)) : undefined;
    if (route === undefined) return void app(req, res);
    try {
      route.handle(req, res, (err) => failed(err, req, res));
    } catch (err) {
      failed(err, req, res); // thrown before the route's own catch (express catches it so on its way)
    }
  };
}

/** The path of an origin-form request target (`/validate-configmap?timeout=10s`), the query cut. */
function pathOf(url = ''): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
