/**
 * libyaml's scanner (scannerc.go) on the raw text where a flow collection makes it read
 * otherwise than the `yaml` package: how deep flow collections nest, which `-` and `:`
 * are parts of plain scalars, and the rewrites that make the `yaml` package read them
 * so (libyaml-parse.ts applies them).
 */
import type { Document } from 'yaml';
import { ANCHOR_CHARACTER, TAG_CHARACTER, blankOrEnd, isBlank, isBreak } from './libyaml-chars.js';

/**
 * Flow collections as libyaml opens them, outside comments and quoted scalars (a `[` or
 * `{` inside a plain scalar in block context, `a: b[c`, opens none): the deepest nesting;
 * each `-` right before `,` `]` or `}` inside one (libyaml's plain scalar `-`); and each
 * `:` inside one that libyaml reads as part of a plain scalar although the `yaml` package
 * reads it as a value indicator: right before `,` `]` `}` (`key:,` `key :}` are the
 * scalars "key:" and "key :"), or before `[` `{`, where libyaml's plain scalar ends and
 * its parser then fails; and where a space must follow a `:` or `?` that libyaml reads as
 * an indicator although the `yaml` package reads a plain scalar (`{*a :x}`, `{?x: 1}`).
 *
 * In a flow collection, libyaml's plain scalar (scannerc.go `yaml_parser_scan_plain_scalar`)
 * goes on over blanks and line breaks and ends only at `:` followed by a blank, at
 * `,` `?` `[` `]` `{` `}`, or at a `#` after a blank; `:` and `?` where a token starts are
 * indicators (`yaml_parser_fetch_next_token`). Blanks are libyaml's (libyaml-chars.ts): a
 * NBSP or U+3000 is text, so a `#` after one is no comment and a `-` after one no scalar `-`.
 * `blockScalars`: [start, end) offsets of block scalars (ascending), text that opens no
 * flow collection, skipped where they start outside one.
 */
export function scanFlow(
  text: string,
  blockScalars: ReadonlyArray<readonly [number, number]> = [],
): { deepest: number; dashes: number[]; colons: number[]; spaces: number[] } {
  const dashes: number[] = [];
  const colons: number[] = [];
  const spaces: number[] = [];
  let depth = 0;
  let deepest = 0;
  /** Inside a flow collection: a plain scalar is being read. */
  let plain = false;
  let afterBlank = false;
  let block = 0;
  for (let i = 0; i < text.length; i++) {
    while (block < blockScalars.length && blockScalars[block]![0] < i) block++;
    if (depth === 0 && blockScalars[block]?.[0] === i) {
      i = blockScalars[block]![1] - 1;
      continue;
    }
    const c = text[i]!;
    const prev = text[i - 1];
    const endsPlain = plain;
    if (plain) {
      if (isBlank(c) || isBreak(c)) {
        afterBlank = true;
        continue;
      }
      const ends = (c === '#' && afterBlank) || /[,?[\]{}]/.test(c) || (c === ':' && blankOrEnd(text[i + 1]));
      afterBlank = false;
      if (!ends) {
        if (c === ':') colons.push(i);
        continue;
      }
      plain = false;
    }
    // In a flow collection, outside a plain scalar, a token starts at every character; outside
    // flow collections only after a blank (else inside a plain scalar: `a[b`).
    const tokenStart = depth > 0 || blankOrEnd(prev);
    if (c === '#' && (tokenStart || /["'\]},[{]/.test(prev!))) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if ((c === '"' || c === "'") && tokenStart) i = quotedEnd(text, i) - 1;
    else if ((c === '[' || c === '{') && tokenStart) deepest = Math.max(deepest, ++depth);
    else if ((c === ']' || c === '}') && depth > 0) depth--;
    else if (depth > 0 && (c === ':' || c === '?') && !endsPlain && !blankOrEnd(text[i + 1]) && !/[,[\]{}]/.test(text[i + 1]!)) spaces.push(i + 1);
    else if (depth === 0 || isBlank(c) || isBreak(c) || /[,:?]/.test(c)) continue;
    else if (c === '&' || c === '*' || c === '!') i = propertyEnd(text, i);
    else {
      if (c === '-' && tokenStart && /[,\]}]/.test(text[i + 1] ?? '')) dashes.push(i);
      plain = true;
    }
  }
  return { deepest, dashes, colons: colons.filter((at) => /[,[\]{}]/.test(text[at + 1] ?? '')), spaces };
}

/**
 * The offset of the last character of the anchor, alias or tag starting at `start`:
 * libyaml's name characters (`yaml_parser_scan_anchor`), tag characters
 * (`yaml_parser_scan_tag`), or up to the `>` closing a verbatim tag `!<...>`.
 */
function propertyEnd(text: string, start: number): number {
  if (text.startsWith('!<', start)) {
    const close = text.indexOf('>', start);
    return close < 0 ? text.length : close;
  }
  const name = text[start] === '!' ? TAG_CHARACTER : ANCHOR_CHARACTER;
  let i = start;
  while (i + 1 < text.length && name.test(text[i + 1]!)) i++;
  return i;
}

/** The offset just past the quoted scalar opening at `start` (or the end of the text). */
export function quotedEnd(text: string, start: number): number {
  const quote = text[start]!;
  for (let i = start + 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') i++;
    else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i++;
      else return i + 1;
    }
  }
  return text.length;
}

