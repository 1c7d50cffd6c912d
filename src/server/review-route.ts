/**
 * The review path (after controller-runtime's `webhook.Admission.ServeHTTP`): one express
 * handler per webhook path checks the client, the content type and the size, takes room in
 * the body budget, reads the body into one buffer, parses it, calls the pure reviewer and
 * writes the response AdmissionReview. Rules never see `req`/`res`.
 *
 * It does the work of several middlewares (body-parser, `res.json`, instrumentation) in
 * one: each request is one object (`Exchange`) and listeners shared by all requests, with
 * no awaits and no per-request closures unless a body has to wait for room.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { InvalidAdmissionReviewError, type ReviewOutcome } from '../admission/review.js';
import { MAX_BODY_BYTES } from '../defaults.js';
import { quoteShown, truncate } from '../field/quote.js';
import type { RouteMetrics } from '../metrics/webhook.js';
import type { BodyBudget } from './body-budget.js';
import { refuse, sendJson } from './status.js';

export interface ReviewRouteOptions {
  /** The URL path served (`WEBHOOK_PATHS`), also its metrics' and log lines' `webhook`/`path`. */
  path: string;
  /** The pure reviewer (see `createReviewer`). */
  review: (body: unknown) => ReviewOutcome;
  logger: Logger;
  metrics: RouteMetrics;
  /** Require a verified client certificate (the TLS layer asked for one and checked it). */
  verifyClientCertificates: boolean;
  /** Shared by every webhook path. */
  budget: BodyBudget;
  /** How long a review waits for room in `budget` before a 429, in milliseconds. */
  bodyWaitMs: number;
}

/**
 * The `code` label of a request whose connection closed before its response was sent whole
 * (the client gave up, e.g. the kube-apiserver's timeout): `res.statusCode` would be the
 * default 200 and count a request nobody received an answer to as answered.
 */
export const ABORTED_CODE_LABEL = 'aborted';

/** Only JSON is accepted, as the kube-apiserver sends it (`application/json`, maybe with parameters). */
const JSON_CONTENT_TYPE = /^application\/json[ \t]*(;|$)/i;

const ENCODING_REFUSED = 'request body encoding or charset is not supported; send UTF-8 JSON without content encoding';

/** Where a request's and its response's listeners find their exchange. */
const EXCHANGE = Symbol('review exchange');
type Carrying<T> = T & { [EXCHANGE]?: Exchange };

/** A refusal found in the request head: HTTP code and message. */
type Refusal = [code: number, message: string];

/**
 * With client verification on, only a client whose certificate chains to the client CA
 * may send reviews. Both a missing and an untrusted certificate fail authentication: 401.
 */
function clientRefusal(req: IncomingMessage): Refusal | undefined {
  const socket = req.socket as TLSSocket;
  if (socket.authorized) return undefined;
  const presented = Object.keys(socket.getPeerCertificate?.() ?? {}).length > 0;
  return [
    401,
    presented
      ? `client certificate is not trusted (${String(socket.authorizationError)}); this webhook accepts reviews only from a client certificate issued by its client CA`
      : 'a client certificate is required; this webhook accepts reviews only from a client certificate issued by its client CA',
  ];
}

/**
 * The charset parameter of a content type, lower-cased and unquoted ('' when absent).
 * Parameters that do not parse are ignored, as body-parser did.
 */
function charsetOf(type: string): string {
  for (const param of type.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq >= 0 && param.slice(0, eq).trim().toLowerCase() === 'charset') return param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return '';
}

/**
 * What the request head says about the body: 415 for another content type, a charset
 * other than UTF-8 or a content encoding (a compressed body could expand past the limit),
 * 400 for no body, 413 for a declared length over `MAX_BODY_BYTES`. The header is read
 * directly: express's `req.is` answers "no" for a request without a body, which deserves
 * "empty body" instead.
 */
function bodyRefusal(req: IncomingMessage, declaredBytes: number): Refusal | undefined {
  const type = req.headers['content-type'] ?? '';
  if (type !== 'application/json') {
    if (!JSON_CONTENT_TYPE.test(type)) return [415, `content type ${quoteShown(type)} is not supported; send application/json`];
    const charset = charsetOf(type);
    if (charset !== '' && charset !== 'utf-8') return [415, ENCODING_REFUSED];
  }
  if (declaredBytes === 0) return [400, 'request body is empty; send an admission.k8s.io/v1 AdmissionReview'];
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return [415, ENCODING_REFUSED];
  if (declaredBytes > MAX_BODY_BYTES) return [413, `request body is larger than ${MAX_BODY_BYTES} bytes`];
  return undefined;
}

