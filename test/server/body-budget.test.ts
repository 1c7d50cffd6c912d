import { jest } from '@jest/globals';
import { MAX_BODY_BYTES } from '../../src/defaults.js';
import { BodyBudget, MAX_PARSED_BYTES_IN_FLIGHT, type BodyHolder } from '../../src/server/body-budget.js';

afterEach(() => {
  jest.useRealTimers();
});

/**
 * Queues a body of `bytes` named `name` for at most `waitMs` (4 s by default); `order` gets
 * `granted` (`name` by default) when it is let in, `<name> timed out` when it gives up.
 * Returns its cancel function.
 */
function enqueue(budget: BodyBudget, order: string[], name: string, bytes: number, { waitMs = 4000, holder, granted = name }: Waiting = {}) {
  return budget.wait(
    bytes,
    waitMs,
    () => order.push(granted),
    () => order.push(`${name} timed out`),
    holder,
  );
}

interface Waiting {
  waitMs?: number;
  holder?: BodyHolder;
  granted?: string;
}

describe('BodyBudget', () => {
  it('takes room at once while it fits and nobody waits, and gives it back', () => {
    const budget = new BodyBudget(10);
    expect(budget.tryTake(6)).toBe(true);
    expect(budget.tryTake(4)).toBe(true);
    expect(budget.tryTake(1)).toBe(false);
    budget.give(4);
    expect(budget.tryTake(3)).toBe(true);
  });

  it('weighs a body by the most it can cost once parsed, at most the whole budget', () => {
    const budget = new BodyBudget(MAX_PARSED_BYTES_IN_FLIGHT);
    // 4 bytes per byte plus 80 per possible token (one per 2 bytes), tokens capped at 1 Mi.
    expect(budget.weigh(4096)).toBe(4096 * 4 + 2049 * 80);
    expect(budget.weigh(MAX_BODY_BYTES)).toBe(MAX_BODY_BYTES * 4 + 1024 * 1024 * 80);
    expect(budget.weigh(MAX_BODY_BYTES)).toBe(MAX_PARSED_BYTES_IN_FLIGHT / 2);
    expect(new BodyBudget(10).weigh(7)).toBe(10);
  });

  it('lets waiting bodies in strictly in arrival order, and none past a waiter', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(8)).toBe(true);
    enqueue(budget, order, 'six', 6, { waitMs: 1000 });
    enqueue(budget, order, 'one', 1, { waitMs: 1000 });
    expect(budget.tryTake(1)).toBe(false); // would overtake the waiting ones
    budget.give(3); // 5 free: the head (6) still does not fit, so neither does the one behind it
    expect(order).toEqual([]);
    budget.give(5);
    expect(order).toEqual(['six', 'one']);
    jest.advanceTimersByTime(2000);
    expect(order).toEqual(['six', 'one']); // granted waiters never time out
  });

  it('times a waiter out, and lets the ones behind it in when it leaves', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(5)).toBe(true);
    enqueue(budget, order, 'ten', 10, { waitMs: 100 });
    enqueue(budget, order, 'five', 5, { waitMs: 1000 });
    jest.advanceTimersByTime(100);
    expect(order).toEqual(['ten timed out', 'five']);
  });

  it('forgets a waiter that is cancelled (its client left)', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(10)).toBe(true);
    const cancel = enqueue(budget, order, 'big', 10, { waitMs: 100 });
    enqueue(budget, order, 'small', 2, { waitMs: 1000 });
    cancel();
    budget.give(10);
    jest.advanceTimersByTime(1000);
    expect(order).toEqual(['small']);
    expect(budget.tryTake(8)).toBe(true);
    expect(budget.tryTake(1)).toBe(false);
  });
});

