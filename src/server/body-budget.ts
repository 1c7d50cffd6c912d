import { BODY_STALL_MS, MAX_BODY_BYTES } from '../defaults.js';
import { nextToLetIn, type AddressShare } from './fair-order.js';
import { worstParsedBytes } from './json-shape.js';

/**
 * A body holding room while it arrives, or waiting for room: `address` is its client's (the
 * unit of fairness), `arrivedMs` is when its request
 * arrived (`performance.now()`), `declaredBytes` its `Content-Length` (-1 when chunked),
 * `receivedBytes` how much of it has been read so far, `unreadBytes()` how much arrived
 * unread while it waits (Infinity once whole); `preempt` drops it (the holder answers, closes
 * and gives its room back through {@link BodyBudget.give}, or leaves the queue).
 */
export interface BodyHolder {
  readonly address?: string;
  readonly arrivedMs: number;
  readonly declaredBytes: number;
  readonly receivedBytes: number;
  unreadBytes(): number;
  preempt(): void;
}

/** What the budget tracks of a holder: when its current rate window began and its bytes then. */
interface Progress {
  sinceMs: number;
  bytesThen: number;
}

/**
 * The heap of request bodies being read and parsed at once, each weighed by the most it can
 * cost once parsed ({@link worstParsedBytes}), handed out fairly per client address
 * ({@link nextToLetIn}: round robin across addresses, in arrival order within one). Taking room is
 * synchronous while nobody waits and it fits (the uncontended case: no promise, no timer, no await per body); only a body that
 * has to wait gets a queue entry and a timer.
 *
 * Room is taken by the declared size's weight, before the body arrives, so a client that declares
 * large bodies and trickles them would hold the budget for the whole request timeout and
 * every other review would wait and get 429 (under `failurePolicy: Fail`, refused writes).
 * So while a body waits, a holder whose request arrived `stallMs` ago or more and whose
 * body arrived slower than `MIN_BODY_BYTES_PER_MS` over the last `RATE_WINDOW_MS` is
 * preempted: the API server writes a review at once, and its bytes wait in the kernel's
 * socket buffer while the review waits for room, so once given room its body arrives at
 * the network's speed however long it waited. Counting from the arrival, not the grant,
 * matters: a client's bodies queued behind its own stalled ones would otherwise each hold
 * the room for `stallMs` again, and every review queued behind them would wait once per
 * body ahead of it. For the same reason a waiter that has not sent its body by then is
 * preempted too ({@link waiterStalled}).
 */
export class BodyBudget {
  private freeBytes: number;
  /** In arrival order. */
  private readonly waiting: Waiter[] = [];
  /** Every address holding room (none holding 0 bytes), and a counter of grants for the round robin. */
  private readonly shares = new Map<string, AddressShare>();
  private grants = 0;
  /** Each holder and its rate window (`performance.now()`, ms). */
  private readonly holders = new Map<BodyHolder, Progress>();
  private stallCheck: NodeJS.Timeout | undefined;
  /** When the stall check last ran (`performance.now()`): what arrived before it has been read since. */
  private lastCheckMs = 0;

  /**
   * @param capacityBytes the most parsed bytes held at once ({@link MAX_PARSED_BYTES_IN_FLIGHT}).
   * @param stallMs how long a body may take to arrive, from its request's arrival, while others wait.
   */
  constructor(
    readonly capacityBytes: number,
    readonly stallMs = BODY_STALL_MS,
  ) {
    this.freeBytes = capacityBytes;
  }

  /**
   * What a body of `bytes` holds: the most it can cost once parsed, at least 1 and at most
   * the whole capacity (a body heavier than the budget waits until it is alone).
   */
  weigh(bytes: number): number {
    return Math.min(this.capacityBytes, Math.max(1, worstParsedBytes(bytes)));
  }

  /**
   * Takes `bytes` (a {@link weigh}ed size) for `holder` now if they fit and nobody waits, or
   * it would be let in before every waiting body ({@link nextToLetIn}); false otherwise.
   */
  tryTake(bytes: number, holder?: BodyHolder): boolean {
    if (bytes > this.freeBytes) return false;
    if (this.waiting.length > 0) {
      const newcomer = { bytes, address: addressOf(holder) };
      if (nextToLetIn([...this.waiting, newcomer], this.shares, this.capacityBytes) !== newcomer) return false;
    }
    this.take(bytes, holder);
    return true;
  }

  /**
   * Queues for `bytes`, let in in {@link nextToLetIn}'s order. Exactly one of `granted` (the
   * bytes are taken, for `holder`) or `timedOut` (after `waitMs`, nothing taken) is called,
   * unless the returned `cancel` is called first (the client left). Meanwhile stalled
   * holders are preempted.
   */
  wait(bytes: number, waitMs: number, granted: () => void, timedOut: () => void, holder?: BodyHolder): () => void {
    // Once a waiter leaves, the bodies behind it may fit.
    const leave = (then?: () => void) => {
      if (!this.drop(waiter)) return;
      then?.();
      this.grantWaiting();
    };
    const waiter: Waiter = { bytes, address: addressOf(holder), granted, holder, timer: setTimeout(() => leave(timedOut), waitMs) };
    this.waiting.push(waiter);
    if (this.stallCheck === undefined) {
      this.lastCheckMs = performance.now();
      this.stallCheck = setInterval(() => this.preemptStalled(), STALL_CHECK_MS).unref();
    }
    return () => leave();
  }

