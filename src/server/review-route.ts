/**
 * The review path (after controller-runtime's `webhook.Admission.ServeHTTP`): one express
 * handler per webhook path checks the client, the content type and the size, takes room in
 * the body budget, reads the body into one buffer, parses it, calls the pure reviewer and
 * writes the response AdmissionReview. Rules never see `req`/`res`.
 *
 * It does the work of several middlewares (body-parser, `res.json`, instrumentation) in
 * one: each request is one object (`Exchange`) with three small listeners on the request,
 * and no awaits.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { ReviewOutcome } from '../admission/review.js';
import { MAX_BODY_BYTES } from '../defaults.js';
import { quoteShown } from '../go/strconv-quote.js';
import type { RouteMetrics } from './metrics.js';
import type { BodyBudget, BodyHolder } from './body-budget.js';
import { answerReview, REVIEW_LOG_MESSAGE, reviewLogLevel, type ReviewAnswer } from './review-answer.js';
import { logRefusal, sendJson, sendJsonText, statusBody } from './status.js';
import type { WarnOnlyReviews } from './warn-only-reviews.js';

export interface ReviewRouteOptions {
  /** The URL path served (a `path` of `WEBHOOKS`), also its metrics' and log lines' `webhook`/`path`. */
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
  /** Reviews the bodies in the warn-only worker instead of with `review` (the warn-only paths of `serve`). */
  isolated?: WarnOnlyReviews;
}

/**
 * The `code` label of a request whose client left before it was answered (it gave up while
 * its body was arriving or waiting for room, e.g. at the kube-apiserver's timeout), so that
 * it is not counted under a status nobody was sent.
 */
const ABORTED_CODE_LABEL = 'aborted';

/** Only JSON is accepted, as the kube-apiserver sends it (`application/json`, maybe with parameters). */
const JSON_CONTENT_TYPE = /^application\/json[ \t]*(;|$)/i;

const ENCODING_REFUSED = 'request body encoding or charset is not supported; send UTF-8 JSON without content encoding';

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
    if (eq >= 0 && param.slice(0, eq).trim().toLowerCase() === 'charset')
      return param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
  }
  return '';
}

/**
 * How many `rawHeaders` entries (names and values) Node folds into `req.headers`: its
 * parser's default `maxHeaderPairs` (the server leaves `maxHeadersCount` unset). On Node 20
 * a request may carry a few more in `rawHeaders`, which `req.headers` leaves out; Node 24
 * answers such a request 431 itself.
 */
const FOLDED_HEADER_ENTRIES = 2000;

export interface BodyHead {
  contentType: string;
  contentLength: string | undefined;
  transferEncoding: string | undefined;
  contentEncoding: string | undefined;
}

/**
 * The request headers the review path reads, taken from `req.rawHeaders` as Node would
 * fold them into `req.headers` (the first `Content-Type` and `Content-Length` win; repeated
 * `Transfer-Encoding` and `Content-Encoding` are joined with ", "; only the first
 * {@link FOLDED_HEADER_ENTRIES} entries count). `req.headers` is built on first use, every
 * header lower-cased into a new object: the review path never asks for it.
 */
export function bodyHead(raw: readonly string[]): BodyHead {
  const head: BodyHead = { contentType: '', contentLength: undefined, transferEncoding: undefined, contentEncoding: undefined };
  let typeSeen = false;
  const end = Math.min(raw.length, FOLDED_HEADER_ENTRIES);
  for (let i = 0; i < end; i += 2) {
    const name = raw[i]!;
    // Only the lengths of the four names are worth lower-casing for.
    if (name.length !== 12 && name.length !== 14 && name.length !== 16 && name.length !== 17) continue;
    const value = raw[i + 1]!;
    switch (name.toLowerCase()) {
      case 'content-type':
        if (!typeSeen) head.contentType = value;
        typeSeen = true;
        break;
      case 'content-length':
        head.contentLength ??= value;
        break;
      case 'transfer-encoding':
        head.transferEncoding = head.transferEncoding === undefined ? value : `${head.transferEncoding}, ${value}`;
        break;
      case 'content-encoding':
        head.contentEncoding = head.contentEncoding === undefined ? value : `${head.contentEncoding}, ${value}`;
        break;
    }
  }
  return head;
}

/**
 * What the request head says about the body: 415 for another content type, a charset
 * other than UTF-8 or a content encoding (a compressed body could expand past the limit),
 * 400 for no body, 413 for a declared length over `MAX_BODY_BYTES`. The header is read
 * directly: express's `req.is` answers "no" for a request without a body, which deserves
 * "empty body" instead.
 */
