/**
 * The one HTTP adapter (after controller-runtime's `webhook.Admission.ServeHTTP`): checks the
 * method, content type and size, parses JSON, calls the pure reviewer, and writes the
 * response AdmissionReview. Rules never see `req`/`res`.
 */
import type { TLSSocket } from 'node:tls';
import { E_TIMEOUT, Semaphore, withTimeout } from 'async-mutex';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import { REASON_BY_CODE } from '../admission/response.js';
import { InvalidAdmissionReviewError, type ReviewOutcome } from '../admission/review.js';
import { BODY_WAIT_MS, MAX_BODY_BYTES, MAX_BODY_BYTES_IN_FLIGHT, WEBHOOK_PATHS } from '../defaults.js';
import { quoteShown, truncate } from '../field/quote.js';
import type { WebhookMetrics } from '../metrics/webhook.js';
import { readinessReport, type ReadinessCheck } from './readiness.js';

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
  /** Request bytes read and parsed at once (default {@link MAX_BODY_BYTES_IN_FLIGHT}); at least `MAX_BODY_BYTES`. */
  bodyBytesInFlight?: number;
  /** How long a review waits for room before a 429, in milliseconds (default {@link BODY_WAIT_MS}). */
  bodyWaitMs?: number;
}

/**
 * A client's mistake answered as a Kubernetes `Status` (the kube-apiserver shows its
 * `message` when a webhook call fails), with a one-line message and never a stack trace.
 */
