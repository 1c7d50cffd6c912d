import { jest } from '@jest/globals';
import { BodyBudget } from '../../src/server/body-budget.js';

afterEach(() => {
  jest.useRealTimers();
});

describe('BodyBudget', () => {
  it('takes room at once while it fits and nobody waits, and gives it back', () => {
    const budget = new BodyBudget(10);
    expect(budget.tryTake(6)).toBe(true);
    expect(budget.tryTake(4)).toBe(true);
    expect(budget.tryTake(1)).toBe(false);
    budget.give(4);
    expect(budget.tryTake(3)).toBe(true);
  });

  it('weighs a body as its size, at least 1, at most the whole budget', () => {
    const budget = new BodyBudget(10);
    expect([budget.weigh(0), budget.weigh(7), budget.weigh(99)]).toEqual([1, 7, 10]);
  });

  it('lets waiting bodies in strictly in arrival order, and none past a waiter', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(8)).toBe(true);
    budget.wait(6, 1000, () => order.push('six'), () => order.push('six timed out'));
    budget.wait(1, 1000, () => order.push('one'), () => order.push('one timed out'));
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
    budget.wait(10, 100, () => order.push('ten'), () => order.push('ten timed out'));
    budget.wait(5, 1000, () => order.push('five'), () => order.push('five timed out'));
    jest.advanceTimersByTime(100);
    expect(order).toEqual(['ten timed out', 'five']);
  });

  it('forgets a waiter that is cancelled (its client left)', () => {
    jest.useFakeTimers();
    const budget = new BodyBudget(10);
    const order: string[] = [];
    expect(budget.tryTake(10)).toBe(true);
    const cancel = budget.wait(10, 100, () => order.push('big'), () => order.push('big timed out'));
    budget.wait(2, 1000, () => order.push('small'), () => order.push('small timed out'));
    cancel();
    budget.give(10);
    jest.advanceTimersByTime(1000);
    expect(order).toEqual(['small']);
    expect(budget.tryTake(8)).toBe(true);
    expect(budget.tryTake(1)).toBe(false);
  });
});
