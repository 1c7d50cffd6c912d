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
  return '"' + escapeGo(s, true).text + '"';
}

/**
 * Escapes, as `strconv.Quote` would, only what a terminal could interpret (controls,
 * line and paragraph separators, other non-printable characters), keeping quotes and
 * backslashes: for third-party text that quotes user input, such as a YAML parser's error.
 */
export function escapeUnprintable(s: string): string {
  return escapeGo(s, false).text;
}

/** How many characters of a user's value a message shows; names are at most 253. */
const MAX_SHOWN_CHARS = 256;

/**
 * `s` cut to {@link MAX_SHOWN_CHARS} characters with a note of how much was left out, so
 * a hostile value cannot make a response (or a log line) many times larger than the request.
 */
export function truncate(s: string): string {
  return s.length <= MAX_SHOWN_CHARS ? s : `${head(s)}${omitted(s)}`;
}

/** A user's value in a message: {@link quoteGoString} of at most {@link MAX_SHOWN_CHARS} characters. */
export function quoteShown(s: string): string {
  return s.length <= MAX_SHOWN_CHARS ? quoteGoString(s) : `${quoteGoString(head(s))}${omitted(s)}`;
}

/** The first {@link MAX_SHOWN_CHARS} characters, never ending inside a surrogate pair. */
function head(s: string): string {
  const end = /[\ud800-\udbff]/.test(s[MAX_SHOWN_CHARS - 1]!) ? MAX_SHOWN_CHARS - 1 : MAX_SHOWN_CHARS;
  return s.slice(0, end);
}

function omitted(s: string): string {
  return `… (${s.length - head(s).length} more characters)`;
}

/** Characters of a value as written that a message's advice repeats (the cause shows it quoted already). */
export const ADVICE_VALUE_CHARS = 64;

/**
 * `s` escaped as {@link escapeUnprintable} does, cut to at most `max` characters of
 * escaped text, then `…`: a user's key inside a one-line message of bounded length.
 */
export function escapeShort(s: string, max: number): string {
  const { text, cut } = escapeGo(s, false, max);
  return cut ? `${text}…` : text;
}

/** {@link quoteGoString} of `s` cut as {@link escapeShort} cuts it (`"50s"…` when cut). */
export function quoteShort(s: string, max: number): string {
  const { text, cut } = escapeGo(s, true, max);
  return cut ? `"${text}"…` : `"${text}"`;
}

/** Go's escaping of `s`, stopping (`cut`) before the escaped text would pass `max` characters. */
function escapeGo(s: string, escapeQuotes: boolean, max = Infinity): { text: string; cut: boolean } {
  let out = '';
  for (let ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) ch = '\ufffd';
    const short = SHORT_ESCAPES[ch];
    let piece: string;
    if (short !== undefined && (escapeQuotes || (ch !== '"' && ch !== '\\'))) piece = short;
    else if (ch === ' ' || PRINTABLE.test(ch)) piece = ch;
    else if (cp < 0x80) piece = '\\x' + hex(cp, 2);
    else if (cp < 0x10000) piece = '\\u' + hex(cp, 4);
    else piece = '\\U' + hex(cp, 8);
    if (out.length + piece.length > max) return { text: out, cut: true };
    out += piece;
  }
  return { text: out, cut: false };
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
