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
