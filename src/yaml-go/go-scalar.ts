/**
 * How Spiderpool's Go YAML decoders resolve a plain (unquoted, untagged) scalar, and
 * whether the result fits a Go `bool` or `int` field: `resolve` in gopkg.in/yaml.v2
 * v2.4.0 and gopkg.in/yaml.v3 v3.0.1 (resolve.go), then `decoder.scalar` (decode.go).
 */
import { MIN_INT64, MAX_INT64 } from '../go/duration-units.js';

export type Semantics = 'yaml.v2' | 'yaml.v3';

/** A resolved scalar: Go's tag for it and, for numbers and bools, its value. */
export type Resolved =
  | { tag: '!!null' }
  | { tag: '!!bool'; value: boolean }
  | { tag: '!!int'; value: bigint }
  | { tag: '!!float'; value: number }
  | { tag: '!!str' | '!!merge' | '!!timestamp' | '!!binary' };

/** yaml.v2 reads YAML 1.1's y/yes/on/n/no/off words as bools; yaml.v3 only true/false. */
const YAML11_WORDS: ReadonlyMap<string, boolean> = new Map([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON'].map((w) => [w, true] as const),
  ...['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF'].map((w) => [w, false] as const),
]);
const CORE_BOOLS: ReadonlyMap<string, boolean> = new Map([
  ...['true', 'True', 'TRUE'].map((w) => [w, true] as const),
  ...['false', 'False', 'FALSE'].map((w) => [w, false] as const),
]);
const SPECIAL_FLOATS: ReadonlyMap<string, number> = new Map([
  ...['.nan', '.NaN', '.NAN'].map((w) => [w, NaN] as const),
  ...['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'].map((w) => [w, Infinity] as const),
  ...['-.inf', '-.Inf', '-.INF'].map((w) => [w, -Infinity] as const),
]);
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
/** `yamlStyleFloat` in both resolve.go files. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** What `strconv.ParseFloat` reads of a text starting with "." (no base prefix, so no "_"). */
const DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;
/** A timestamp starts with four digits and "-" (`parseTimestamp`'s quick check). */
const TIMESTAMP = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[-+][0-9]{2}:[0-9]{2})?)?$/;
const TWO_POW_63 = 2 ** 63;

/**
 * Resolves a scalar's text as the decoder's `resolve(tag, text)` does before comparing
 * the result with the tag: `resolve("", text)` for a plain scalar. `timestamps`: whether
 * a date is tried (only untagged or tagged `!!timestamp`; else `2001-12-14` is a string).
 */
export function resolvePlain(text: string, semantics: Semantics, timestamps = true): Resolved {
  if (NULLS.has(text)) return { tag: '!!null' };
  const first = text[0]!;
  // Only a text whose first character is in the resolve table is resolved at all.
  if (!/[-+0-9.yYnNtTfFoO~]/.test(first)) return { tag: '!!str' };
  const bool = CORE_BOOLS.get(text) ?? (semantics === 'yaml.v2' ? YAML11_WORDS.get(text) : undefined);
  if (bool !== undefined) return { tag: '!!bool', value: bool };
  const special = SPECIAL_FLOATS.get(text);
  if (special !== undefined) return { tag: '!!float', value: special };
  if (text === '<<') return { tag: '!!merge' };
  if (first === '.') {
    return DOT_FLOAT.test(text) && Number.isFinite(Number(text)) ? { tag: '!!float', value: Number(text) } : { tag: '!!str' };
  }
  if (!/[-+0-9]/.test(first)) return { tag: '!!str' };
  if (timestamps && TIMESTAMP.test(text)) return { tag: '!!timestamp' };
  const plain = text.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return { tag: '!!int', value: int };
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = Number(plain);
    // strconv.ParseFloat fails (ErrRange) beyond float64: the text stays a string.
    if (Number.isFinite(f)) return { tag: '!!float', value: f };
  }
  return { tag: '!!str' };
}

/**
 * `strconv.ParseInt(s, 0, 64)`, then `strconv.ParseUint(s, 0, 64)`: a signed or unsigned
 * 64-bit integer in base 10, 0x hex, 0o or leading-0 octal, 0b binary; `undefined` when
 * neither parses (a uint64 above int64 is returned as is: it resolves to !!int).
 */
function parseGoInt(s: string): bigint | undefined {
  let body = s;
  let sign = 1n;
  if (body[0] === '+' || body[0] === '-') {
    sign = body[0] === '-' ? -1n : 1n;
    body = body.slice(1);
  }
  const magnitude = parseGoUint(body);
  if (magnitude === undefined) return undefined;
  const value = sign * magnitude;
  if (value >= MIN_INT64 && value <= MAX_INT64) return value;
  // ParseUint takes no sign: only an unsigned text reads as uint64.
  return s === body && magnitude < 1n << 64n ? magnitude : undefined;
}

/** `strconv.ParseUint(s, 0, 64)`'s digits, without its range check (done by the caller). */
function parseGoUint(s: string): bigint | undefined {
  if (s === '') return undefined;
  let base = 10;
  let digits = s;
  if (s[0] === '0') {
    const prefix = s.length >= 3 ? s[1]!.toLowerCase() : '';
    base = prefix === 'b' ? 2 : prefix === 'o' ? 8 : prefix === 'x' ? 16 : 8;
    digits = prefix === 'b' || prefix === 'o' || prefix === 'x' ? s.slice(2) : s.slice(1);
  }
  let n = 0n;
  for (const c of digits) {
    const d = parseInt(c, 36);
    if (Number.isNaN(d) || d >= base) return undefined;
    n = n * BigInt(base) + BigInt(d);
    if (n >= 1n << 64n) return n; // out of range either way
  }
  return n;
}

/**
 * A resolved scalar stored in a Go `int` (decode.go, `case reflect.Int`): ints within
 * int64; floats `<= math.MaxInt64` (compared as float64, so up to 2^63), truncated
 * toward zero, where Go's conversion gives -2^63 for what int64 cannot hold (amd64).
 * `undefined` when the decoder refuses it.
 */
export function asGoInt(resolved: Resolved): bigint | undefined {
  if (resolved.tag === '!!int') return resolved.value <= MAX_INT64 ? resolved.value : undefined;
  if (resolved.tag !== '!!float' || !(resolved.value <= TWO_POW_63)) return undefined;
  const f = resolved.value;
  return f >= TWO_POW_63 || f < -TWO_POW_63 ? MIN_INT64 : BigInt(Math.trunc(f));
}

/**
 * A scalar stored in a Go `bool`: a resolved bool, or (yaml.v3 only, for compatibility
 * with YAML 1.1) a string that is one of the y/yes/on/n/no/off words, quoted or not.
 */
export function asGoBool(resolved: Resolved, text: string, semantics: Semantics): boolean | undefined {
  if (resolved.tag === '!!bool') return resolved.value;
  if (semantics === 'yaml.v3' && resolved.tag === '!!str') return YAML11_WORDS.get(text);
  return undefined;
}
