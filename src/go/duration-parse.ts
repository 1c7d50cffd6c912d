import { quoteForTimeError } from './time-quote.js';
import { HOUR, MAX_INT64, MICROSECOND, MILLISECOND, MINUTE, NANOSECOND, SECOND } from './duration-units.js';

/** Nanoseconds per unit, as `unitMap` in go/src/time/format.go. */
const UNIT_NS: ReadonlyMap<string, bigint> = new Map([
  ['ns', NANOSECOND],
  ['us', MICROSECOND],
  ['µs', MICROSECOND], // U+00B5 micro sign
  ['μs', MICROSECOND], // U+03BC Greek small letter mu
  ['ms', MILLISECOND],
  ['s', SECOND],
  ['m', MINUTE],
  ['h', HOUR],
]);

/** Go accumulates in a uint64 and allows 2^63 on the way (for -2^63). */
const TWO_POW_63 = MAX_INT64 + 1n;
/** Go's `d` is a uint64: sums are taken modulo 2^64. */
const UINT64_MASK = (1n << 64n) - 1n;

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/**
 * Parses a Go duration string exactly as Go's `time.ParseDuration` does
 * (go/src/time/format.go): `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, units
 * `ns`, `us`/`µs`/`μs`, `ms`, `s`, `m`, `h`; the lone `0` needs no unit.
 *
 * @param s the duration as written, e.g. `"50s"`, `"1m30s"`, `"1.5m"`, `"-1s"`.
 * @returns the duration in nanoseconds, within int64 (`-2^63 .. 2^63-1`).
 * @throws Error whose `message` is exactly Go's error text, e.g.
 *   `time: missing unit in duration "50"` or `time: unknown unit "d" in duration "1d"`.
 *
 * The steps and their order mirror Go 1.26's function, including its float64 rounding of
 * fractions (`v += uint64(float64(f) * (float64(unit) / scale))`), its overflow checks and
 * the uint64 wrap of its running sum,
 * so that values and error texts agree with Go byte for byte.
 */
export function parseGoDuration(s: string): bigint {
  const orig = s;
  const invalid = (): Error => new Error('time: invalid duration ' + quoteForTimeError(orig));
  let d = 0n;
  let neg = false;

  // Consume [-+]?
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  // Special case: if all that is left is "0", this is zero.
  if (s === '0') return 0n;
  if (s === '') throw invalid();

  while (s !== '') {
    // The next character must be [0-9.]
    if (!(s[0] === '.' || isDigit(s.charCodeAt(0)))) throw invalid();

    // Consume [0-9]*
    const intStart = s.length;
    const int = leadingInt(s);
    if (int === null) throw invalid();
    let v: bigint;
    [v, s] = int;
    const pre = intStart !== s.length; // whether we consumed anything before a period

    // Consume (\.[0-9]*)?
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      const fracStart = s.length;
      [f, scale, s] = leadingFraction(s);
      post = fracStart !== s.length;
    }
    // No digits (e.g. ".s" or "-.s").
    if (!pre && !post) throw invalid();

    // Consume unit: everything up to the next '.' or digit.
    let i = 0;
    while (i < s.length && !(s[i] === '.' || isDigit(s.charCodeAt(i)))) i++;
    if (i === 0) throw new Error('time: missing unit in duration ' + quoteForTimeError(orig));
    const u = s.slice(0, i);
    s = s.slice(i);
    const unit = UNIT_NS.get(u);
    if (unit === undefined) {
      throw new Error('time: unknown unit ' + quoteForTimeError(u) + ' in duration ' + quoteForTimeError(orig));
    }
    if (v > TWO_POW_63 / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // Go computes the fraction in float64 ("float64 is needed to be nanosecond
      // accurate for fractions of hours") and truncates toward zero.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > TWO_POW_63) throw invalid();
    }
    // Go adds in a uint64: d and v are each at most 2^63, so the sum wraps to 0 exactly
    // when both are 2^63 ("9223372036854775808ns9223372036854775808ns1h" is 1h).
    d = (d + v) & UINT64_MASK;
    if (d > TWO_POW_63) throw invalid();
  }
  if (neg) return -d;
  if (d > MAX_INT64) throw invalid();
  return d;
}

/** Consumes the leading `[0-9]*` of `s`; Go's `leadingInt`: `null` past 2^63 (overflow). */
function leadingInt(s: string): [bigint, string] | null {
  let x = 0n;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) break;
    if (x > TWO_POW_63 / 10n) return null;
    x = x * 10n + BigInt(c - 0x30);
    if (x > TWO_POW_63) return null;
  }
  return [x, s.slice(i)];
}

/**
 * Consumes the leading `[0-9]*` after a decimal point; Go's `leadingFraction`, which on
 * overflow stops accumulating precision instead of failing. `scale` is a float64 power of
 * ten, as in Go.
 */
function leadingFraction(s: string): [bigint, number, string] {
  let x = 0n;
  let scale = 1;
  let overflow = false;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) break;
    if (overflow) continue;
    if (x > MAX_INT64 / 10n) {
      overflow = true;
      continue;
    }
    const y = x * 10n + BigInt(c - 0x30);
    if (y > TWO_POW_63) {
      overflow = true;
      continue;
    }
    x = y;
    scale *= 10;
  }
  return [x, scale, s.slice(i)];
}
