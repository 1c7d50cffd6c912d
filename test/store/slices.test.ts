/**
 * A long pass cut into time slices: it yields once a slice has run its time, never
 * otherwise, keeps the items' order, and stops when a newer pass replaces it.
 */
import { EVENT_LOOP_SLICING, inSlices, type Slicing } from '../../src/store/slices.js';

/** A clock each item's work advances by `costMs`, and a pause that records when it was taken. */
function fakeSlicing(sliceMs: number, costMs: number) {
  let now = 0;
  const log: string[] = [];
  const slicing: Slicing = { sliceMs, now: () => now, pause: async () => void log.push('pause') };
  const work = (item: string) => {
    log.push(item);
    now += costMs;
  };
  return { slicing, work, log };
}

const letters = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + i));

describe('inSlices', () => {
  it('yields before the next item once a slice has run its time, never after the last item', async () => {
    const { slicing, work, log } = fakeSlicing(3, 1);
    expect(await inSlices(letters(9), work, slicing)).toBe(true);
    expect(log).toEqual(['a', 'b', 'c', 'pause', 'd', 'e', 'f', 'pause', 'g', 'h', 'i']);
  });

  it('one slow item is followed by a pause at once', async () => {
    const { slicing, work, log } = fakeSlicing(5, 7);
    await inSlices(letters(3), work, slicing);
    expect(log).toEqual(['a', 'pause', 'b', 'pause', 'c']);
  });

  it('never yields while the slices stay short, and then completes before the call returns', () => {
    const { slicing, work, log } = fakeSlicing(5, 0);
    let done = false;
    void inSlices(letters(1000), work, slicing).then(() => (done = true));
    expect(log).toHaveLength(1000);
    expect(log).not.toContain('pause');
    expect(done).toBe(false); // the promise settles later, but the work is all done
  });

  it('stops after a pause when it is no longer wanted, leaving the rest undone', async () => {
    const { slicing, work, log } = fakeSlicing(2, 1);
    let wanted = true;
    const pass = inSlices(letters(10), work, { ...slicing, pause: async () => void (wanted = false) }, () => wanted);
    expect(await pass).toBe(false);
    expect(log).toEqual(['a', 'b']);
  });

  it('works through a live Map: an entry added between slices is reached, one deleted is not', async () => {
    const map = new Map(letters(6).map((l) => [l, l]));
    const seen: string[] = [];
    let now = 0;
    const slicing: Slicing = {
      sliceMs: 2,
      now: () => now,
      pause: async () => {
        map.delete('e');
        map.set('z', 'z');
      },
    };
    await inSlices(map.keys(), (k) => (seen.push(k), (now += 1)), slicing);
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'f', 'z']);
  });

  it('the event loop runs between slices of the real slicing', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    let items = 0;
    // Each item busy-waits 1 ms: 60 items are ~12 slices of 5 ms.
    const busy = () => {
      const until = performance.now() + 1;
      while (performance.now() < until);
      items++;
    };
    await inSlices(Array.from({ length: 60 }), busy, EVENT_LOOP_SLICING);
    clearInterval(timer);
    expect(items).toBe(60);
    expect(ticks).toBeGreaterThan(0);
  });
});
