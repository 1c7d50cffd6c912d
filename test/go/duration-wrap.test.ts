import { parseGoDuration } from '../../src/go/duration-parse.js';

/** Go 1.19-1.26 `time.ParseDuration` sums components in a uint64 (go/src/time/format.go). */
describe('parseGoDuration wraps its sum as Go does', () => {
  it.each([
    ['9223372036854775808ns9223372036854775808ns1h', 3_600_000_000_000n],
    ['9223372036854775808ns9223372036854775808ns', 0n],
    ['-9223372036854775808ns9223372036854775808ns1s', -1_000_000_000n],
    ['9223372036854775808ns9223372036854775808ns9223372036854775807ns', 9_223_372_036_854_775_807n],
    ['-9223372036854775808ns', -(1n << 63n)],
  ])('%s is %d ns', (text, ns) => {
    expect(parseGoDuration(text)).toBe(ns);
  });

  it.each([
    '9223372036854775808ns1ns',
    '9223372036854775807ns9223372036854775807ns',
    '9223372036854775808ns',
    '9223372036854775808ns9223372036854775808ns9223372036854775808ns',
  ])('refuses %s as Go does (over 2^63 before it could wrap, or 2^63 positive)', (text) => {
    expect(() => parseGoDuration(text)).toThrow(`time: invalid duration "${text}"`);
  });
});
