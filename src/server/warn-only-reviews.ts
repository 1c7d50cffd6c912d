/**
 * The warn-only candidate-pool webhooks (`/validate-pod`, `/validate-workload`,
 * `/validate-namespace`: tenant-written, `failurePolicy: Ignore`, `timeoutSeconds: 2`)
 * reviewed in a `node:worker_threads` Worker, so that nothing they are sent delays the
 * refusing webhooks on the main thread (docs/adr/0001-warn-only-worker-thread.md).
 *
 * The main thread hands the raw body over (transferred, not copied) and writes the answer
 * the worker sends back. Whatever goes wrong in the worker — a heap over its limit, a
 * review past its deadline, a full queue, a stuck or restarting worker — the review is
 * answered `allowed: true` with one warning saying it was not checked and why: never a
 * refusal for load, never a stall. The worker gets the pools as small messages
 * (src/store/pool-mirror.ts), never the objects.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { allowed } from '../admission/response.js';
import { encodeAdmissionReview } from '../admission/review.js';
import type { DualStack } from '../spiderpool/candidate-categories.js';
import { MAX_BODY_BYTES, WEBHOOKS } from '../defaults.js';
import type { PoolChangeListener } from '../store/pool-index.js';
import { mirrorMessages, snapshot, type MirrorMessage, type MirrorSource } from '../store/pool-mirror.js';
import type { ReviewAnswer } from './review-answer.js';

/** The paths whose reviews the worker answers: the warn-only webhooks of `WEBHOOKS`. */
export const WARN_ONLY_PATHS: readonly string[] = [WEBHOOKS.pod.path, WEBHOOKS.workload.path, WEBHOOKS.namespace.path];

/** The worker module as built beside this one (dist/server/); tests hand in a transpiled copy. */
const WARN_ONLY_WORKER_ENTRY = new URL('./warn-only-worker.js', import.meta.url);

export interface WarnOnlyLimits {
  /** A review not answered by the worker within this is answered allowed, unchecked; below the webhooks' 2 s `timeoutSeconds`. */
  answerMs: number;
  /** A worker that has not answered its oldest review for this long is terminated and replaced. */
  stuckMs: number;
  /** Reviews handed to the worker and not answered by it yet; more are answered at once, unchecked. */
  maxQueued: number;
  /** Body bytes handed to the worker and not answered yet (same rule). */
  maxQueuedBytes: number;
  /** The worker's V8 old-generation heap (`resourceLimits.maxOldGenerationSizeMb`): over it the worker dies, not the process. */
  heapMb: number;
  /** Delay before the first restart, doubled after each quick death up to `restartMaxMs`. */
  restartMinMs: number;
  restartMaxMs: number;
}

const DEFAULT_WARN_ONLY_LIMITS: WarnOnlyLimits = {
  answerMs: 1_500,
  stuckMs: 5_000,
  maxQueued: 256,
  maxQueuedBytes: 2 * MAX_BODY_BYTES, // the worker parses one at a time: two of the largest wait at most
  heapMb: 64, // a Pod body (≤ 1.5 MiB in etcd) parses in a few MiB; with the main thread's 192 it fits the pod's limit
  restartMinMs: 100,
  restartMaxMs: 5_000,
};

/** A worker that lived this long before dying restarts after `restartMinMs` again. */
const STABLE_MS = 30_000;

export interface WarnOnlyOptions {
  /** The worker module (default {@link WARN_ONLY_WORKER_ENTRY}). */
  entry?: URL;
  /** The pools (the cache's `PoolIndex`, followed through `onChange`, or a directory that never changes). */
  pools: MirrorSource & { onChange?(listener: PoolChangeListener): void };
  dualStack: () => DualStack;
  logger: Logger;
  limits?: Partial<WarnOnlyLimits>;
}

/** A message to the worker: a review, or a change of what it mirrors. */
export type ToWorker = { type: 'review'; id: number; path: string; body: ArrayBuffer } | MirrorMessage;
/** A message from the worker: the answer to review `id`. */
export type FromWorker = ReviewAnswer & { id: number };

