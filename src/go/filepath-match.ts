/**
 * Go's `path/filepath.Match` on Linux (src/path/filepath/match.go, Go 1.26): the same steps
 * in the same order, on UTF-8 bytes as Go's strings are, so that every pattern matches, fails
 * or is refused (`ErrBadPattern`) exactly as it does there. Spiderpool calls it in two places
 * this webhook reproduces: expanding a wildcard pool name (`ParseWildcardPoolNameList` in
 * pkg/ippoolmanager) and checking each masterNIC interface pattern of conf.yml with
 * `filepath.Match(pattern, "eth0")` at start.
 *
 *   pattern:  { term }
 *   term:     '*' (any run of non-'/' bytes) | '?' (one non-'/' character)
 *             | '[' [ '^' ] { range } ']' | '\\' c | c
 *   range:    c | '\\' c | lo '-' hi
 *
 * Go checks the rest of a chunk for well-formedness even after the name failed to match it,
 * but never looks at chunks after a failed one: so whether a pattern is refused can depend on
 * the name (`a*[` is refused against `a`, not against `b`; `x*[` is not refused against
 * "eth0"). Go commits to the leftmost fit of each chunk after a star and never backtracks, so
 * a pattern against a name takes at most |pattern| × (|name| + 1) steps: linear per pair.
 */

/** Go's `filepath.ErrBadPattern`, as Go renders it. */
export const BAD_PATTERN = 'syntax error in pattern';

const SEPARATOR = 0x2f; // '/'
const RUNE_ERROR = 0xfffd;

/** `Match`'s answer: whether the name matches, or Go's `ErrBadPattern`. */
export type MatchResult = boolean | typeof BAD_PATTERN;

const encoder = new TextEncoder();

/** The continuation bits of `b[k]`, or -1 when `k` is past `end` or `b[k]` is no continuation byte. */
function cont(b: Uint8Array, k: number, end: number): number {
  return k < end && (b[k]! & 0xc0) === 0x80 ? b[k]! & 0x3f : -1;
}

/** U+FFFD of width 1, as {@link decodeRune} packs it: Go's answer for an invalid byte. */
const INVALID = (RUNE_ERROR << 3) | 1;

/**
 * Go's `utf8.DecodeRune(b[i:end])`: the rune and its width packed as `rune << 3 | width`
 * (a number, not a pair: this runs for each byte matched); invalid bytes decode as U+FFFD, width 1.
 */
