import { MAX_INT64, MICROSECOND, MILLISECOND, MIN_INT64, SECOND } from './duration-units.js';

/**
 * Formats nanoseconds the way Go's `time.Duration.String()` does (go/src/time/time.go):
 * `"72h3m0.5s"`, `"1.5s"`, `"1.2ms"`, `"3µs"` (U+00B5), `"0s"`; leading zero units are
 * omitted and a sub-second duration uses the largest of ns/µs/ms that fits.
 *
 * @param ns a duration in nanoseconds, which must fit in Go's int64.
 * @throws RangeError when `ns` is outside `-2^63 .. 2^63-1` (no Go Duration holds it).
 */
export function formatGoDuration(ns: bigint): string {
  if (ns < MIN_INT64 || ns > MAX_INT64) {
    throw new RangeError(`duration ${ns}ns is outside Go's int64 range`);
  }
  const neg = ns < 0n;
  let u = neg ? -ns : ns;
  let out: string;
  if (u < SECOND) {
    // Smaller than a second: use ns, µs or ms, like "1.2ms".
    if (u === 0n) return '0s';
    let unit: string;
    let prec: number;
    if (u < MICROSECOND) [unit, prec] = ['ns', 0];
    else if (u < MILLISECOND) [unit, prec] = ['µs', 3];
    else [unit, prec] = ['ms', 6];
    const frac = fractionDigits(u, prec);
    out = String(u / 10n ** BigInt(prec)) + frac + unit;
  } else {
    const frac = fractionDigits(u, 9);
    u /= SECOND; // whole seconds
    out = `${String(u % 60n) + frac}s`;
    u /= 60n; // whole minutes
    if (u > 0n) {
      out = `${String(u % 60n)}m${out}`;
      u /= 60n; // whole hours: Go stops at hours because days can be different lengths
      if (u > 0n) out = `${String(u)}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

/**
 * The fraction of `v / 10^prec` as `".123"`, trailing zeros omitted, and `""` when the
 * fraction is zero (Go's `fmtFrac`).
 */
function fractionDigits(v: bigint, prec: number): string {
  if (prec === 0) return '';
  const digits = String(v % 10n ** BigInt(prec))
    .padStart(prec, '0')
    .replace(/0+$/, '');
  return digits === '' ? '' : `.${digits}`;
}
