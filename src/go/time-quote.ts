const utf8 = new TextEncoder();

/**
 * Quotes `s` the way Go's `time` package quotes a duration in its error messages
 * (`quote` in go/src/time/format.go): every byte of the UTF-8 encoding that is not
 * printable ASCII (below 0x20 or at/above 0x80) becomes `\xNN`, and `"` and `\` are
 * backslash-escaped. A lone UTF-16 surrogate encodes as U+FFFD, which is what Go's
 * JSON decoder turns it into before `time.ParseDuration` would see it.
 */
export function quoteForTimeError(s: string): string {
  let out = '"';
  for (const byte of utf8.encode(s)) {
    if (byte < 0x20 || byte >= 0x80) {
      out += '\\x' + byte.toString(16).padStart(2, '0');
    } else {
      const c = String.fromCharCode(byte);
      out += c === '"' || c === '\\' ? '\\' + c : c;
    }
  }
  return out + '"';
}