function decodeRune(b: Uint8Array, i: number, end: number): number {
  const c0 = b[i]!;
  if (c0 < 0x80) return (c0 << 3) | 1;
  if (c0 >= 0xc2 && c0 <= 0xdf) {
    const c1 = cont(b, i + 1, end);
    return c1 < 0 ? INVALID : ((((c0 & 0x1f) << 6) | c1) << 3) | 2;
  }
  if (c0 >= 0xe0 && c0 <= 0xef) {
    const c1 = cont(b, i + 1, end);
    const c2 = cont(b, i + 2, end);
    if (c1 < 0 || c2 < 0) return INVALID;
    const r = ((c0 & 0x0f) << 12) | (c1 << 6) | c2;
    // Overlong forms and UTF-16 surrogates are invalid in Go.
    return r < 0x800 || (r >= 0xd800 && r <= 0xdfff) ? INVALID : (r << 3) | 3;
  }
  if (c0 >= 0xf0 && c0 <= 0xf4) {
    const c1 = cont(b, i + 1, end);
    const c2 = cont(b, i + 2, end);
    const c3 = cont(b, i + 3, end);
    if (c1 < 0 || c2 < 0 || c3 < 0) return INVALID;
    const r = ((c0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3;
    return r < 0x10000 || r > 0x10ffff ? INVALID : (r << 3) | 4;
  }
  return INVALID;
}

/** `scanChunk`: [star, chunk start, chunk end] from `start`; the rest begins at chunk end. */
function scanChunk(p: Uint8Array, start: number): [star: boolean, from: number, to: number] {
  let i = start;
  let star = false;
  while (i < p.length && p[i] === 0x2a) {
    i++;
    star = true;
  }
  const from = i;
  let inRange = false;
  for (; i < p.length; i++) {
    switch (p[i]) {
      case 0x5c: // '\\': a trailing one is refused by readChunk
        if (i + 1 < p.length) i++;
        break;
      case 0x5b:
        inRange = true;
        break;
      case 0x5d:
        inRange = false;
        break;
      case 0x2a:
        if (!inRange) return [star, from, i];
    }
  }
  return [star, from, p.length];
}

/** `getEsc`: a possibly escaped character of a class at `i`, before `end`: [rune, next index], or null for ErrBadPattern. */
function getEsc(c: Uint8Array, i: number, end: number): [number, number] | null {
  if (i >= end || c[i] === 0x2d || c[i] === 0x5d) return null;
  if (c[i] === 0x5c) {
    i++;
    if (i >= end) return null;
  }
  const packed = decodeRune(c, i, end);
  if (packed === INVALID) return null;
  const next = i + (packed & 7);
  return next >= end ? null : [packed >> 3, next];
}

/**
 * The class at `c[i] === '['`, read as `matchChunk` reads it: [negated (0 or 1), index after
 * the class, lo, hi, lo, hi, …], or null where Go refuses it.
 */
function readClass(c: Uint8Array, i: number, to: number): Int32Array | null {
  i++;
  let negated = 0;
  if (i < to && c[i] === 0x5e) {
    negated = 1;
    i++;
  }
  const ranges: number[] = [];
  for (;;) {
    if (i < to && c[i] === 0x5d && ranges.length > 0) break;
    const lo = getEsc(c, i, to);
    if (lo === null) return null;
    let hi = lo;
    if (c[lo[1]] === 0x2d) {
      const h = getEsc(c, lo[1] + 1, to);
      if (h === null) return null;
      hi = h;
    }
    i = hi[1];
    ranges.push(lo[0], hi[0]);
  }
  const out = new Int32Array(2 + ranges.length);
  out.set([negated, i + 1]);
  out.set(ranges, 2);
  return out;
}

/**
 * Reads `c[from:to]` as `matchChunk` does, putting each class into `classes` at its '[':
 * false where Go refuses the chunk. The chunk is read the same whatever the name, so Go
 * refuses it for every name or for none.
 */
function readChunk(c: Uint8Array, from: number, to: number, classes: Int32Array[]): boolean {
  for (let i = from; i < to; ) {
    if (c[i] === 0x5b) {
      const cls = readClass(c, i, to);
      if (cls === null) return false;
      classes[i] = cls;
      i = cls[1]!;
    } else if (c[i] === 0x5c) {
      if (i + 1 >= to) return false; // a trailing '\\'
      i += 2;
    } else i++;
  }
  return true;
}

/** A pattern read once: its chunks as `scanChunk` cuts them, and the classes of those Go accepts. */
interface Prepared {
  p: Uint8Array;
  /** Per chunk: star (0 or 1), from, to, refused (1 where Go refuses the chunk). */
  chunks: Int32Array;
  /** At each '[' of an accepted chunk: {@link readClass}'s reading. */
  classes: Int32Array[];
}

function prepare(p: Uint8Array): Prepared {
  const chunks: number[] = [];
  const classes: Int32Array[] = [];
  for (let at = 0; at < p.length; ) {
    const [star, from, to] = scanChunk(p, at);
    chunks.push(star ? 1 : 0, from, to, readChunk(p, from, to, classes) ? 0 : 1);
    at = to;
  }
  return { p, chunks: Int32Array.from(chunks), classes };
}

/** Steps left to a caller that bounds its matching; each match takes the steps it reads. */
export interface StepMeter {
  remaining: number;
}

/** The answer of a match that ran out of steps. */
export const OUT_OF_STEPS = 'out of steps';

/**
 * `matchChunk` for a chunk Go accepts: whether `c[from:to]` matches the start of `s[at:end]`;
 * the index in `s` after the match, or -1. Go reads the rest of a chunk after a mismatch only
 * to refuse a malformed one, so this stops there. Takes a step per element and per class range
 * read: at most `to - from`.
 */
function matchChunk(prepared: Prepared, from: number, to: number, s: Uint8Array, at: number, end: number, meter: StepMeter): number {
  const { p: c, classes } = prepared;
  let i = from;
  let j = at;
  let steps = 0;
  while (i < to && j < end) {
    steps++;
    const b = c[i]!;
    if (b === 0x5b) {
      const cls = classes[i]!;
      const packed = decodeRune(s, j, end);
      const r = packed >> 3;
      let k = 2;
      while (k < cls.length && !(cls[k]! <= r && r <= cls[k + 1]!)) k += 2;
      steps += (k - 2) >> 1;
      if (k < cls.length === (cls[0] === 1)) break;
      j += packed & 7;
      i = cls[1]!;
    } else if (b === 0x3f) {
      if (s[j] === SEPARATOR) break;
      j += decodeRune(s, j, end) & 7;
      i++;
    } else {
      // An escaped byte is a literal (Go's fallthrough into the literal case).
      const literal = b === 0x5c ? i + 1 : i;
      if (c[literal] !== s[j]) break;
      j++;
      i = literal + 1;
    }
  }
  meter.remaining -= steps;
  return i >= to ? j : -1;
}

/** Whether `s[from:end]` holds a '/', a step per byte read. */
function hasSeparator(s: Uint8Array, from: number, end: number, meter: StepMeter): boolean {
  for (let i = from; i < end; i++) {
    if (s[i] === SEPARATOR) {
      meter.remaining -= i - from + 1;
      return true;
    }
  }
  meter.remaining -= end - from;
  return false;
}

/**
 * Go's `Match` on a prepared pattern and the name `s[start:end]`, taking its steps from
 * `meter`: {@link OUT_OF_STEPS} once it has none left (at most one chunk's steps over).
 * Go commits to each chunk's leftmost fit after a star, so a chunk is tried at most once per
 * name position: at most |pattern| × (|name| + 1) steps, linear per pair.
 */
function matchBytes(prepared: Prepared, s: Uint8Array, start: number, end: number, meter: StepMeter): MatchResult | typeof OUT_OF_STEPS {
  const { chunks } = prepared;
  let ni = start;
  pattern: for (let k = 0; k < chunks.length; k += 4) {
    const star = chunks[k] === 1;
    const from = chunks[k + 1]!;
    const to = chunks[k + 2]!;
    const last = k + 4 === chunks.length;
    if (star && from === to) {
      const answer = !hasSeparator(s, ni, end, meter);
      return meter.remaining < 0 ? OUT_OF_STEPS : answer;
    }
    if (chunks[k + 3] === 1) return BAD_PATTERN;
    const t = matchChunk(prepared, from, to, s, ni, end, meter);
    if (t >= 0 && (t === end || !last)) {
      ni = t;
      continue;
    }
    if (star) {
      for (let i = ni; i < end && s[i] !== SEPARATOR; i++) {
        if (meter.remaining < 0) return OUT_OF_STEPS;
        const u = matchChunk(prepared, from, to, s, i + 1, end, meter);
        if (u >= 0 && !(last && u < end)) {
          ni = u;
          continue pattern;
        }
      }
    }
    return meter.remaining < 0 ? OUT_OF_STEPS : false;
  }
  return meter.remaining < 0 ? OUT_OF_STEPS : ni === end;
}

/** Unbounded: Go's own answer, whatever it takes. */
const unmetered = (): StepMeter => ({ remaining: Infinity });

/** Go's `filepath.Match(pattern, name)` on the UTF-8 bytes of both. */
function goMatchBytes(p: Uint8Array, name: Uint8Array): MatchResult {
  return matchBytes(prepare(p), name, 0, name.length, unmetered()) as MatchResult;
}

/** Go's `filepath.Match(pattern, name)`. */
export function goMatch(pattern: string, name: string): MatchResult {
  return goMatchBytes(encoder.encode(pattern), encoder.encode(name));
}

/** A pattern prepared for matching many names. */
export interface GoPattern {
  /** Go's answer for `name`. */
  match(name: string): MatchResult;
  /** Go's answer for the UTF-8 name `bytes[start:end]`, or {@link OUT_OF_STEPS} once `meter` has none left. */
  matchWithin(bytes: Uint8Array, start: number, end: number, meter: StepMeter): MatchResult | typeof OUT_OF_STEPS;
}

/**
 * `pattern` read once for many names: Go's steps on every name, linear per pair (the
 * backtracking regular expression used before took seconds per name for 13 `*` then 64 `?`).
 */
export function compileGoPattern(pattern: string): GoPattern {
  const prepared = prepare(encoder.encode(pattern));
  return {
    match: (name) => {
      const bytes = encoder.encode(name);
      return matchBytes(prepared, bytes, 0, bytes.length, unmetered()) as MatchResult;
    },
    matchWithin: (bytes, start, end, meter) => matchBytes(prepared, bytes, start, end, meter),
  };
}
