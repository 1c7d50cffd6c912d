import { stepBudget } from '../../src/spiderpool/candidate-budget.js';
import { rememberedBytes, resolve } from '../../src/spiderpool/candidate-categories.js';
import { ByteBoundedMemo, MEMO_MAX_BYTES, stringBytes } from '../../src/spiderpool/candidate-memo.js';
import { indexOf } from './candidate-pools.js';

describe('a memo bounded in bytes', () => {
  const entryBytes = (key: string, valueBytes: number) => stringBytes(key) + valueBytes + 96;

  test('holds what fits, drops the least recently used first, never holds more than its bound', () => {
    const key = (i: number) => `k${String(i).padStart(2, '0')}`;
    const one = entryBytes(key(0), 100);
    const memo = new ByteBoundedMemo<number>(16 * one);
    for (let i = 0; i < 16; i++) memo.set(key(i), i, 100);
    expect(memo.bytes).toBe(16 * one);
    expect(memo.get(key(0))).toBe(0); // now the most recent
    memo.set(key(16), 16, 100);
    expect([0, 1, 2, 16].map((i) => memo.get(key(i)))).toEqual([0, undefined, 2, 16]);
    expect(memo.bytes).toBe(16 * one);
  });

  test('an entry over a sixteenth of the bound is not remembered', () => {
    const memo = new ByteBoundedMemo<string>(16 * 1000);
    memo.set('big', 'x', 1000);
    expect(memo.get('big')).toBeUndefined();
    expect(memo.bytes).toBe(0);
  });
});

describe('the resolved lists remembered', () => {
  const index = indexOf(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`pool-${i}`, {}])));
  const resolveList = (names: string[]) => resolve(names, 4, index, false, stepBudget());

  test('distinct wildcard lists fill the memo up to its bound in bytes, not beyond', () => {
    for (let i = 0; i < 2_000; i++) resolveList([`pool-${i}*`, `other-${i}`, 'pool-1?']);
    expect(rememberedBytes()).toBeGreaterThan(MEMO_MAX_BYTES / 2);
    expect(rememberedBytes()).toBeLessThanOrEqual(MEMO_MAX_BYTES);
  });

  test('lists without a wildcard and lists over 4 096 characters are not remembered', () => {
    const before = rememberedBytes();
    resolveList(['pool-1', 'pool-2']);
    // The hostile case: distinct lists of about 243 KiB each.
    for (let i = 0; i < 20; i++) resolveList([`pool-${i}*`, ...Array.from({ length: 20_000 }, (_, j) => `n${i}-${j}-${'x'.repeat(4)}`)]);
    expect(rememberedBytes()).toBe(before);
  });

  test('a remembered list is the same answer, for fewer steps', () => {
    const names = ['pool-19*', 'pool-2'];
    const first = stepBudget();
    const answer = resolve(names, 4, index, false, first);
    const again = stepBudget();
    expect(resolve(names, 4, index, false, again)).toBe(answer);
    expect(again.remaining).toBeGreaterThan(first.remaining);
  });
});
