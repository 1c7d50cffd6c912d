/**
 * The review path, in the shape of controller-runtime's `Webhook.ServeHTTP`
 * (pkg/webhook/admission/http.go): check the head, read the body (bounded), parse and review
 * it, write the answer; each failure is one early `write(errored(code, message))`, and
 * `Exchange.write` alone answers, counts and logs. Rules never see `req`/`res`.
 *
 * Beside controller-runtime's steps, for tenants (docs/adr/0002-json-shape-bounds.md,
 * 0003-connection-policy.md): client certificates, a body budget shared fairly per client
 * address (429 after a wait, 408 for a body that stalls while others wait), and the JSON
 * shape checked before `JSON.parse` (review-body.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ReviewOutcome } from '../admission/review.js';
import { MAX_BODY_BYTES } from '../defaults.js';
import type { RouteMetrics } from './metrics.js';
import type { BodyBudget, BodyHolder } from './body-budget.js';
import { answerReview, errored, REVIEW_LOG_MESSAGE, reviewLogLevel, type Refusal, type ReviewAnswer, type ReviewLogLevel } from './review-answer.js';
import { BodyBytes } from './review-body.js';
import { type BodyHead, bodyHead, bodyRefusal, clientRefusal, declaredBytesOf, TOO_LARGE } from './review-head.js';
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

type Reviewed = Extract<ReviewAnswer, { type: 'review' }>;
/** A review's answer (200), a refusal (a `Status`), or nothing written here: counted under `code` alone. */
type Ending = Reviewed | Refusal | { type: 'unanswered'; code: string };

/**
 * The client left before it was answered (while its body was arriving or waiting for room, e.g.
 * at the kube-apiserver's timeout): counted `aborted`, not under a status nobody was sent.
 */
const GONE: Ending = { type: 'unanswered', code: 'aborted' };
/** A bug: app.ts's last resort logs it and answers 500. */
const FAILED: Ending = { type: 'unanswered', code: '500' };

const PREEMPTED = errored(408, 'request body arrived too slowly while other reviews waited for room; send the whole body at once');

/**
 * One request on a review path, from its arrival to its answer: what the budget sees of it
 * (a `BodyHolder`), the room it holds, its body, and the handler's pending step, which an
 * early end (preempted, chunked body too large, client gone) resumes.
 *
 * Nothing is stored on `req` or `res` and no listener is put on `res` unless the body
 * has to wait: a property added to Node's request or response objects changes their
 * hidden class, which measured ~5% of the express floor's CPU per request, a `close` listener ~2%.
 */
class Exchange implements BodyHolder {
  readonly arrivedMs = performance.now();
  /** The client's address: the budget lets bodies in fairly per address. */
  readonly address: string;
  readonly head: BodyHead;
  /** From `Content-Length`; -1 for a chunked body; 0 for none. */
  readonly declaredBytes: number;
  /** Budget bytes held from taking room until the end. */
  private heldBytes = 0;
  /** Leaves the budget's queue while waiting for room. */
  private cancelWait: (() => void) | undefined;
  /** The body while it is read (dropped at the end). */
  private body: BodyBytes | undefined;
  /** Resolves the step the handler awaits. */
  private resume: ((ending: Ending) => void) | undefined;
  /** Written (or given up): later events (the rest of a dropped body, a client leaving after its answer) change nothing. */
  private ended = false;
  /** Counted in the route's metrics (an ending whose sending threw is not, until `fail`). */
  private counted = false;

  constructor(
    readonly route: ReviewRoute,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** Told of a bug (an error thrown while serving): app.ts's last resort logs it and answers 500. */
    readonly next: (err: unknown) => void,
  ) {
    this.address = req.socket.remoteAddress ?? '';
    this.head = bodyHead(req.rawHeaders);
    this.declaredBytes = declaredBytesOf(this.head);
  }

  get receivedBytes(): number {
    return this.body?.receivedBytes ?? 0;
  }

  /**
   * Takes room in the budget: at once when it fits, else waiting up to `bodyWaitMs` (then
   * 429); undefined once taken, or how the wait ended. A chunked body weighs `MAX_BODY_BYTES`.
   */
  takeRoom(): Promise<Ending | undefined> | undefined {
    const { budget, bodyWaitMs } = this.route;
    const bytes = budget.weigh(this.declaredBytes < 0 ? MAX_BODY_BYTES : this.declaredBytes);
    if (budget.tryTake(bytes, this)) {
      this.heldBytes = bytes;
      return undefined;
    }
    this.res.once('close', () => {
      if (this.cancelWait !== undefined) this.write(GONE);
    });
    return this.step<Ending | undefined>((done) => {
      this.cancelWait = budget.wait(
        bytes,
        bodyWaitMs,
        () => {
          this.cancelWait = undefined;
          this.heldBytes = bytes;
          done(undefined);
        },
        () => {
          this.cancelWait = undefined;
          done(errored(429, `too many review bodies being read at once; waited ${bodyWaitMs} ms, retry`));
        },
        this,
      );
    });
  }

  /** Reads the body (its room taken): the body whole, or how the reading ended (400 truncated, 413). */
  readBody(): Promise<Buffer | Ending> {
    this.body = new BodyBytes(this.declaredBytes);
    return this.step<Buffer | Ending>((done) => {
      this.req.on('data', (chunk: Buffer) => {
        if (this.body?.add(chunk) === false) this.write(TOO_LARGE); // answered now, the rest dropped as it arrives
      });
      this.req.on('end', () => done(this.body?.bytes() ?? errored(400, 'request body was truncated')));
      // The client left before the body ended (Node's `aborted`): nothing can be answered.
      this.req.on('error', () => this.write(GONE));
    });
  }