  /** Gives back bytes taken by {@link tryTake} or granted by {@link wait}, and lets waiting bodies in. */
  give(bytes: number, holder?: BodyHolder): void {
    this.freeBytes += bytes;
    const address = addressOf(holder);
    const share = this.shares.get(address);
    if (share !== undefined && (share.heldBytes -= bytes) <= 0) this.shares.delete(address);
    if (holder !== undefined) this.holders.delete(holder);
    this.grantWaiting();
  }

  private take(bytes: number, holder: BodyHolder | undefined): void {
    this.freeBytes -= bytes;
    const address = addressOf(holder);
    const share = this.shares.get(address) ?? { heldBytes: 0, grantedSeq: 0 };
    share.heldBytes += bytes;
    share.grantedSeq = this.grants++;
    this.shares.set(address, share);
    if (holder !== undefined) this.track(holder);
  }

  private track(holder: BodyHolder): void {
    this.holders.set(holder, { sinceMs: performance.now(), bytesThen: holder.receivedBytes });
  }

  /**
   * Preempts every holder past `stallMs` whose last full rate window was too slow (see the
   * class), only while a body waits; then every waiter past `stallMs` that has not sent what
   * Node reads ahead of a body nobody reads ({@link waiterStalled}). Judged as of the
   * previous run, however late this one is: a poll phase ran between the two, so every byte
   * that arrived before the previous run has been read (a blocked event loop or a loaded
   * machine delays a judgement, never falsifies it).
   */
  private preemptStalled(): void {
    const readByMs = this.lastCheckMs;
    this.lastCheckMs = performance.now();
    this.preemptStalledHolders(readByMs);
    // A waiter granted while this loop runs (one ahead of it left) is a holder now: not judged here.
    for (const waiter of [...this.waiting]) {
      if (waiter.holder !== undefined && this.waiting.includes(waiter) && waiterStalled(waiter.holder, readByMs, this.stallMs)) waiter.holder.preempt();
    }
  }

  private preemptStalledHolders(readByMs: number): void {
    for (const [holder, progress] of this.holders) {
      if (this.waiting.length === 0) return;
      const windowMs = readByMs - progress.sinceMs;
      if (windowMs < RATE_WINDOW_MS) continue;
      const tooSlow = holder.receivedBytes - progress.bytesThen < MIN_BODY_BYTES_PER_MS * windowMs;
      if (tooSlow && readByMs - holder.arrivedMs >= this.stallMs) {
        this.holders.delete(holder);
        holder.preempt();
      } else {
        this.track(holder);
      }
    }
  }

  /** Removes a waiter still queued; false when it was granted or dropped already. */
  private drop(waiter: Waiter): boolean {
    const at = this.waiting.indexOf(waiter);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    clearTimeout(waiter.timer);
    this.stopStallCheckWhenNoneWait();
    return true;
  }

  private stopStallCheckWhenNoneWait(): void {
    if (this.waiting.length > 0 || this.stallCheck === undefined) return;
    clearInterval(this.stallCheck);
    this.stallCheck = undefined;
  }

  /** In {@link nextToLetIn}'s order: a large body next in it keeps the others waiting. */
  private grantWaiting(): void {
    for (;;) {
      const waiter = nextToLetIn(this.waiting, this.shares, this.capacityBytes);
      if (waiter === undefined || waiter.bytes > this.freeBytes) break;
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      clearTimeout(waiter.timer);
      this.take(waiter.bytes, waiter.holder);
      waiter.granted();
    }
    this.stopStallCheckWhenNoneWait();
  }
}

/**
 * The parsed bytes of the bodies read and parsed at once: two of the largest (216 MiB), or
 * thousands of ordinary ones (a 4 KiB review weighs 180 KiB). This, not the connection cap,
 * bounds the memory reviews use; the Deployment's memory limit counts it (docs/operations.md, "Memory").
 */
export const MAX_PARSED_BYTES_IN_FLIGHT = 2 * worstParsedBytes(MAX_BODY_BYTES);

/**
 * What Node reads ahead of a body nobody reads, in bytes: its request stream's high-water
 * mark (16 KiB under Node 20, 64 KiB under 24), after which it stops reading the socket.
 */
const READ_AHEAD_BYTES = 16 * 1024;

/**
 * A waiter whose request came `stallMs` ago or more and which has not sent its body, or
 * what Node reads ahead of it: the API server writes a review at once, so its waiting
 * bodies are whole or past the read-ahead within milliseconds; a trickled one is not.
 */
function waiterStalled(holder: BodyHolder, nowMs: number, stallMs: number): boolean {
  const owedBytes = holder.declaredBytes < 0 ? READ_AHEAD_BYTES : Math.min(holder.declaredBytes, READ_AHEAD_BYTES);
  return nowMs - holder.arrivedMs >= stallMs && holder.unreadBytes() < owedBytes;
}

/**
 * The slowest a body may arrive while others wait: 1 MiB/s, in bytes per millisecond. The
 * API server sends at the network's speed, hundreds of times this; a client trickling a
 * body is far below it, and one sending at this rate spends what it makes us hold.
 */
export const MIN_BODY_BYTES_PER_MS = (1024 * 1024) / 1000;
/** The window a body's rate is judged over, in milliseconds. */
const RATE_WINDOW_MS = 250;
/** How often holders are checked while a body waits, in milliseconds. */
const STALL_CHECK_MS = 25;

/** The address `holder`'s room is counted under ('' for a body without one). */
function addressOf(holder: BodyHolder | undefined): string {
  return holder?.address ?? '';
}

interface Waiter {
  bytes: number;
  address: string;
  granted: () => void;
  holder: BodyHolder | undefined;
  timer: NodeJS.Timeout;
}