/**
 * Puts back, in one walk of the document, the `-` of each plain scalar that starts at one
 * of `dashes` (parsed as `x`) and each character a stand-in took the place of (`standIns`:
 * stand-in to character, a `:` kept in a plain scalar, a U+FEFF read as text). Only plain
 * scalars: a quoted one may hold a stand-in from an escape (`"\uE000"`), which is its own.
 */
export function restoreScalars(doc: Document.Parsed, dashes: ReadonlySet<number>, standIns: ReadonlyMap<string, string>): void {
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop() as { range?: number[]; value?: unknown; items?: unknown[]; key?: unknown; type?: unknown } | null;
    if (node === null || typeof node !== 'object') continue;
    if (typeof node.value === 'string' && node.type === 'PLAIN') {
      let value = node.range !== undefined && dashes.has(node.range[0]!) ? `-${node.value.slice(1)}` : node.value;
      for (const [standIn, character] of standIns) value = value.replaceAll(standIn, character);
      node.value = value;
    }
    if (Array.isArray(node.items)) stack.push(...node.items);
    if ('key' in node) stack.push(node.key, node.value);
  }
}

/**
 * `offsets` (ascending) moved past the text inserted before them: `inserts` are
 * [offset, characters] pairs, ascending; one merge walk along both (a sum per offset was
 * quadratic).
 */
export function shiftOffsets(offsets: readonly number[], inserts: ReadonlyArray<readonly [number, number]>): number[] {
  let next = 0;
  let shift = 0;
  return offsets.map((at) => {
    while (next < inserts.length && inserts[next]![0] <= at) shift += inserts[next++]![1];
    return at + shift;
  });
}

/**
 * `text` with `replaced` characters at each of `offsets` (ascending) replaced by `by`, in
 * one pass (hostile text holds thousands of them).
 */
export function rewriteAt(text: string, offsets: readonly number[], replaced: 0 | 1, by: string): string {
  if (offsets.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const at of offsets) {
    parts.push(text.slice(from, at), by);
    from = at + replaced;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/**
 * A private-use character (U+E000 on) the text does not hold; the `yaml` package reads it
 * as any other in a plain scalar. One pass over the text (a search per candidate was
 * quadratic for a text holding thousands of them).
 */
export function unusedCharacter(text: string): string {
  const used = new Set<number>();
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xe000) used.add(code);
  }
  let code = 0xe000;
  while (used.has(code)) code++;
  return String.fromCharCode(code);
}

/**
 * A `:` that libyaml keeps in a plain scalar right before `[` or `{` in the first document:
 * the scalar ends there and the collection that follows is a second node where libyaml's
 * parser expects `,` (parserc.go: "did not find expected ',' or '}'", or "']'").
 */
export function colonProblem(written: string, colons: readonly number[], end: number): string | undefined {
  const at = colons.find((i) => i < end && /[[{]/.test(written[i + 1] ?? ''));
  if (at === undefined) return undefined;
  return `${where(written, at)}":" right before "${written[at + 1]}" inside { } or [ ] is part of the unquoted text before it for Go's YAML 1.1 decoders, which then fail ("did not find expected ','"); put a space after ":"`;
}

/** "line L, column C: " of offset `at` in `text` (lines end at LF). */
export function where(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  return `line ${line}, column ${at - before.lastIndexOf('\n')}: `;
}
