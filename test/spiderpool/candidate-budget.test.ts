import { parseIPPools } from '../../src/spiderpool/candidate-annotations.js';
import { charge, encodedNames, stepBudget, STEPS_PER_LIST, STEPS_PER_NAME, STEPS_PER_PAIR, STEPS_PER_REVIEW } from '../../src/spiderpool/candidate-budget.js';
import { resolveSteps, type PoolEntry } from '../../src/spiderpool/candidate-categories.js';
import { candidateWarnings, overBudgetWarning } from '../../src/spiderpool/candidate-warnings.js';
import type { SpiderIPPool } from '../../src/spiderpool/pool.js';
import { indexOf } from './candidate-pools.js';

const entries = (...names: string[]): PoolEntry[] => names.map((name) => ({ name, pool: {} as SpiderIPPool }));

describe('the fixed work, charged before it is done', () => {
  test('the list, each name written without a wildcard, and each pool a wildcard is tried on', () => {
    const pools = entries('a', 'bb', 'ccc');
    expect(resolveSteps(['x', 'y*', '[ab]'], pools)).toBe(STEPS_PER_LIST + STEPS_PER_NAME + 2 * 3 * STEPS_PER_PAIR);
    expect(resolveSteps(['x', 'a[b'], pools)).toBe(STEPS_PER_LIST + 2 * STEPS_PER_NAME); // "a[b" is no wildcard (no "]")
  });

  test("a pool list's names in one UTF-8 buffer", () => {
    const { bytes, offsets } = encodedNames(entries('a', 'é', '', 'bc'));
    expect([...offsets]).toEqual([0, 1, 3, 3, 5]);
    expect(new TextDecoder().decode(bytes)).toBe('aébc');
  });
});

describe('charging a budget', () => {
  test('what fits is taken; what does not is refused whole and marks the budget', () => {
    const budget = stepBudget(100);
    expect(charge(budget, 60)).toBe(true);
    expect(charge(budget, 40)).toBe(true);
    expect(budget).toEqual({ remaining: 0, exceeded: false });
    expect(charge(budget, 1)).toBe(false);
    expect(budget).toEqual({ remaining: 0, exceeded: true });
  });
});

describe('a review within and over its budget', () => {
  const FIELD = 'metadata.annotations[ipam.spidernet.io/ippools]';
  const source = (names: string[]) => ({
    annotation: 'ipam.spidernet.io/ippools',
    field: FIELD,
    refusal: 'the Pod gets no IP address when it starts',
    parsed: parseIPPools(JSON.stringify([{ interface: 'eth0', ipv4: names }])),
  });
  // A new index each time: its pool lists are new, so nothing is remembered from another run.
  const warn = (names: string[], steps: number) => {
    const budget = stepBudget(steps);
    const pools = indexOf({ 'iaas-a': { iaas: true }, 'plain-a': {}, 'plain-b': {} });
    return { warnings: candidateWarnings(source(names), { pools, dualStack: { known: true, enableIPv6: false }, budget }), budget };
  };
  const names = ['iaas-a', 'plain-*'];
  // Before: the list, "iaas-a" and 3 pools to try "plain-*" on; Go's steps: 1 byte of "iaas-a", 6 of
  // each "plain-x" and the star's scan of the rest ("a" or "b"); then the 2 names it matched.
  const fixed = STEPS_PER_LIST + STEPS_PER_NAME + 3 * STEPS_PER_PAIR;
  const exact = fixed + 1 + 2 * (6 + 1) + 2 * STEPS_PER_NAME;

  test("the steps taken are the fixed work and Go's steps, exactly", () => {
    expect(warn(names, 10_000).budget).toEqual({ remaining: 10_000 - exact, exceeded: false });
  });

  test('exactly enough steps: checked', () => {
    const { warnings, budget } = warn(names, exact);
    expect(warnings).toEqual([expect.stringContaining('only IaaS pools [iaas-a] will be used; traditional pools [plain-a, plain-b] are ignored')]);
    expect(budget).toEqual({ remaining: 0, exceeded: false });
  });

  test.each([
    ['one step less, before grouping what matched', exact - 1],
    ['too few steps to end matching', fixed + 10],
    ['less than the fixed work, before any matching', fixed - 1],
  ])('%s: the one warning that says it stopped, and why', (_when, steps) => {
    const { warnings, budget } = warn(names, steps);
    expect(warnings).toEqual([
      `spiderpool: ${FIELD}: candidate pools were not checked: their names and wildcards need more than ${STEPS_PER_REVIEW} steps against 3 IPv4 pools, this webhook's per-review bound`,
    ]);
    expect(budget.exceeded).toBe(true);
  });

  test('the warning stays one line under 256 characters for the longest field', () => {
    const text = overBudgetWarning('spec.jobTemplate.spec.template.metadata.annotations[ipam.spidernet.io/ippools]', 1_000_000, 6);
    expect(text.length).toBeLessThan(256);
    expect(text).not.toMatch(/[\r\n]/);
  });
});