/** A review the worker holds, and the client's answer while it is still owed. */
interface Handed {
  bytes: number;
  sentMs: number;
  uid: string;
  path: string;
  answer: ((answer: ReviewAnswer) => void) | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** How far into a body `request.uid` is looked for (the API server writes it first: Go encodes struct fields in order). */
const UID_SCAN_BYTES = 4_096;

/** `request.uid` as the API server writes it, found without parsing the body ('' when not found). */
export function leadingUid(body: Buffer): string {
  const head = body.toString('latin1', 0, Math.min(body.length, UID_SCAN_BYTES));
  return /"uid"\s*:\s*"([^"\\]{1,128})"/.exec(head)?.[1] ?? '';
}

/** The field each warn-only path reads candidates from, named in the unchecked warning. */
const CANDIDATE_FIELD: Readonly<Record<string, string>> = {
  [WEBHOOKS.pod.path]: 'metadata.annotations[ipam.spidernet.io/ippools]',
  [WEBHOOKS.workload.path]: 'spec.template.metadata.annotations[ipam.spidernet.io/ippools]',
  [WEBHOOKS.namespace.path]: 'metadata.annotations[ipam.spidernet.io/default-ipv4-ippool]',
};

/** The answer for a review that was not checked: allowed, one warning (one line, < 256 characters). */
export function uncheckedAnswer(uid: string, path: string, reason: string): ReviewAnswer {
  const field = CANDIDATE_FIELD[path] ?? 'metadata.annotations';
  const warning = `spiderpool: ${field}: candidate pools were not checked: ${reason}; the write is allowed`;
  return { type: 'review', json: JSON.stringify(encodeAdmissionReview(uid, allowed([warning]))), operation: '', allowed: true, refusedBy: [], causes: [] };
}

/** `body` as an ArrayBuffer of its own, to transfer (a slice of a shared one is copied: transferring it would detach its neighbours). */
function ownBuffer(body: Buffer): ArrayBuffer {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer) return body.buffer;
  return new Uint8Array(body).buffer;
}

/** The warn-only reviews' worker, restarted when it dies; see the module comment. */
export class WarnOnlyReviews {
  private readonly limits: WarnOnlyLimits;
  private readonly entry: URL;
  private worker: Worker | undefined;
  private startedMs = 0;
  /** Why no worker runs now (the unchecked answers' reason). */
  private down = 'the candidate-pool worker is starting';
  private backoffMs: number;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly watchdog: NodeJS.Timeout;
  private readonly handed = new Map<number, Handed>();
  private handedBytes = 0;
  private nextId = 0;
  private dualStackSent = '';
  private stopped = false;
  /** Workers started, the first included. */
  starts = 0;

  constructor(private readonly options: WarnOnlyOptions) {
    this.limits = { ...DEFAULT_WARN_ONLY_LIMITS, ...options.limits };
    this.entry = options.entry ?? WARN_ONLY_WORKER_ENTRY;
    this.backoffMs = this.limits.restartMinMs;
    options.pools.onChange?.((touched) => this.post(mirrorMessages(options.pools, touched)));
    this.watchdog = setInterval(() => this.checkStuck(), Math.max(100, this.limits.stuckMs / 4)).unref();
    this.spawn();
  }

  /**
   * Hands `body` (sent to `path`) to the worker; `answer` is called once, with the
   * worker's answer or an unchecked one. `body` is detached when it owns its memory.
   */
  submit(path: string, body: Buffer, answer: (answer: ReviewAnswer) => void): void {
    const uid = leadingUid(body);
    const full = this.handed.size >= this.limits.maxQueued || this.handedBytes + body.length > this.limits.maxQueuedBytes;
    if (this.worker === undefined || full) {
      return answer(uncheckedAnswer(uid, path, this.worker === undefined ? this.down : `${this.handed.size} reviews (${this.handedBytes} bytes) are queued`));
    }
    this.syncDualStack();
    const id = ++this.nextId;
    const timer = setTimeout(() => this.giveUp(id, `no answer within ${this.limits.answerMs} ms`), this.limits.answerMs);
    this.handed.set(id, { bytes: body.length, sentMs: performance.now(), uid, path, answer, timer });
    this.handedBytes += body.length;
    const buffer = ownBuffer(body);
    this.worker.postMessage({ type: 'review', id, path, body: buffer } satisfies ToWorker, [buffer]);
  }

