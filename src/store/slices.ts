/**
 * A long pass over many items (every stored pool re-judged after a complete list) cut
 * into time slices, so that the event loop is never blocked for long: probes and reviews
 * are answered between slices. Pure: the clock and the pause between slices are handed in
 * (the server's are `performance.now` and `setImmediate`, which lets pending I/O run).
 */

/** How a pass measures its slices and yields between them. */
export interface Slicing {
  /** The longest a slice runs before it yields, in milliseconds (checked after each item, so one item may overrun it). */
  sliceMs: number;
  /** The current time, in milliseconds. */
  now(): number;
  /** Resolves once other work has had its turn. */
  pause(): Promise<void>;
}

/** A slice of 5 ms, then `setImmediate`: the event loop never waits on a pass for much longer than its slowest item. */
export const EVENT_LOOP_SLICING: Slicing = {
  sliceMs: 5,
  now: () => performance.now(),
  pause: () => new Promise((resolve) => setImmediate(resolve)),
};

/**
 * Calls `work` on each of `items` in order, yielding (`slicing.pause`) before the next item
 * whenever a slice has run `slicing.sliceMs` or longer (never after the last item). The first slice runs before the returned promise is
 * created: a pass shorter than one slice is complete when the call returns. `items` may
 * be a live iterator (a Map's): what changes between slices is seen as the iterator sees it.
 *
 * @param wanted asked after each pause: false abandons the pass (a newer one replaced it).
 * @returns true when every item was worked on, false when the pass was abandoned.
 */
export async function inSlices<T>(items: Iterable<T>, work: (item: T) => void, slicing: Slicing, wanted: () => boolean = () => true): Promise<boolean> {
  let sliceStart = slicing.now();
  for (const item of items) {
    if (slicing.now() - sliceStart >= slicing.sliceMs) {
      await slicing.pause();
      if (!wanted()) return false;
      sliceStart = slicing.now();
    }
    work(item);
  }
  return true;
}
