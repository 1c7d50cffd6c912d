import fc from 'fast-check';
import { formatGoDuration } from '../../src/go/duration-format.js';
import { parseGoDuration } from '../../src/go/duration-parse.js';
import { quoteForTimeError } from '../../src/go/time-quote.js';

const int64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });

describe('formatGoDuration / parseGoDuration', () => {
  it('round-trips every int64: parse(format(d)) === d', () => {
    fc.assert(
      fc.property(int64, (d) => parseGoDuration(formatGoDuration(d)) === d),
      { numRuns: 20_000 },
    );
  });

  it('round-trips the int64 extremes', () => {
    expect(formatGoDuration(-(1n << 63n))).toBe('-2562047h47m16.854775808s');
    expect(formatGoDuration((1n << 63n) - 1n)).toBe('2562047h47m16.854775807s');
    expect(parseGoDuration('-2562047h47m16.854775808s')).toBe(-(1n << 63n));
  });

  it('refuses to format what no Go Duration holds', () => {
    expect(() => formatGoDuration(1n << 63n)).toThrow(RangeError);
    expect(() => formatGoDuration(-(1n << 63n) - 1n)).toThrow(RangeError);
  });

  it('never throws anything but an Error with a "time: " message, on any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (s) => {
        try {
          parseGoDuration(s);
        } catch (e) {
          return e instanceof Error && e.message.startsWith('time: ');
        }
        return true;
      }),
      { numRuns: 5_000 },
    );
  });
});

describe('quoteForTimeError (time.quote)', () => {
  it.each([
    ['50s', '"50s"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['tab\there', '"tab\\x09here"'],
    ['µs', '"\\xc2\\xb5s"'],
    ['\u{1F600}', '"\\xf0\\x9f\\x98\\x80"'],
    ['\ud800', '"\\xef\\xbf\\xbd"'],
    ['\x7f', '"\x7f"'],
  ])('quotes %j as %s', (input, quoted) => {
    expect(quoteForTimeError(input)).toBe(quoted);
  });
});