describe('BodyBudget lets bodies in fairly per client address', () => {
  /** A body from `address` that sends at once (never stalled). */
  const from = (address: string) => ({
    address,
    arrivedMs: performance.now(),
    declaredBytes: 1,
    receivedBytes: 1,
    unreadBytes: () => Infinity,
    preempt: () => undefined,
  });
  const queue = (budget: BodyBudget, order: string[], name: string, bytes: number) => enqueue(budget, order, name, bytes, { holder: from(name[0]!) });

  it('lets a waiter from an address that holds nothing in before the queued bodies of one that holds room', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    const [a1, a2] = [from('a'), from('a')];
    expect(budget.tryTake(5, a1)).toBe(true);
    expect(budget.tryTake(5, a2)).toBe(true);
    queue(budget, order, 'a3', 5);
    queue(budget, order, 'a4', 5);
    queue(budget, order, 'b1', 1); // the API server's review, behind the flood
    budget.give(5, a1);
    expect(order).toEqual(['b1']); // a3 fits too, but its address holds its share while b waits
    budget.give(5, a2);
    expect(order).toEqual(['b1', 'a3']);
  });

  it('serves addresses round robin, each in arrival order', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(6);
    const order: string[] = [];
    const other = from('x');
    expect(budget.tryTake(6, other)).toBe(true);
    for (const name of ['a1', 'a2', 'a3', 'b1', 'b2', 'c1']) queue(budget, order, name, 1);
    budget.give(6, other);
    // Each holds nothing first, then up to its share (6 / 3 addresses) while others wait; the last alone takes what is free.
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('tells a body that fits to wait while its address holds room and one that holds nothing waits', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(6, from('a'))).toBe(true);
    queue(budget, order, 'b1', 5);
    expect(budget.tryTake(1, from('a'))).toBe(false);
    expect(budget.tryTake(1, from('c'))).toBe(false); // b1 came first among those holding nothing
    expect(budget.tryTake(1)).toBe(false);
    expect(order).toEqual([]);
  });

  it('lets a body from an address that holds nothing take room at once past waiters whose addresses hold room', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(8, from('a'))).toBe(true);
    queue(budget, order, 'a2', 5);
    expect(budget.tryTake(2, from('b'))).toBe(true);
    expect(order).toEqual([]);
  });
});

