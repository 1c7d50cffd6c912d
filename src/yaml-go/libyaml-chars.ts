/**
 * libyaml's character classes (yaml_private.h, as Go's yaml.v2/v3 carry them in
 * yamlprivateh.go), for every reading of conf.yml here. JavaScript's `\s` and `trim()`
 * take far more (NBSP U+00A0, U+2003, U+3000, U+FEFF...), which libyaml reads as text.
 */

/** Characters libyaml takes in a tag after its `!` (scannerc.go `yaml_parser_scan_tag_uri`). */
export const TAG_CHARACTER = /[0-9A-Za-z\-_;/?:@&=+$,.!~*'()[\]%]/;

/** libyaml's anchor and alias name characters (scannerc.go `yaml_parser_scan_anchor`). */
export const ANCHOR_CHARACTER = /[0-9A-Za-z_-]/;

/** `is_blank`: a space or a tab. */
export const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';

/** `is_break`: CR, LF, NEL (U+0085), LS (U+2028) and PS (U+2029). */
export const isBreak = (c: string | undefined): boolean => c === '\r' || c === '\n' || c === '\u0085' || c === '\u2028' || c === '\u2029';

/** `is_blankz` without NUL: a blank, a line break or the end of the text. */
export const blankOrEnd = (c: string | undefined): boolean => c === undefined || isBlank(c) || isBreak(c);

/** `text` without the blanks (spaces and tabs) at its end; one pass from the end. */
export function trimBlanksEnd(text: string): string {
  let end = text.length;
  while (end > 0 && isBlank(text[end - 1])) end--;
  return text.slice(0, end);
}

/** `text` without the blanks (spaces and tabs) at either end. */
export function trimBlanks(text: string): string {
  let start = 0;
  while (start < text.length && isBlank(text[start])) start++;
  return trimBlanksEnd(text.slice(start));
}

/**
 * A tag's or %TAG prefix's text with its `%XX` escapes decoded as libyaml decodes them
 * (scannerc.go `yaml_parser_scan_uri_escapes`): each `%` starts two hex digits, and the
 * octets of one character form a UTF-8 sequence (its leading octet gives the length);
 * or Go's problem with the first bad escape ("did not find URI escaped octet", "found an
 * incorrect leading UTF-8 octet", "found an incorrect trailing UTF-8 octet").
 */
export function decodeUriEscapes(uri: string): { decoded: string } | { problem: string } {
  let decoded = '';
  for (let at = 0; at < uri.length; ) {
    if (uri[at] !== '%') {
      decoded += uri[at++];
      continue;
    }
    const octets: number[] = [];
    for (let width = 1; octets.length < width; at += 3) {
      const hex = uri.slice(at + 1, at + 3);
      if (uri[at] !== '%' || !/^[0-9A-Fa-f]{2}$/.test(hex)) return { problem: 'did not find URI escaped octet' };
      const octet = parseInt(hex, 16);
      if (octets.length === 0) {
        width = octet < 0x80 ? 1 : (octet & 0xe0) === 0xc0 ? 2 : (octet & 0xf0) === 0xe0 ? 3 : (octet & 0xf8) === 0xf0 ? 4 : 0;
        if (width === 0) return { problem: 'found an incorrect leading UTF-8 octet' };
      } else if ((octet & 0xc0) !== 0x80) return { problem: 'found an incorrect trailing UTF-8 octet' };
      octets.push(octet);
    }
    decoded += Buffer.from(octets).toString('utf8');
  }
  return { decoded };
}

/** `text` with libyaml's lone CR and NEL line breaks read as LF, which the `yaml` package takes for text (same length). */
export function lfBreaks(text: string): string {
  return text.replace(/\r(?!\n)|\u0085/g, '\n');
}

/** The offset just past the line break at `at` (CR LF as one), `at` when none stands there. */
function pastBreak(text: string, at: number): number {
  if (!isBreak(text[at])) return at;
  return text[at] === '\r' && text[at + 1] === '\n' ? at + 2 : at + 1;
}

/** Where 0-based line `line` of `text` starts, lines ended by libyaml's breaks (CR LF as one); the text's length past its last line. */
export function lineStartOffset(text: string, line: number): number {
  let at = 0;
  for (let n = 0; n < line && at < text.length; at++) {
    if (!isBreak(text[at])) continue;
    at = pastBreak(text, at) - 1;
    n++;
  }
  return Math.min(at, text.length);
}

/** The 0-based line of offset `at` in `text`, counted as {@link lineStartOffset} counts. */
export function lineOf(text: string, at: number): number {
  let line = 0;
  for (let i = 0; i < at; ) {
    if (isBreak(text[i])) {
      line++;
      i = pastBreak(text, i);
    } else i++;
  }
  return line;
}

/** The offset of the first line break at or after `at` (the text's length when none). */
export function lineEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && !isBreak(text[i])) i++;
  return i;
}
