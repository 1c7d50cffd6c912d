/** Letters, marks, numbers, punctuation and symbols: Go's `unicode.IsPrint` minus the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * Quotes `s` as Go's `strconv.Quote` (and so `fmt`'s `%q`) does: printable characters
 * stay, `\n`-style escapes for the usual controls, `\xNN` for other ASCII controls,
 * `\uXXXX`/`\UXXXXXXXX` for other non-printable characters. Kubernetes renders names and
 * bad values with `%q`, so messages built here read exactly as the API server's own.
 * A lone UTF-16 surrogate is shown as U+FFFD, as Go's JSON decoder would have stored it.
 */
export function quoteGoString(s: string): string {
  let out = '"';
  for (let ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) ch = '\ufffd';
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (ch === ' ' || PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += '\\x' + hex(cp, 2);
    else if (cp < 0x10000) out += '\\u' + hex(cp, 4);
    else out += '\\U' + hex(cp, 8);
  }
  return out + '"';
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