  /** A step that `start` ends by calling back, or {@link write} by ending the exchange first. */
  private step<T>(start: (done: (value: T) => void) => void): Promise<T | Ending> {
    return new Promise((resolve) => {
      this.resume = resolve;
      start(resolve);
    });
  }

  /**
   * The budget drops a body arriving too slowly while others wait (one that arrived whole is
   * being reviewed): 408 at once, so that its room goes back before the next holder is judged.
   */
  preempt(): void {
    if (!this.req.complete) this.write(PREEMPTED);
  }

  /** Body bytes Node holds unread while the body waits for room (Infinity once all arrived). */
  unreadBytes(): number {
    return this.req.complete ? Infinity : this.req.readableLength;
  }

  /**
   * The one place an exchange ends (controller-runtime's `writeResponse`): writes `ending`,
   * resumes the handler's pending step with it, gives the room back, counts and logs.
   */
  write(ending: Ending): void {
    if (this.ended) return;
    this.ended = true;
    this.resume?.(ending);
    this.body = undefined;
    this.cancelWait?.();
    if (this.heldBytes > 0) this.route.budget.give(this.heldBytes, this);
    const { logger, path } = this.route;
    switch (ending.type) {
      case 'review':
        sendJsonText(this.res, 200, ending.json);
        this.count('200', ending.operation, String(ending.allowed));
        return this.record(ending);
      case 'refuse':
        this.sendStatus(ending);
        this.count(String(ending.code));
        return logRefusal(logger, path, ending.code, ending.message);
      case 'unanswered':
        return this.count(ending.code);
    }
  }

  /**
   * A bug: counted 500 unless counted already (an answer whose sending threw is not), then
   * app.ts's last resort logs it and answers 500.
   */
  fail(err: unknown): void {
    this.write(FAILED);
    if (!this.counted) this.count('500');
    this.next(err);
  }

  private count(code: string, operation = '', allowed = ''): void {
    this.counted = true;
    this.route.metrics.finished(this.elapsedMs() / 1000, code, operation, allowed);
  }

  /**
   * A `Status`; before the body was read whole the connection closes after it (its unread
   * bytes would otherwise be read as the next request, and time out as one).
   */
  private sendStatus({ code, message }: Refusal): void {
    if (!this.req.complete) this.res.shouldKeepAlive = false;
    if (code === 429) this.res.setHeader('Retry-After', '1');
    sendJson(this.res, code, statusBody(code, message));
  }

  /** A review's refusals and decisions counted, and its log line at its `reviewLogLevel`. */
  private record(answer: Reviewed): void {
    const { metrics, logger } = this.route;
    if (answer.refusedBy.length > 0) metrics.refused(answer.refusedBy);
    if (answer.causes.length > 0) metrics.decided(answer.causes);
    if (answer.log)
      logger[reviewLogLevel(answer.allowed, answer.causes)]({ ...answer.log, latencyUs: Math.round(this.elapsedMs() * 1000) }, REVIEW_LOG_MESSAGE);
  }

  private elapsedMs(): number {
    return performance.now() - this.arrivedMs;
  }
}

/** The handler of one webhook path (`handle`), for Node's `request` event or an express route. */
export class ReviewRoute {
  readonly path: string;
  readonly logger: Logger;
  readonly metrics: RouteMetrics;
  readonly budget: BodyBudget;
  readonly bodyWaitMs: number;
  private readonly review: (body: unknown) => ReviewOutcome;
  private readonly isolated: WarnOnlyReviews | undefined;
  private readonly verifyClientCertificates: boolean;
  /** Whether the review's log line is wanted at `level` (answerReview builds it only then). */
  private readonly logs = (level: ReviewLogLevel) => this.logger.isLevelEnabled(level);

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

  readonly handle = (req: IncomingMessage, res: ServerResponse, next: (err: unknown) => void): void => {
    const exchange = new Exchange(this, req, res, next);
    this.serve(exchange).catch((err: unknown) => exchange.fail(err));
  };

  /**
   * One review. The body is read only while the bodies being read and parsed fit in the
   * budget, fairly per client address; the rest wait (their bytes stay in the kernel's socket
   * buffers) up to `bodyWaitMs`, then get 429 with `Retry-After: 1`. Waiting comes first
   * because under `failurePolicy: Fail` any answer but 200 refuses the write; 429 is for a
   * backlog the API server would time out on anyway.
   */
  private async serve(x: Exchange): Promise<void> {
    this.metrics.started();
    const refusal = (this.verifyClientCertificates ? clientRefusal(x.req) : undefined) ?? bodyRefusal(x.head, x.declaredBytes);
    if (refusal !== undefined) return x.write(refusal);
    const noRoom = await x.takeRoom();
    if (noRoom !== undefined) return x.write(noRoom);
    const body = await x.readBody();
    if (!Buffer.isBuffer(body)) return x.write(body);
    const answer = this.isolated === undefined ? answerReview(body, this.path, this.review, this.logs) : await this.inWorker(this.isolated, body);
    if (answer.type === 'error') throw new Error(answer.message); // a bug in the worker
    x.write(answer);
  }

  /** The body reviewed in the warn-only worker. */
  private inWorker(isolated: WarnOnlyReviews, body: Buffer): Promise<ReviewAnswer> {
    return new Promise((resolve) => isolated.submit(this.path, body, resolve));
  }
}