function bodyRefusal(head: BodyHead, declaredBytes: number): Refusal | undefined {
  const type = head.contentType;
  if (type !== 'application/json') {
    if (!JSON_CONTENT_TYPE.test(type)) return [415, `content type ${quoteShown(type)} is not supported; send application/json`];
    const charset = charsetOf(type);
    if (charset !== '' && charset !== 'utf-8') return [415, ENCODING_REFUSED];
  }
  if (declaredBytes === 0) return [400, 'request body is empty; send an admission.k8s.io/v1 AdmissionReview'];
  const encoding = head.contentEncoding;
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return [415, ENCODING_REFUSED];
  if (declaredBytes > MAX_BODY_BYTES) return [413, `request body is larger than ${MAX_BODY_BYTES} bytes`];
  return undefined;
}

/**
 * One request on a review path, from its arrival to its answer. It is counted once, when
 * answered (by the HTTP status written) or when the client leaves first (`aborted`), and
 * holds its room in the body budget from taking it until the body is parsed and reviewed
 * or dropped.
 *
 * Nothing is stored on `req` or `res` and no listener is put on `res` unless the body
 * has to wait: a property added to Node's request or response objects changes their
 * hidden class, which measured ~5% of the express floor's CPU per request in Node's own
 * HTTP code, a `close` listener ~2%.
 */
class Exchange implements BodyHolder {
  readonly arrivedMs = performance.now();
  /** The client's address: the budget lets bodies in fairly per address. */
  readonly address: string;
  /** From `Content-Length`; -1 for a chunked body; 0 for none. */
  readonly declaredBytes: number;
  /** Budget bytes held until the body is reviewed or dropped. */
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
  /** Counted in the request metrics (exactly once). */
  counted = false;

  constructor(
    readonly route: ReviewRoute,
    readonly req: Request,
    readonly res: Response,
    readonly next: NextFunction,
    head: BodyHead,
  ) {
    this.address = req.socket.remoteAddress ?? '';
    this.declaredBytes = head.transferEncoding !== undefined ? -1 : head.contentLength === undefined ? 0 : Number(head.contentLength);
  }

  /** Starts reading the body (its room in the budget is taken). */
  read(): void {
    if (this.declaredBytes < 0) this.chunks = [];
    this.req.on('data', (chunk: Buffer) => this.received(chunk));
    this.req.on('end', () => this.ended());
    // The client left before the body ended (Node's `aborted`): nothing can be answered.
    this.req.on('error', () => this.gone());
  }