/** One request on a review path, from its arrival to the close of its response. */
class Exchange {
  readonly startedMs = performance.now();
  /** From `Content-Length`; -1 for a chunked body; 0 for none. */
  readonly declaredBytes: number;
  /** Budget bytes held until the response closes. */
  heldBytes = 0;
  /** Leaves the budget's queue while waiting for room. */
  cancelWait: (() => void) | undefined;
  /**
   * The body so far: one buffer of the declared length (the first chunk itself when it is
   * the whole body, as an ordinary review arrives: no copy), or the chunks of a chunked one.
   */
  body: Buffer | undefined;
  chunks: Buffer[] | undefined;
  receivedBytes = 0;
  /** Answered (or given up) before the body ended: later body events are ignored. */
  done = false;
  /** The decided review's labels ('' until decided). */
  operation = '';
  allowed = '';

  constructor(
    readonly route: ReviewRoute,
    readonly req: Carrying<Request>,
    readonly res: Carrying<Response>,
    readonly next: NextFunction,
  ) {
    const length = req.headers['content-length'];
    this.declaredBytes = req.headers['transfer-encoding'] !== undefined ? -1 : length === undefined ? 0 : Number(length);
  }

  /** Starts reading the body (its room in the budget is taken). */
  read(): void {
    if (this.declaredBytes < 0) this.chunks = [];
    this.req[EXCHANGE] = this;
    this.req.on('data', onRequestData);
    this.req.on('end', onRequestEnd);
    this.req.on('error', onRequestError);
  }

  /** The whole body arrived: parse, review, answer. */
  answer(): void {
    this.done = true;
    const { route, res } = this;
    const body = this.chunks === undefined ? (this.body ?? Buffer.alloc(0)) : Buffer.concat(this.chunks, this.receivedBytes);
    this.body = this.chunks = undefined;
    if (this.declaredBytes >= 0 && this.receivedBytes !== this.declaredBytes) return this.refuse(400, 'request body was truncated');
    let parsed: unknown;
    try {
      parsed = JSON.parse(utf8Text(body));
    } catch {
      return this.refuse(400, 'request body is not valid JSON');
    }
    let outcome: ReviewOutcome;
    try {
      outcome = route.review(parsed);
    } catch (e) {
      if (e instanceof InvalidAdmissionReviewError) return this.refuse(400, e.message);
      throw e;
    }
    const { request, review } = outcome;
    const allowed = review.response.allowed;
    this.operation = request.operation;
    this.allowed = allowed ? 'true' : 'false';
    sendJson(res, 200, review);
    // controller-runtime logs every review at V(5); a denial is what an operator looks for.
    const level = allowed ? 'debug' : 'info';
    if (!route.logger.isLevelEnabled(level)) return;
    route.logger[level](
      {
        path: route.path,
        uid: shown(request.uid),
        kind: shown(`${request.kind.kind}${request.kind.group ? '.' + request.kind.group : ''}`),
        namespace: shown(request.namespace),
        name: shown(request.name),
        operation: request.operation,
        subResource: shown(request.subResource),
        dryRun: request.dryRun ?? false,
        allowed,
        code: review.response.status?.code,
        latencyMs: performance.now() - this.startedMs,
      },
      'admission review',
    );
  }

  refuse(code: number, message: string): void {
    this.done = true;
    refuse(this.res, this.route.logger, this.route.path, code, message);
  }

  /** A bug: express's last error handler logs it and answers 500. */
  fail(err: unknown): void {
    this.done = true;
    this.next(err);
  }
}

/** Every string from the request is bounded: a hostile review must not make a huge log line. */
function shown(s: string | undefined): string | undefined {
  return s === undefined ? undefined : truncate(s);
}

/** The body as text: UTF-8 (invalid sequences become U+FFFD), without a byte order mark. */
function utf8Text(body: Buffer): string {
  return body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.toString('utf8', 3) : body.toString('utf8');
}

