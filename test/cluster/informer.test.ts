import { backoffMs, FailureLog, watchEnd } from '../../src/cluster/informer.js';

describe('the reflector, method by method', () => {
  it('backs off doubling from the first delay, capped', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, 1000, 30_000))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it('logs a failure at warn once, its repeats at debug, and its recovery once', () => {
    const log = new FailureLog();
    const failure = { operation: 'list' as const, statusCode: 403, message: 'forbidden' };
    expect(log.recovered()).toBeUndefined(); // nothing was logged: no recovery line
    expect(log.record(failure)).toBe(false);
    expect(log.record(failure)).toBe(true);
    expect(log.record({ ...failure, statusCode: 500 })).toBe(false); // a different failure is news
    expect(log.last).toEqual({ ...failure, statusCode: 500 });
    expect(log.recovered()).toBe(3);
    expect(log.last).toBeUndefined();
    expect(log.record(failure)).toBe(false); // after a recovery, the same failure is news again
  });

  it('tells an expired watch, a normal end, an error and a watch that ended at once apart', () => {
    const run = { startedMs: 0, read: 0, events: 0, gone: false };
    expect(watchEnd({ ...run, gone: true }, null, 10)).toBe('expired');
    expect(watchEnd(run, { statusCode: 410 }, 10)).toBe('expired');
    expect(watchEnd(run, new Error('reset'), 10)).toEqual(new Error('reset'));
    expect(watchEnd(run, null, 10)).toEqual(expect.objectContaining({ message: expect.stringContaining('ended at once') }));
    expect(watchEnd({ ...run, events: 1, read: 1 }, null, 10)).toBe('ended');
    expect(watchEnd(run, null, 5000)).toBe('ended'); // lasted past SHORT_WATCH_MS
  });
});