  received(chunk: Buffer): void {
    if (this.done) return;
    if (this.chunks === undefined) {
      if (this.body === undefined) {
        if (chunk.length === this.declaredBytes) {
          this.body = chunk;
          this.receivedBytes = chunk.length;
          return;
        }
        this.body = Buffer.allocUnsafe(this.declaredBytes);
      }
      // Node delivers at most Content-Length bytes; copy() never writes past the buffer anyway.
      this.receivedBytes += chunk.copy(this.body, this.receivedBytes);
      return;
    }
    this.receivedBytes += chunk.length;
    if (this.receivedBytes <= MAX_BODY_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    // A chunked body over the limit: answer now, drop the rest as it arrives, then close.
    this.chunks = undefined;
    this.refuse(413, `request body is larger than ${MAX_BODY_BYTES} bytes`);
  }

  ended(): void {
    if (this.done) return;
    try {
      this.answer();
    } catch (e) {
      this.fail(e);
    }
  }

  /** The whole body arrived: parse, review, answer (here, or in the warn-only worker when the route has one). */
  answer(): void {
    this.done = true;
    const { route } = this;
    const body = this.chunks === undefined ? (this.body ?? Buffer.alloc(0)) : Buffer.concat(this.chunks, this.receivedBytes);
    this.body = this.chunks = undefined;
    if (this.declaredBytes >= 0 && this.receivedBytes !== this.declaredBytes) return this.refuse(400, 'request body was truncated');
    if (route.isolated !== undefined) return route.isolated.submit(route.path, body, (answer) => this.write(answer));
    const { logger } = route;
    this.write(answerReview(body, route.path, route.review, (level) => logger.isLevelEnabled(level)));
  }

  /** Writes `answer`, counts its decisions, and logs its line at its `reviewLogLevel`. */
  write(answer: ReviewAnswer): void {
    if (this.counted) return; // a worker's answer for a client that left
    if (answer.type === 'refuse') return this.refuse(answer.code, answer.message);
    if (answer.type === 'error') return this.fail(new Error(answer.message));
    const { route } = this;
    this.done = true;
    sendJsonText(this.res, 200, answer.json);
    this.count('200', answer.operation, String(answer.allowed));
    if (answer.refusedBy.length > 0) route.metrics.refused(answer.refusedBy);
    if (answer.causes.length > 0) route.metrics.decided(answer.causes);
    if (answer.log)
      route.logger[reviewLogLevel(answer.allowed, answer.causes)](
        { ...answer.log, latencyUs: Math.round((performance.now() - this.arrivedMs) * 1000) },
        REVIEW_LOG_MESSAGE,
      );
  }

  /** Writes the answer, gives back the budget and counts the request by `code`. */
  send(code: number, body: unknown): void {
    this.done = true;
    sendJson(this.res, code, body);
    this.count(String(code), '', '');
  }

  /**
   * Answers a `Status`; before the body was read whole the connection closes after it (its
   * unread bytes would otherwise be read as the next request, and time out as one).
   */
  refuse(code: number, message: string): void {
    if (!this.req.complete) this.res.shouldKeepAlive = false;
    this.send(code, statusBody(code, message));
    logRefusal(this.route.logger, this.route.path, code, message);
  }

  /** A bug: express's last error handler logs it and answers 500. */
  fail(err: unknown): void {
    this.done = true;
    this.count('500', '', '');
    this.next(err);
  }

  /**
   * The budget drops a body arriving too slowly while others wait: answered 408 at once,
   * the rest of the body dropped as it arrives, then closed.
   */
  preempt(): void {
    if (this.done) return;
    this.body = this.chunks = undefined;
    this.refuse(408, 'request body arrived too slowly while other reviews waited for room; send the whole body at once');
  }

  /** Body bytes Node holds unread while the body waits for room (Infinity once all arrived). */
  unreadBytes(): number {
    return this.req.complete ? Infinity : this.req.readableLength;
  }

  /** The client left before an answer could be written. */
  gone(): void {
    this.done = true;
    this.body = this.chunks = undefined;
    this.count(ABORTED_CODE_LABEL, '', '');
  }

  /** Once per request: the budget goes back and the request is counted. */
  count(code: string, operation: string, allowed: string): void {
    if (this.counted) return;
    this.counted = true;
    const { route } = this;
    this.cancelWait?.();
    if (this.heldBytes > 0) route.budget.give(this.heldBytes, this);
    this.heldBytes = 0;
    route.metrics.finished((performance.now() - this.arrivedMs) / 1000, code, operation, allowed);
  }

  /**
   * Waits for room in the budget (see `ReviewRoute.handle`): reads the body once granted,
   * answers 429 after `bodyWaitMs`, and leaves the queue if the client goes first.
   */
  waitForRoom(bytes: number): void {
    const { route, res } = this;
    this.cancelWait = route.budget.wait(
      bytes,
      route.bodyWaitMs,
      () => {
        this.cancelWait = undefined;
        this.heldBytes = bytes;
        this.read();
      },
      () => {
        this.cancelWait = undefined;
        res.setHeader('Retry-After', '1');
        this.refuse(429, `too many review bodies being read at once; waited ${route.bodyWaitMs} ms, retry`);
      },
      this,
    );
    res.once('close', () => {
      if (this.cancelWait !== undefined) this.gone();
    });
  }
}

/** The handler of one webhook path, as an express `RequestHandler` (`handle`). */
export class ReviewRoute {
  readonly path: string;
  readonly review: (body: unknown) => ReviewOutcome;
  readonly logger: Logger;
  readonly metrics: RouteMetrics;
  readonly budget: BodyBudget;
  readonly bodyWaitMs: number;
  readonly isolated: WarnOnlyReviews | undefined;
  private readonly verifyClientCertificates: boolean;

  constructor(options: ReviewRouteOptions) {
    this.path = options.path;
    this.review = options.review;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.budget = options.budget;
    this.verifyClientCertificates = options.verifyClientCertificates;
    this.bodyWaitMs = options.bodyWaitMs;
    this.isolated = options.isolated;
  }

  /**
   * Lets the body be read only while the bodies being read and parsed fit in the budget,
   * fairly per client address; the rest wait (their bytes stay in the kernel's socket buffers) up
   * to `bodyWaitMs`, then get 429 with `Retry-After: 1`. Waiting comes first because under
   * `failurePolicy: Fail` any answer but 200 refuses the write; 429 is for a backlog the
   * API server would time out on anyway. A chunked body weighs `MAX_BODY_BYTES`.
   */
  readonly handle: RequestHandler = (req, res, next) => {
    const head = bodyHead(req.rawHeaders);
    const exchange = new Exchange(this, req, res, next, head);
    this.metrics.started();
    try {
      const refusal = (this.verifyClientCertificates ? clientRefusal(req) : undefined) ?? bodyRefusal(head, exchange.declaredBytes);
      if (refusal !== undefined) return exchange.refuse(...refusal);
      const bytes = this.budget.weigh(exchange.declaredBytes < 0 ? MAX_BODY_BYTES : exchange.declaredBytes);
      if (!this.budget.tryTake(bytes, exchange)) return exchange.waitForRoom(bytes);
      exchange.heldBytes = bytes;
      exchange.read();
    } catch (e) {
      exchange.fail(e);
    }
  };
}