function onRequestData(this: Carrying<IncomingMessage>, chunk: Buffer): void {
  const exchange = this[EXCHANGE]!;
  if (exchange.done) return;
  if (exchange.chunks === undefined) {
    if (exchange.body === undefined) {
      if (chunk.length === exchange.declaredBytes) {
        exchange.body = chunk;
        exchange.receivedBytes = chunk.length;
        return;
      }
      exchange.body = Buffer.allocUnsafe(exchange.declaredBytes);
    }
    // Node delivers at most Content-Length bytes; copy() never writes past the buffer anyway.
    exchange.receivedBytes += chunk.copy(exchange.body, exchange.receivedBytes);
    return;
  }
  exchange.receivedBytes += chunk.length;
  if (exchange.receivedBytes <= MAX_BODY_BYTES) {
    exchange.chunks!.push(chunk);
    return;
  }
  // A chunked body over the limit: answer now, drop the rest as it arrives, then close.
  exchange.chunks = undefined;
  exchange.res.shouldKeepAlive = false;
  exchange.refuse(413, `request body is larger than ${MAX_BODY_BYTES} bytes`);
}

function onRequestEnd(this: Carrying<IncomingMessage>): void {
  const exchange = this[EXCHANGE]!;
  if (exchange.done) return;
  try {
    exchange.answer();
  } catch (e) {
    exchange.fail(e);
  }
}

/** The client left before the body ended (Node's `aborted`): nothing can be answered. */
function onRequestError(this: Carrying<IncomingMessage>): void {
  const exchange = this[EXCHANGE]!;
  exchange.done = true;
  exchange.body = exchange.chunks = undefined;
}

/** The response is finished, or its connection closed: give back the budget and count it. */
function onResponseClose(this: Carrying<ServerResponse>): void {
  const exchange = this[EXCHANGE]!;
  const { route } = exchange;
  exchange.cancelWait?.();
  if (exchange.heldBytes > 0) route.budget.give(exchange.heldBytes);
  exchange.heldBytes = 0;
  const code = this.writableFinished ? String(this.statusCode) : ABORTED_CODE_LABEL;
  route.metrics.finished((performance.now() - exchange.startedMs) / 1000, code, exchange.operation, exchange.allowed);
}

/** The handler of one webhook path, as an express `RequestHandler` (`handle`). */
export class ReviewRoute {
  readonly path: string;
  readonly review: (body: unknown) => ReviewOutcome;
  readonly logger: Logger;
  readonly metrics: RouteMetrics;
  readonly budget: BodyBudget;
  private readonly verifyClientCertificates: boolean;
  private readonly bodyWaitMs: number;

  constructor(options: ReviewRouteOptions) {
    this.path = options.path;
    this.review = options.review;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.budget = options.budget;
    this.verifyClientCertificates = options.verifyClientCertificates;
    this.bodyWaitMs = options.bodyWaitMs;
  }

  /**
   * Lets the body be read only while the bodies being read and parsed fit in the budget,
   * in arrival order; the rest wait (their bytes stay in the kernel's socket buffers) up
   * to `bodyWaitMs`, then get 429 with `Retry-After: 1`. Waiting comes first because under
   * `failurePolicy: Fail` any answer but 200 refuses the write; 429 is for a backlog the
   * API server would time out on anyway. A chunked body weighs `MAX_BODY_BYTES`.
   */
  readonly handle: RequestHandler = (req, res, next) => {
    const exchange = new Exchange(this, req, res, next);
    this.metrics.started();
    (res as Carrying<Response>)[EXCHANGE] = exchange;
    res.on('close', onResponseClose);
    const refusal = (this.verifyClientCertificates ? clientRefusal(req) : undefined) ?? bodyRefusal(req, exchange.declaredBytes);
    if (refusal !== undefined) return exchange.refuse(...refusal);
    const bytes = this.budget.weigh(exchange.declaredBytes < 0 ? MAX_BODY_BYTES : exchange.declaredBytes);
    if (this.budget.tryTake(bytes)) {
      exchange.heldBytes = bytes;
      return exchange.read();
    }
    exchange.cancelWait = this.budget.wait(
      bytes,
      this.bodyWaitMs,
      () => {
        exchange.cancelWait = undefined;
        exchange.heldBytes = bytes;
        exchange.read();
      },
      () => {
        exchange.cancelWait = undefined;
        res.setHeader('Retry-After', '1');
        exchange.refuse(429, `too many review bodies being read at once; waited ${this.bodyWaitMs} ms, retry`);
      },
    );
  };
}
