import fc from 'fast-check';
import { BAD_PATTERN, compileGoPattern, goMatch, OUT_OF_STEPS } from '../../src/go/filepath-match.js';

/** Go's own table (src/path/filepath/match_test.go, matchTests). */
const GO_MATCH_TESTS: [pattern: string, name: string, result: boolean | typeof BAD_PATTERN][] = [
  ['abc', 'abc', true],
  ['*', 'abc', true],
  ['*c', 'abc', true],
  ['a*', 'a', true],
  ['a*', 'abc', true],
  ['a*', 'ab/c', false],
  ['a*/b', 'abc/b', true],
  ['a*/b', 'a/c/b', false],
  ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
  ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true],
  ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false],
  ['a*b*c*d*e*/f', 'axbxcxdxexxx/fff', false],
  ['a*b?c*x', 'abxbbxdbxebxczzx', true],
  ['a*b?c*x', 'abxbbxdbxebxczzy', false],
  ['ab[c]', 'abc', true],
  ['ab[b-d]', 'abc', true],
  ['ab[e-g]', 'abc', false],
  ['ab[^c]', 'abc', false],
  ['ab[^b-d]', 'abc', false],
  ['ab[^e-g]', 'abc', true],
  ['a\\*b', 'a*b', true],
  ['a\\*b', 'ab', false],
  ['a?b', 'a☺b', true],
  ['a[^a]b', 'a☺b', true],
  ['a???b', 'a☺b', false],
  ['a[^a][^a][^a]b', 'a☺b', false],
  ['[a-ζ]*', 'α', true],
  ['*[a-ζ]', 'A', false],
  ['a?b', 'a/b', false],
  ['a*b', 'a/b', false],
  ['[\\]a]', ']', true],
  ['[\\-]', '-', true],
  ['[x\\-]', 'x', true],
  ['[x\\-]', '-', true],
  ['[x\\-]', 'z', false],
  ['[\\-x]', 'x', true],
  ['[\\-x]', '-', true],
  ['[\\-x]', 'a', false],
  ['[]a]', ']', BAD_PATTERN],
  ['[-]', '-', BAD_PATTERN],
  ['[x-]', 'x', BAD_PATTERN],
  ['[x-]', '-', BAD_PATTERN],
  ['[x-]', 'z', BAD_PATTERN],
  ['[-x]', 'x', BAD_PATTERN],
  ['[-x]', '-', BAD_PATTERN],
  ['[-x]', 'a', BAD_PATTERN],
  ['\\', 'a', BAD_PATTERN],
  ['[a-b-c]', 'a', BAD_PATTERN],
  ['[', 'a', BAD_PATTERN],
  ['[^', 'a', BAD_PATTERN],
  ['[^bc', 'a', BAD_PATTERN],
  ['a[', 'a', BAD_PATTERN],
  ['a[', 'ab', BAD_PATTERN],
  ['a[', 'x', BAD_PATTERN],
  ['a/b[', 'x', BAD_PATTERN],
  ['*x', 'xxx', true],
];

/** More cases, each checked with Go 1.26 filepath.Match: chunks after a failed one are never checked. */
const MORE: [pattern: string, name: string, result: boolean | typeof BAD_PATTERN][] = [
  ['a*[', 'b', false], // the first chunk fails: the bad second one is never read
  ['a*[', 'a', BAD_PATTERN],
  ['a*[', 'abc', BAD_PATTERN],
  // A class may match '/', which a star cannot skip: Go commits to the class's first fit ("^"), the trailing star then meets "/".
  ['*[^a]*', '^/', false],
  ['a[/]b', 'a/b', true],
  ['iaas-*', 'iaas-1', true],
  ['iaas-*', 'iaas-', true],
  ['iaas-*', 'plain-1', false],
  ['*-v4', 'pool-a-v4', true],
  ['*-v4', 'pool-a-v6', false],
  ['pool-[0-9]', 'pool-7', true],
  ['pool-[0-9]', 'pool-x', false],
  ['pool-[^0-9]', 'pool-x', true],
  ['pool-?', 'pool-12', false],
  ['pool-??', 'pool-12', true],
  ['', '', true],
  ['', 'a', false],
  ['**', 'abc', true],
  ['a\\', 'a', BAD_PATTERN],
  ['[\\', 'a', BAD_PATTERN],
  ['[a-\\', 'a', BAD_PATTERN],
  ['[a-\\]]', ']', false], // an empty range a-]
  ['x[', 'y', BAD_PATTERN], // the first chunk is checked whole even after it failed
  ['*[', 'abc', BAD_PATTERN],
  // Go's star skips bytes, so what follows it may start inside a multi-byte character.
  ['*??', '☺', true],
  ['*?', '☺', true],
  ['*[^a]', '☺', true],
  ['*[^a][^a]', 'é', false],
  // conf.yml's masterNIC interface patterns, which Spiderpool checks against "eth0" at start.
  ['eth*', 'eth0', true],
  ['ens[0-9]', 'eth0', false],
  ['x*[', 'eth0', false], // Go stops at "x", before the bad "["
  ['e*[', 'eth0', BAD_PATTERN],
  ['eth0[', 'eth0', BAD_PATTERN],
  ['eth\\', 'eth0', BAD_PATTERN],
  ['e[t-]', 'eth0', BAD_PATTERN],
];

