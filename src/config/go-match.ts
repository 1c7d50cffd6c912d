/**
 * Go's `filepath.Match(pattern, name)` on Linux (go/src/path/filepath/match.go, Go 1.26),
 * ported step for step over UTF-8 bytes: Spiderpool checks each masterNIC interface
 * pattern with `filepath.Match(pattern, "eth0")`, and whether a malformed pattern is
 * noticed depends on how far matching "eth0" gets, so only the same steps give the same
 * answer.
 *
 * @returns whether `name` matches, or `'bad pattern'` where Go returns `ErrBadPattern`.
 */
export function goFilepathMatch(patternText: string, nameText: string): boolean | 'bad pattern' {
  let pattern: Buffer = Buffer.from(patternText, 'utf8');
  let name: Buffer = Buffer.from(nameText, 'utf8');
  pattern: while (pattern.length > 0) {
    const [star, chunk, rest] = scanChunk(pattern);
    pattern = rest;
    if (star && chunk.length === 0) return !name.includes(SLASH);
    const first = matchChunk(chunk, name);
    if (first === BAD) return 'bad pattern';
    if (first !== undefined && (first.length === 0 || pattern.length > 0)) {
      name = first;
      continue;
    }
    if (star) {
      for (let i = 0; i < name.length && name[i] !== SLASH; i++) {
        const t = matchChunk(chunk, name.subarray(i + 1));
        if (t === BAD) return 'bad pattern';
        if (t !== undefined) {
          if (pattern.length === 0 && t.length > 0) continue;
          name = t;
          continue pattern;
        }
      }
    }
    return false;
  }
  return name.length === 0;
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const BAD = Symbol('ErrBadPattern');

function scanChunk(pattern: Buffer): [boolean, Buffer, Buffer] {
  let star = false;
  while (pattern.length > 0 && pattern[0] === 0x2a) {
    pattern = pattern.subarray(1);
    star = true;
  }
  let inRange = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === BACKSLASH) {
      if (i + 1 < pattern.length) i++;
    } else if (c === 0x5b) inRange = true;
    else if (c === 0x5d) inRange = false;
    else if (c === 0x2a && !inRange) return [star, pattern.subarray(0, i), pattern.subarray(i)];
  }
  return [star, pattern, Buffer.alloc(0)];
}

/** The rest of `s` after `chunk` matched its start, `undefined` when it did not, or BAD. */
function matchChunk(chunk: Buffer, s: Buffer): Buffer | undefined | typeof BAD {
  let failed = false;
  while (chunk.length > 0) {
    failed ||= s.length === 0;
    const c = chunk[0];
    if (c === 0x5b) {
      let r = -1;
      if (!failed) {
        const [rune, n] = decodeRune(s);
        r = rune;
        s = s.subarray(n);
      }
      chunk = chunk.subarray(1);
      let negated = false;
      if (chunk.length > 0 && chunk[0] === 0x5e) {
        negated = true;
        chunk = chunk.subarray(1);
      }
      let match = false;
      let nrange = 0;
      for (;;) {
        if (chunk.length > 0 && chunk[0] === 0x5d && nrange > 0) {
          chunk = chunk.subarray(1);
          break;
        }
        const lo = getEsc(chunk);
        if (lo === BAD) return BAD;
        let hi = lo.rune;
        chunk = lo.rest;
        if (chunk[0] === 0x2d) {
          const upper = getEsc(chunk.subarray(1));
          if (upper === BAD) return BAD;
          hi = upper.rune;
          chunk = upper.rest;
        }
        match ||= lo.rune <= r && r <= hi;
        nrange++;
      }
      failed ||= match === negated;
    } else if (c === 0x3f) {
      if (!failed) {
        failed = s[0] === SLASH;
        s = s.subarray(decodeRune(s)[1]);
      }
      chunk = chunk.subarray(1);
    } else {
      if (c === BACKSLASH) {
        chunk = chunk.subarray(1);
        if (chunk.length === 0) return BAD;
      }
      if (!failed) {
        failed = chunk[0] !== s[0];
        s = s.subarray(1);
      }
      chunk = chunk.subarray(1);
    }
  }
  return failed ? undefined : s;
}

/** A possibly escaped character of a class; BAD where Go's `getEsc` fails. */
function getEsc(chunk: Buffer): { rune: number; rest: Buffer } | typeof BAD {
  if (chunk.length === 0 || chunk[0] === 0x2d || chunk[0] === 0x5d) return BAD;
  if (chunk[0] === BACKSLASH) {
    chunk = chunk.subarray(1);
    if (chunk.length === 0) return BAD;
  }
  const [rune, n] = decodeRune(chunk);
  const rest = chunk.subarray(n);
  if ((rune === 0xfffd && n === 1) || rest.length === 0) return BAD;
  return { rune, rest };
}

/** `utf8.DecodeRune`: the rune and its length; U+FFFD and 1 for an invalid byte. */
function decodeRune(b: Buffer): [number, number] {
  const c = b[0]!;
  if (c < 0x80) return [c, 1];
  const n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? (c < 0xf0 ? 3 : 0) : c >= 0xc2 ? 2 : 0;
  if (n === 0 || b.length < n) return [0xfffd, 1];
  let r = c & (0xff >> (n + 1));
  for (let i = 1; i < n; i++) {
    const d = b[i]!;
    if ((d & 0xc0) !== 0x80) return [0xfffd, 1];
    r = (r << 6) | (d & 0x3f);
  }
  const min = [0, 0, 0x80, 0x800, 0x10000][n]!;
  if (r < min || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff)) return [0xfffd, 1];
  return [r, n];
}