  /** Reviews handed to the worker and not answered by it yet. */
  get queued(): number {
    return this.handed.size;
  }

  /** Terminates the worker; reviews it holds are answered unchecked. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchdog);
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    this.lost('the webhook is stopping');
    await worker?.terminate();
  }

  private spawn(): void {
    if (this.stopped) return;
    const { heapMb } = this.limits;
    // Young generation 8 MiB, as `npm start`'s --max-semi-space-size=8 keeps the main thread's: ~9 MiB less resident than 16.
    const worker = new Worker(this.entry, { resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 8 }, stdout: false, stderr: false });
    this.worker = worker;
    this.starts++;
    this.startedMs = performance.now();
    this.dualStackSent = '';
    this.post([snapshot(this.options.pools)]);
    worker.on('message', (message: FromWorker) => this.answered(message));
    worker.on('error', (err: Error & { code?: string }) => {
      const reason =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `the candidate-pool worker ran out of its ${heapMb} MiB heap` : 'the candidate-pool worker failed';
      this.died(worker, reason, err);
    });
    worker.on('exit', (code) => this.died(worker, `the candidate-pool worker exited (code ${code})`));
  }

  private post(messages: readonly MirrorMessage[]): void {
    for (const message of messages) this.worker?.postMessage(message satisfies ToWorker);
  }

  /** Tells the worker the dual-stack setting when it changed since last told (read at each review: the conf cache has no events). */
  private syncDualStack(): void {
    const dualStack = this.options.dualStack();
    const key = JSON.stringify(dualStack);
    if (key === this.dualStackSent) return;
    this.dualStackSent = key;
    this.post([{ type: 'dualStack', dualStack }]);
  }

  private answered(message: FromWorker): void {
    const handed = this.handed.get(message.id);
    if (handed === undefined) return;
    this.release(message.id, handed);
    const { id: _, ...answer } = message;
    handed.answer?.(answer);
  }

  /** The client's answer at the deadline; the worker still holds the body until it answers or dies. */
  private giveUp(id: number, reason: string): void {
    const handed = this.handed.get(id);
    if (handed?.answer === undefined) return;
    const { answer } = handed;
    handed.answer = handed.timer = undefined;
    answer(uncheckedAnswer(handed.uid, handed.path, reason));
  }

  private release(id: number, handed: Handed): void {
    clearTimeout(handed.timer);
    this.handed.delete(id);
    this.handedBytes -= handed.bytes;
  }

  /** Every review the worker held answered unchecked, for `reason`. */
  private lost(reason: string): void {
    this.worker = undefined;
    this.down = reason;
    for (const [id, handed] of this.handed) {
      this.release(id, handed);
      handed.answer?.(uncheckedAnswer(handed.uid, handed.path, reason));
    }
  }

  private died(worker: Worker, reason: string, err?: Error): void {
    if (this.worker !== worker) return; // 'error' then 'exit', or a worker already replaced
    this.lost(`${reason}; it restarts`);
    if (this.stopped) return;
    const delayMs = performance.now() - this.startedMs >= STABLE_MS ? this.limits.restartMinMs : this.backoffMs;
    this.backoffMs = Math.min(delayMs * 2, this.limits.restartMaxMs);
    this.options.logger.warn({ err: err?.message, restartInMs: delayMs, starts: this.starts }, `${reason}; reviews it held were allowed unchecked`);
    void worker.terminate();
    this.restartTimer = setTimeout(() => this.spawn(), delayMs);
  }

  /** A worker whose oldest review has waited past `stuckMs` is replaced (its reviews were answered at their deadline). */
  private checkStuck(): void {
    const oldest = this.handed.values().next().value;
    if (this.worker === undefined || oldest === undefined || performance.now() - oldest.sentMs < this.limits.stuckMs) return;
    this.died(this.worker, `the candidate-pool worker did not answer for ${this.limits.stuckMs} ms`);
  }
}