describe('goMatch: Go filepath.Match', () => {
  test.each([...GO_MATCH_TESTS, ...MORE])('Match(%j, %j) = %j', (pattern, name, result) => {
    expect(goMatch(pattern, name)).toBe(result);
  });

  test.each([...GO_MATCH_TESTS, ...MORE])('compiled %j against %j gives the same answer', (pattern, name, result) => {
    expect(compileGoPattern(pattern).match(name)).toBe(result);
  });
});

describe('the compiled pattern agrees with the step-by-step port', () => {
  const piece = fc.constantFrom('a', 'b', '-', '/', '*', '?', '[', ']', '^', '\\', 'é', '☺');
  test('on random patterns and names over glob-heavy alphabets', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.array(fc.constantFrom('a', 'b', '-', '/', ']', '^', 'é', '☺'), { maxLength: 6 }), (p, n) => {
        const pattern = p.join('');
        const name = n.join('');
        expect(compileGoPattern(pattern).match(name)).toBe(goMatch(pattern, name));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('steps, counted as Go takes them', () => {
  const encoder = new TextEncoder();
  /** The answer for `name` and the steps taken, with `remaining` steps to spend. */
  const metered = (pattern: string, name: string, remaining = 1e12) => {
    const bytes = encoder.encode(name);
    const meter = { remaining };
    const answer = compileGoPattern(pattern).matchWithin(bytes, 0, bytes.length, meter);
    return { answer, steps: remaining - meter.remaining };
  };

  test.each([
    ['abc', 'abd', false, 3],
    ['abc', 'xbc', false, 1], // Go stops at the first mismatch of a chunk it accepts
    ['*c', 'abc', true, 3], // "c" tried at positions 0, 1 and 2
    ['*', 'abc', true, 3], // the star's scan for '/'
    ['a[x-z0-9][^q]', 'a5r', true, 1 + 2 + 2], // a class: one step, and one per range that does not hold
    ['*'.repeat(13) + '?'.repeat(64), 'a'.repeat(64), true, 64],
  ])('%j against %j: %j in %d steps', (pattern, name, answer, steps) => {
    expect(metered(pattern, name)).toEqual({ answer, steps });
  });

  test('a match that runs out of steps says so, at most one chunk over', () => {
    expect(metered('*c', 'abc', 2)).toEqual({ answer: OUT_OF_STEPS, steps: 3 });
    expect(metered('*c', 'abc', 3)).toEqual({ answer: true, steps: 3 });
    const long = metered(`*${'?'.repeat(64)}`, 'a'.repeat(63), 1_000);
    expect(long.answer).toBe(OUT_OF_STEPS);
    expect(long.steps).toBeLessThanOrEqual(1_000 + 64);
  });

  test('13 stars then 64 "?" against 253-byte names: Go\'s answers, linear steps', () => {
    const pattern = '*'.repeat(13) + '?'.repeat(64);
    // The last chunk must end the name: Go reads its 64 "?" at each of the 190 first positions.
    expect(metered(pattern, 'a'.repeat(253))).toEqual({ answer: true, steps: 190 * 64 });
    // Too short: at position k, 63 - k "?" are read before the name ends.
    expect(metered(pattern, 'a'.repeat(63))).toEqual({ answer: false, steps: (63 * 64) / 2 });
  });

  test("at most |pattern| × (|name| + 1) steps, and Go's answer, on random patterns and names", () => {
    const piece = fc.constantFrom('a', 'b', '-', '/', '*', '?', '[', ']', '^', '\\', 'é', '☺');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 10 }), fc.array(fc.constantFrom('a', 'b', '-', '/', ']', 'é', '☺'), { maxLength: 8 }), (p, n) => {
        const { answer, steps } = metered(p.join(''), n.join(''));
        expect(answer).toBe(goMatch(p.join(''), n.join('')));
        expect(steps).toBeLessThanOrEqual(encoder.encode(p.join('')).length * (encoder.encode(n.join('')).length + 1));
      }),
      { numRuns: 20_000 },
    );
  });
});