export function statusBody(code: number, message: string) {
  const reason = REASON_BY_CODE[code] ?? 'BadRequest';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function refuse(res: Response, code: number, message: string): void {
  res.status(code).json(statusBody(code, message));
}

/**
 * Only JSON is accepted, as the kube-apiserver sends it (`application/json`). The header
 * is read directly: express's `req.is` answers "no" for a request without a body, which
 * deserves "empty body" instead.
 */
const requireJson: RequestHandler = (req, res, next) => {
  const type = req.get('content-type') ?? '';
  if (!/^application\/json[ \t]*(;|$)/i.test(type)) {
    return refuse(res, 415, `content type ${quoteShown(type)} is not supported; send application/json`);
  }
  const length = req.get('content-length');
  if (req.get('transfer-encoding') === undefined && (length === undefined || Number(length) === 0)) {
    return refuse(res, 400, 'request body is empty; send an admission.k8s.io/v1 AdmissionReview');
  }
  next();
};

/**
 * The `code` label of a request whose connection closed before its response was sent whole
 * (the client gave up, e.g. the kube-apiserver's timeout): `res.statusCode` would be the
 * default 200, or the 400 written into the closed connection for the truncated body, and
 * count a request nobody received an answer to as answered.
 */
export const ABORTED_CODE_LABEL = 'aborted';

/**
 * controller-runtime's request metrics for one webhook path: in flight until the response
 * is finished or the connection closed, then counted by HTTP code, or
 * {@link ABORTED_CODE_LABEL} when no response was sent whole (and by operation and decision
 * when a review was answered, see `handleReview`).
 */
function instrument(metrics: WebhookMetrics, webhook: string): RequestHandler {
  return (req, res, next) => {
    const endTimer = metrics.latencySeconds.startTimer({ webhook });
    metrics.requestsInFlight.inc({ webhook });
    // The socket's 'close' comes a tick after the server ends a `Connection: close` answer,
    // so it is seen before 'finish' only when the client left before the answer was done.
    // Prepended: Node's own 'close' handler aborts the request, and body-parser then writes
    // its 400 into the closed connection, which would 'finish' before a listener added last.
    const socket = req.socket;
    let clientGone = false;
    const gone = () => (clientGone = true);
    socket.prependOnceListener('close', gone);
    let done = false;
    const record = () => {
      if (done) return;
      done = true;
      socket.off('close', gone);
      endTimer();
      metrics.requestsInFlight.dec({ webhook });
      const { operation = '', allowed = '' } = res.locals as { operation?: string; allowed?: string };
      const code = res.writableFinished && !clientGone ? String(res.statusCode) : ABORTED_CODE_LABEL;
      metrics.requestsTotal.inc({ webhook, code, operation, allowed });
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}

/**
 * Body budget units: async-mutex's semaphore walks its weights one by one on release, so
 * bytes are counted in 64 KiB steps (an ordinary review weighs one).
 */
const BUDGET_UNIT_BYTES = 64 * 1024;

/**
 * Lets a review's body be read only while the bodies being read and parsed fit in
 * `bytesInFlight`, in arrival order; the rest wait (their bytes stay in the kernel's socket
 * buffers) up to `waitMs`, then get 429 with `Retry-After: 1`. Waiting comes first because
 * under `failurePolicy: Fail` any answer but 200 refuses the write; 429 is for a backlog
 * the API server would time out on anyway. A body over `MAX_BODY_BYTES` is let through:
 * body-parser refuses it (413) before reading it.
 */
function admitBody(bytesInFlight: number, waitMs: number): RequestHandler {
  const units = Math.ceil(bytesInFlight / BUDGET_UNIT_BYTES);
  const budget = withTimeout(new Semaphore(units), waitMs);
  return async (req, res, next) => {
    const declared = req.get('content-length');
    const bytes = declared === undefined ? MAX_BODY_BYTES : Number(declared);
    if (bytes > MAX_BODY_BYTES) return next();
    let release: () => void;
    try {
      [, release] = await budget.acquire(Math.min(units, Math.max(1, Math.ceil(bytes / BUDGET_UNIT_BYTES))));
    } catch (err) {
      if (err !== E_TIMEOUT) throw err;
      res.set('Retry-After', '1');
      return refuse(res, 429, `too many review bodies being read at once; waited ${waitMs} ms, retry`);
    }
    if (res.closed) return release(); // the client left while waiting
    res.once('close', release);
    next();
  };
}

/**
 * With client verification on, only a client whose certificate chains to the client CA
 * may send reviews. Both a missing and an untrusted certificate fail authentication: 401.
 */
const requireVerifiedClient: RequestHandler = (req, res, next) => {
  const socket = req.socket as TLSSocket;
  if (socket.authorized) return next();
  const presented = Object.keys(socket.getPeerCertificate?.() ?? {}).length > 0;
  refuse(
    res,
    401,
    presented
      ? `client certificate is not trusted (${String(socket.authorizationError)}); this webhook accepts reviews only from a client certificate issued by its client CA`
      : 'a client certificate is required; this webhook accepts reviews only from a client certificate issued by its client CA',
  );
};

/** Maps body-parser failures to one-line 4xx answers. */
const bodyErrors: ErrorRequestHandler = (err: { status?: number; type?: string }, _req, res, next) => {
  if (res.headersSent) return next(err);
  switch (err.type) {
    case 'entity.too.large':
      return refuse(res, 413, `request body is larger than ${MAX_BODY_BYTES} bytes`);
    case 'entity.parse.failed':
      return refuse(res, 400, 'request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return refuse(res, 415, 'request body encoding or charset is not supported; send UTF-8 JSON without content encoding');
    case 'request.aborted':
    case 'request.size.invalid':
      return refuse(res, 400, 'request body was truncated');
    default:
      // Any other client-side body failure body-parser reports: still a one-line 4xx.
      if (err.status !== undefined && err.status >= 400 && err.status < 500) {
        return refuse(res, err.status, `request body could not be read (${err.type ?? 'unknown error'})`);
      }
      return next(err);
  }
};

/**
 * The express application: `POST /validate-spiderippool` and `POST /validate-configmap`
 * (HTTP 200 with the response AdmissionReview; 4xx with a `Status` for a malformed or
 * unauthenticated request, 429 for one that waited too long for room, see `admitBody`),
 * `GET /healthz` and `/livez` (always 200), `GET /readyz` (200 when every check passes,
 * else 503; `?verbose` lists them) and `GET /metrics` (Prometheus text). TLS and
 * listening are `startServer`'s (serve.ts).
 */
export function createApp({
  review,
  logger,
  readinessChecks,
  metrics,
  verifyClientCertificates,
  bodyBytesInFlight = MAX_BODY_BYTES_IN_FLIGHT,
  bodyWaitMs = BODY_WAIT_MS,
}: AppOptions): express.Express {
  const app = express();
  // Paths are exact: /validate-configmap only, not /VALIDATE-CONFIGMAP/.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get(['/healthz', '/livez'], (_req, res) => {
    res.type('text/plain').send('ok\n');
  });
  app.get('/readyz', (req, res) => {
    const { ready, text } = readinessReport(readinessChecks, req.query['verbose'] !== undefined);
    res.status(ready ? 200 : 503).type('text/plain').send(text);
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const handleReview = (req: Request, res: Response): void => {
    const started = process.hrtime.bigint();
    let outcome: ReviewOutcome;
    try {
      outcome = review(req.body);
    } catch (e) {
      if (e instanceof InvalidAdmissionReviewError) return refuse(res, 400, e.message);
      throw e;
    }
    const { request, review: answer } = outcome;
    res.locals['operation'] = request.operation;
    res.locals['allowed'] = String(answer.response.allowed);
    res.status(200).json(answer);
    // Every string from the request is bounded: a hostile review must not make a huge log line.
    const shown = (s: string | undefined) => (s === undefined ? undefined : truncate(s));
    logger.info(
      {
        path: req.path,
        uid: shown(request.uid),
        kind: shown(`${request.kind.kind}${request.kind.group ? '.' + request.kind.group : ''}`),
        namespace: shown(request.namespace),
        name: shown(request.name),
        operation: request.operation,
        subResource: shown(request.subResource),
        dryRun: request.dryRun ?? false,
        allowed: answer.response.allowed,
        code: answer.response.status?.code,
        latencyMs: Number(process.hrtime.bigint() - started) / 1e6,
      },
      'admission review',
    );
  };

  // inflate: false: the kube-apiserver sends plain JSON, and a compressed body could expand past the limit.
  const json = express.json({ limit: MAX_BODY_BYTES, type: () => true, strict: false, inflate: false });
  const authenticate: RequestHandler[] = verifyClientCertificates ? [requireVerifiedClient] : [];
  const admit = admitBody(bodyBytesInFlight, bodyWaitMs); // one budget for both paths
  for (const path of Object.values(WEBHOOK_PATHS)) {
    app.post(path, instrument(metrics, path), ...authenticate, requireJson, admit, json, handleReview);
    app.all(path, (_req, res) => {
      res.set('Allow', 'POST');
      refuse(res, 405, `use POST with an admission.k8s.io/v1 AdmissionReview body`);
    });
  }

  app.use((req, res) => {
    refuse(
      res,
      404,
      `no handler for ${req.method} ${quoteShown(req.path)}; webhooks are served at ${Object.values(WEBHOOK_PATHS).join(', ')}`,
    );
  });
  app.use(bodyErrors);
  // Last resort: a bug must not take the process down or show a stack trace to the client.
  const internalErrors: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    logger.error({ err, path: req.path }, 'internal error while serving a request');
    if (!res.headersSent) refuse(res, 500, 'internal error; see the webhook log');
  };
  app.use(internalErrors);
  return app;
}
