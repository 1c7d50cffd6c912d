/**
 * The bytes of request bodies being read and parsed at once (`MAX_BODY_BYTES_IN_FLIGHT`),
 * handed out in arrival order. Taking room is synchronous while nobody waits and it
 * fits (the uncontended case: no promise, no timer, no await per body); only a body that
 * has to wait gets a queue entry and a timer.
 */
export class BodyBudget {
  private freeBytes: number;
  private readonly waiting: Waiter[] = [];

  /** @param capacityBytes the most body bytes held at once. */
  constructor(readonly capacityBytes: number) {
    this.freeBytes = capacityBytes;
  }

  /**
   * What a body of `bytes` holds: its size, at least 1 and at most the whole capacity (a
   * body larger than the budget waits until it is alone).
   */
  weigh(bytes: number): number {
    return Math.min(this.capacityBytes, Math.max(1, bytes));
  }

  /** Takes `bytes` (a {@link weigh}ed size) now if nobody is waiting and they fit; false otherwise. */
  tryTake(bytes: number): boolean {
    if (this.waiting.length > 0 || bytes > this.freeBytes) return false;
    this.freeBytes -= bytes;
    return true;
  }

  /**
   * Queues for `bytes` behind the bodies already waiting. Exactly one of `granted` (the
   * bytes are taken) or `timedOut` (after `waitMs`, nothing taken) is called, unless the
   * returned `cancel` is called first (the client left).
   */
  wait(bytes: number, waitMs: number, granted: () => void, timedOut: () => void): () => void {
    // Once a waiter leaves, the bodies behind it may fit.
    const leave = (then?: () => void) => {
      if (!this.drop(waiter)) return;
      then?.();
      this.grantWaiting();
    };
    const waiter: Waiter = { bytes, granted, timer: setTimeout(() => leave(timedOut), waitMs) };
    this.waiting.push(waiter);
    return () => leave();
  }

  /** Gives back bytes taken by {@link tryTake} or granted by {@link wait}, and lets waiting bodies in. */
  give(bytes: number): void {
    this.freeBytes += bytes;
    this.grantWaiting();
  }

  /** Removes a waiter still queued; false when it was granted or dropped already. */
  private drop(waiter: Waiter): boolean {
    const at = this.waiting.indexOf(waiter);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    clearTimeout(waiter.timer);
    return true;
  }

  /** Strictly in order: a large body at the head keeps smaller ones behind it waiting. */
  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.waiting[0]!.bytes <= this.freeBytes) {
      const waiter = this.waiting.shift()!;
      clearTimeout(waiter.timer);
      this.freeBytes -= waiter.bytes;
      waiter.granted();
    }
  }
}

interface Waiter {
  bytes: number;
  granted: () => void;
  timer: NodeJS.Timeout;
}
