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
 * "eth0"). {@link compileGoPattern} keeps that: its quick rejection is taken only where Go's
 * answer is `false` without an error.
 */

/** Go's `filepath.ErrBadPattern`, as Go renders it. */
export const BAD_PATTERN = 'syntax error in pattern';

const SEPARATOR = 0x2f; // '/'
const RUNE_ERROR = 0xfffd;

/** `Match`'s answer: whether the name matches, or Go's `ErrBadPattern`. */
export type MatchResult = boolean | typeof BAD_PATTERN;

const encoder = new TextEncoder();

/** Go's `utf8.DecodeRune`: the rune at `i` and its width; invalid bytes decode as U+FFFD, width 1. */
function decodeRune(b: Uint8Array, i: number): [rune: number, width: number] {
  const c0 = b[i]!;
  if (c0 < 0x80) return [c0, 1];
  const cont = (j: number) => (i + j < b.length && (b[i + j]! & 0xc0) === 0x80 ? b[i + j]! & 0x3f : -1);
  if (c0 >= 0xc2 && c0 <= 0xdf) {
    const c1 = cont(1);
    return c1 < 0 ? [RUNE_ERROR, 1] : [((c0 & 0x1f) << 6) | c1, 2];
  }
  if (c0 >= 0xe0 && c0 <= 0xef) {
    const c1 = cont(1);
    const c2 = cont(2);
    if (c1 < 0 || c2 < 0) return [RUNE_ERROR, 1];
    const r = ((c0 & 0x0f) << 12) | (c1 << 6) | c2;
    // Overlong forms and UTF-16 surrogates are invalid in Go.
    return r < 0x800 || (r >= 0xd800 && r <= 0xdfff) ? [RUNE_ERROR, 1] : [r, 3];
  }
  if (c0 >= 0xf0 && c0 <= 0xf4) {
    const c1 = cont(1);
    const c2 = cont(2);
    const c3 = cont(3);
    if (c1 < 0 || c2 < 0 || c3 < 0) return [RUNE_ERROR, 1];
    const r = ((c0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3;
    return r < 0x10000 || r > 0x10ffff ? [RUNE_ERROR, 1] : [r, 4];
  }
  return [RUNE_ERROR, 1];
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
      case 0x5c: // '\\': a trailing one is refused by matchChunk
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

/** `getEsc`: a possibly escaped character of a class at `i`: [rune, next index], or null for ErrBadPattern. */
function getEsc(c: Uint8Array, i: number, end: number): [number, number] | null {
  if (i >= end || c[i] === 0x2d || c[i] === 0x5d) return null;
  if (c[i] === 0x5c) {
    i++;
    if (i >= end) return null;
  }
  const [r, n] = decodeRune(c.subarray(0, end), i);
  if (r === RUNE_ERROR && n === 1) return null;
  if (i + n >= end) return null;
  return [r, i + n];
}

/**
 * `matchChunk`: whether `c[from:to]` matches the start of `s[at:]`; the index in `s` after
 * the match, -1 for no match, or `BAD_PATTERN`.
 */
function matchChunk(c: Uint8Array, from: number, to: number, s: Uint8Array, at: number): number | typeof BAD_PATTERN {
  let failed = false;
  let i = from;
  let j = at;
  while (i < to) {
    failed = failed || j >= s.length;
    switch (c[i]) {
      case 0x5b: {
        let r = 0;
        if (!failed) {
          const [rune, n] = decodeRune(s, j);
          r = rune;
          j += n;
        }
        i++;
        let negated = false;
        if (i < to && c[i] === 0x5e) {
          negated = true;
          i++;
        }
        let match = false;
        let ranges = 0;
        for (;;) {
          if (i < to && c[i] === 0x5d && ranges > 0) {
            i++;
            break;
          }
          const lo = getEsc(c, i, to);
          if (lo === null) return BAD_PATTERN;
          let hi = lo;
          if (c[lo[1]] === 0x2d) {
            const h = getEsc(c, lo[1] + 1, to);
            if (h === null) return BAD_PATTERN;
            hi = h;
          }
          i = hi[1];
          match = match || (lo[0] <= r && r <= hi[0]);
          ranges++;
        }
        failed = failed || match === negated;
        break;
      }
      case 0x3f:
        if (!failed) {
          failed = s[j] === SEPARATOR;
          j += decodeRune(s, j)[1];
        }
        i++;
        break;
      default:
        if (c[i] === 0x5c) {
          // An escaped byte is a literal (Go's fallthrough into the literal case).
          i++;
          if (i >= to) return BAD_PATTERN;
        }
        if (!failed) {
          failed = c[i] !== s[j];
          j++;
        }
        i++;
    }
  }
  return failed ? -1 : j;
}

/** Go's `filepath.Match(pattern, name)` on the UTF-8 bytes of both. */
export function goMatchBytes(p: Uint8Array, name: Uint8Array): MatchResult {
  let pi = 0;
  let ni = 0;
  pattern: while (pi < p.length) {
    const [star, from, to] = scanChunk(p, pi);
    pi = to;
    if (star && from === to) return !name.subarray(ni).includes(SEPARATOR);
    const t = matchChunk(p, from, to, name, ni);
    if (t !== BAD_PATTERN && t >= 0 && (t === name.length || pi < p.length)) {
      ni = t;
      continue;
    }
    if (t === BAD_PATTERN) return BAD_PATTERN;
    if (star) {
      for (let i = ni; i < name.length && name[i] !== SEPARATOR; i++) {
        const u = matchChunk(p, from, to, name, i + 1);
        if (u !== BAD_PATTERN && u >= 0) {
          if (pi === p.length && u < name.length) continue;
          ni = u;
          continue pattern;
        }
        if (u === BAD_PATTERN) return BAD_PATTERN;
      }
    }
    return false;
  }
  return ni === name.length;
}

/** Go's `filepath.Match(pattern, name)`. */
export function goMatch(pattern: string, name: string): MatchResult {
  return goMatchBytes(encoder.encode(pattern), encoder.encode(name));
}

/** A pattern prepared for matching many names. */
export interface GoPattern {
  /** Go's answer for `name`. */
  match(name: string): MatchResult;
}

/** A rune as a regular expression atom (with the `u` flag). */
const atom = (rune: number): string => `\\u{${rune.toString(16)}}`;

/**
 * The regular expression with Go's answers, for ASCII names, for a pattern all of whose
 * chunks are well-formed (Go then never refuses it, whatever the name): Go's `Match` places each chunk at its
 * leftmost fit after a star and requires the last to end the name, which is the glob's
 * meaning, `*` any run of non-'/' characters, `?` one non-'/' character, a class one
 * character in (or, with `^`, not in) its ranges. Runes compare by code point in both.
 */
function globRegExp(p: Uint8Array): RegExp {
  let out = '^';
  let i = 0;
  const rune = (): number => {
    const [r, n] = decodeRune(p, i);
    i += n;
    return r;
  };
  while (i < p.length) {
    const c = p[i]!;
    if (c === 0x2a) {
      out += '[^/]*';
      i++;
    } else if (c === 0x3f) {
      out += '[^/]';
      i++;
    } else if (c === 0x5b) {
      i++;
      let cls = '';
      if (p[i] === 0x5e) {
        cls = '^';
        i++;
      }
      let ranges = 0;
      while (!(p[i] === 0x5d && ranges > 0)) {
        if (p[i] === 0x5c) i++;
        const lo = rune();
        let hi = lo;
        if (p[i] === 0x2d) {
          i++;
          if (p[i] === 0x5c) i++;
          hi = rune();
        }
        // An empty range (lo > hi) matches nothing in Go; a regular expression would refuse it.
        cls += lo <= hi ? `${atom(lo)}-${atom(hi)}` : '';
        ranges++;
      }
      i++;
      out += cls === '' ? '[]' : cls === '^' ? '[^]' : `[${cls}]`;
    } else {
      if (c === 0x5c) i++;
      out += atom(rune());
    }
  }
  return new RegExp(`${out}$`, 'u');
}

const encodeName = (name: string) => encoder.encode(name);
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The longest run of literal characters of a well-formed pattern (escapes resolved), outside
 * classes and around `*` and `?`.
 */
function longestLiteral(pattern: string): string {
  let best = '';
  let run = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' || c === '?' || c === '[') {
      if (run.length > best.length) best = run;
      run = '';
      if (c === '[') {
        // Skip the class: up to the first ']' that closes it (one range at least, escapes skipped).
        let j = i + 1;
        if (pattern[j] === '^') j++;
        let ranges = 0;
        while (j < pattern.length && !(pattern[j] === ']' && ranges > 0)) {
          if (pattern[j] === '\\') j++;
          j++;
          ranges++;
        }
        i = j;
      }
      continue;
    }
    if (c === '\\') i++;
    run += pattern[i] ?? '';
  }
  return run.length > best.length ? run : best;
}

/**
 * `pattern` prepared for many names. When every chunk is well-formed, Go never refuses it
 * and, for ASCII names (every Kubernetes object name), a regular expression gives its
 * answers; otherwise Go's steps run on each name, since whether it is refused then depends
 * on the name (`a*[` against `a` or `b`).
 */
export function compileGoPattern(pattern: string): GoPattern {
  const bytes = encoder.encode(pattern);
  let wellFormed = !pattern.includes('\ufffd'); // U+FFFD may stand for bytes a JS string cannot hold
  for (let at = 0; wellFormed && at < bytes.length; ) {
    const [, from, to] = scanChunk(bytes, at);
    wellFormed = matchChunk(bytes, from, to, new Uint8Array(0), 0) !== BAD_PATTERN;
    at = to;
  }
  // A class may match '/' (Go excludes it only from `*` and `?`): after a star, Go commits to
  // the class's leftmost fit where a regular expression would backtrack into one over '/'
  // (`*[^a]*` against "^/"), so such patterns take Go's steps.
  if (wellFormed && !(pattern.includes('*') && pattern.includes('['))) {
    const re = globRegExp(bytes);
    // A literal run of the pattern must appear in any name it matches: a cheap test first.
    const literal = longestLiteral(pattern);
    // Go's star skips bytes, not runes, so after a star `?` or a class can start inside a
    // multi-byte character (`*??` matches "☺"): names beyond ASCII take Go's steps.
    return {
      match: (name) => (NON_ASCII.test(name) ? goMatchBytes(bytes, encodeName(name)) : (literal === '' || name.includes(literal)) && re.test(name)),
    };
  }
  return { match: (name) => goMatchBytes(bytes, encodeName(name)) };
}