describe('BodyBudget preempts a body that does not arrive while others wait', () => {
  /**
   * A holder of `bytes` that gives its room back when preempted; `receivedBytes` and
   * `unread` (what arrived while it waits; whole by default) are set by the test.
   */
  const holder = (name: string, order: string[], budget: () => BodyBudget, bytes: number, arrivedMs = performance.now()) => {
    const self = {
      arrivedMs,
      declaredBytes: bytes,
      receivedBytes: 0,
      unread: Infinity,
      unreadBytes: () => self.unread,
      preempt: () => {
        order.push(`${name} preempted`);
        budget().give(bytes, self);
      },
    };
    return self;
  };
  /** Advances fake time by `ms`, `holder` receiving `bytesPerMs` meanwhile (in 25 ms steps, as data arrives). */
  const receiving = (h: { receivedBytes: number }, ms: number, bytesPerMs: number) => {
    for (let t = 0; t < ms; t += 25) {
      h.receivedBytes += 25 * bytesPerMs;
      jest.advanceTimersByTime(25);
    }
  };
  /**
   * Queues `name` for `bytes`, a holder of `declared` bytes of which `unread` arrived and wait
   * to be read; preempted, it leaves the queue. `order` gets `<name> granted` or `<name> preempted`.
   */
  const sentWaiter = (budget: BodyBudget, order: string[], name: string, { bytes, declared, unread }: { bytes: number; declared: number; unread: number }) => {
    let cancel = () => undefined as void;
    const self = { ...holder(name, order, () => budget, declared), unreadBytes: () => unread, preempt: () => (order.push(`${name} preempted`), cancel()) };
    cancel = enqueue(budget, order, name, bytes, { holder: self, granted: `${name} granted` });
  };

  it('never preempts while nobody waits; once a body waits, drops a holder past stallMs that receives nothing', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    const slow = holder('slow', order, () => budget, 10);
    expect(budget.tryTake(10, slow)).toBe(true);
    jest.advanceTimersByTime(5000);
    expect(order).toEqual([]);
    enqueue(budget, order, 'waiter', 2);
    jest.advanceTimersByTime(275); // one rate window
    expect(order).toEqual(['slow preempted', 'waiter']);
  });

  it('keeps a holder younger than stallMs, and drops it once it is that old and still slow', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    const slow = holder('slow', order, () => budget, 10);
    expect(budget.tryTake(10, slow)).toBe(true);
    enqueue(budget, order, 'waiter', 2);
    receiving(slow, 900, 0.5); // 500 bytes/s: far too slow, but young
    expect(order).toEqual([]);
    receiving(slow, 400, 0.5);
    expect(order).toEqual(['slow preempted', 'waiter']);
  });

  it('never preempts a body arriving at the network speed, however old, and drops it once it stops', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    const big = holder('big', order, () => budget, 10, performance.now() - 5000); // it waited 5 s for room
    expect(budget.tryTake(10, big)).toBe(true);
    enqueue(budget, order, 'waiter', 2);
    receiving(big, 2000, 10_000); // 10 MB/s
    expect(order).toEqual([]);
    receiving(big, 600, 0); // it stalls: judged within two windows (one may have begun while it still sent)
    expect(order).toEqual(['big preempted', 'waiter']);
  });

  it('counts from the arrival of the request, not the grant: a queued body that does not arrive gives way within a window', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    const first = holder('first', order, () => budget, 10);
    expect(budget.tryTake(10, first)).toBe(true);
    const queued = holder('queued', order, () => budget, 10);
    enqueue(budget, order, 'queued', 10, { holder: queued, granted: 'queued granted' });
    jest.advanceTimersByTime(1300);
    expect(order).toEqual(['first preempted', 'queued granted']);
    enqueue(budget, order, 'waiter', 5);
    jest.advanceTimersByTime(275); // queued arrived 1.5 s ago and reads nothing
    expect(order).toEqual(['first preempted', 'queued granted', 'queued preempted', 'waiter']);
  });

  it('drops a waiter that has not sent its body, or what Node reads ahead of it, once stallMs old; keeps one that has', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(100_000, 1000);
    expect(budget.tryTake(100_000)).toBe(true); // held by a body at work: nothing frees room
    const waiter = (name: string, declared: number, unread: number) => sentWaiter(budget, order, name, { bytes: 1, declared, unread });
    waiter('trickled', 100_000, 3);
    waiter('sent at once', 100_000, 16 * 1024); // all Node reads ahead of an unread body
    waiter('small and short of one byte', 100, 99);
    waiter('small and whole', 100, 100);
    jest.advanceTimersByTime(900);
    expect(order).toEqual([]); // young
    jest.advanceTimersByTime(200);
    expect(order).toEqual(['trickled preempted', 'small and short of one byte preempted']);
  });

  it('never preempts a holder that gave its room back', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    const done = holder('done', order, () => budget, 6);
    expect(budget.tryTake(6, done)).toBe(true);
    budget.give(6, done);
    expect(budget.tryTake(10)).toBe(true);
    enqueue(budget, order, 'one', 1);
    jest.advanceTimersByTime(5000);
    expect(order).toEqual(['one timed out']);
  });

  it('does not judge as a waiter one granted in the same check (the stalled waiter ahead of it left)', () => {
    jest.useFakeTimers();
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    expect(budget.tryTake(5)).toBe(true);
    const queue = (name: string, bytes: number, unread: number) => sentWaiter(budget, order, name, { bytes, declared: bytes, unread });
    queue('stalled', 10, 0);
    queue('small', 5, 0); // nothing unread: it is being read once granted
    jest.advanceTimersByTime(1100);
    expect(order).toEqual(['stalled preempted', 'small granted']);
  });

  it('still preempts a stalled holder when every check comes late (a loaded machine): each judges as of the check before it', () => {
    jest.useFakeTimers({ doNotFake: ['performance'] });
    const order: string[] = [];
    const budget = new BodyBudget(10, 1000);
    const slow = holder('slow', order, () => budget, 10);
    expect(budget.tryTake(10, slow)).toBe(true);
    enqueue(budget, order, 'waiter', 2, { waitMs: 60_000 });
    const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    for (let i = 0; i < 40 && order.length === 0; i++) {
      sleep(80); // the event loop blocked past the check's interval, every time
      jest.advanceTimersByTime(25);
    }
    expect(order).toEqual(['slow preempted', 'waiter']);
  });

  it('stops checking once nobody waits (no timer keeps running)', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10, 1000);
    expect(budget.tryTake(10)).toBe(true);
    const cancel = enqueue(budget, [], 'waiter', 2);
    expect(jest.getTimerCount()).toBe(2); // the waiter's timeout and the stall check
    cancel();
    expect(jest.getTimerCount()).toBe(0);
  });
});
