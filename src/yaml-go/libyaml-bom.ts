/**
 * Characters libyaml's scanner skips at the start of a line because its reader's buffer
 * starts with U+FEFF (gopkg.in/yaml.v2 v2.4.0 and yaml.v3 v3.0.1 alike).
 *
 * scannerc.go `yaml_parser_scan_to_next_token` skips one character at column 0 when
 * `is_bom(parser.buffer, parser.buffer_pos)` holds, to let a BOM start a line; but
 * yamlprivateh.go `is_bom(b, i)` reads `b[0..2]`, the start of the buffer, not `b[i..]`.
 * The buffer starts where the scanner stood when the reader last decoded more (readerc.go
 * `yaml_parser_update_buffer` moves the unread characters to its start, then decodes the
 * next 512-byte chunk): on a second U+FEFF right after the leading BOM (the reader drops only
 * that one, `yaml_parser_determine_encoding`), or on a U+FEFF where the scanner asks for
 * characters past the chunk decoded so far. From there to the next chunk, whatever stands
 * at column 0 where a token is looked for is skipped as if it were a space: the first
 * character of a key, a `#`, a line break.
 */
import { isMap, isNode, isScalar, isSeq, parseDocument, visit, type Document, type Node } from 'yaml';
import { ANCHOR_CHARACTER, isBlank, isBreak, lfBreaks, lineEnd } from './libyaml-chars.js';
import { BOM_BYTES, READ_CHUNK_BYTES } from './libyaml-lookahead.js';
import type { Refusal } from './unmarshal-context.js';

/** A scalar's source in the text: [from, to) offsets, and its style. */
export interface ScalarSpan {
  from: number;
  to: number;
  style: 'plain' | 'quoted' | 'block';
}

/**
 * The source spans of the scalars of the first document of `text`, as the `yaml` package
 * reads them unadjusted (where its reading and libyaml's part, the scalars stand alike),
 * ascending by `from` (document order; the lookups of {@link spanFinder} rely on it).
 */
export function scalarSpans(text: string): ScalarSpan[] {
  const spans: ScalarSpan[] = [];
  visit(parseDocument(lfBreaks(text), { uniqueKeys: false }), {
    Scalar(_key, node) {
      // A null with no text (`key:`) is no scalar libyaml scans.
      if (!node.range || node.range[0] === node.range[1]) return;
      const style = node.type === 'PLAIN' ? 'plain' : node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE' ? 'quoted' : 'block';
      spans.push({ from: node.range[0], to: node.range[1], style });
    },
  });
  return spans.sort((a, b) => a.from - b.from);
}

/**
 * The first of `spans` (ascending by `from`) with `from` ≤ `most` and `to` ≥ `least`, as
 * `spans.find` gives it, in O(log n): a binary search on the furthest `to` up to each span.
 */
function spanFinder(spans: readonly ScalarSpan[]): (most: number, least: number) => ScalarSpan | undefined {
  const reach: number[] = [];
  for (const span of spans) reach.push(Math.max(reach.at(-1) ?? -Infinity, span.to));
  return (most, least) => {
    // The first span reaching `least`: none before it does, and none after it starts earlier.
    let low = 0;
    let high = spans.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (reach[mid]! >= least) high = mid;
      else low = mid + 1;
    }
    const span = spans[low];
    return span !== undefined && span.from <= most ? span : undefined;
  };
}

/** What the scanner's reach at an offset depends on: the text, its scalars, where each line's comment starts. */
interface ReadingAt {
  text: string;
  scalarAt: (at: number) => ScalarSpan | undefined;
  /** Whether a plain scalar ends right before `end`. */
  plainEndsAt: (end: number) => boolean;
  lines: readonly number[];
  comments: readonly number[];
}

/** {@link ReadingAt} for `text`, in one pass over it ({@link commentStarts}). */
function readingAt(text: string, scalars: readonly ScalarSpan[]): ReadingAt {
  const find = spanFinder(scalars);
  const lines = lineStarts(text);
  const plainEndsAt = (end: number) => {
    const span = find(end - 1, end);
    return span?.style === 'plain' && span.to === end;
  };
  return { text, scalarAt: (at) => find(at, at), plainEndsAt, lines, comments: commentStarts(text, lines, (at) => find(at, at + 1) !== undefined) };
}

/**
 * Per line of `text` (`lines`: their starts), the offset of its first `#` that follows a blank
 * or starts the line, outside scalars (`inScalar`), where its comment starts; else Infinity.
 */
function commentStarts(text: string, lines: readonly number[], inScalar: (at: number) => boolean): number[] {
  return lines.map((from, line) => {
    const to = lines[line + 1] ?? text.length;
    for (let i = from; i < to; i++) if (text[i] === '#' && (i === from || isBlank(text[i - 1])) && !inScalar(i)) return i;
    return Infinity;
  });
}

/**
 * Where each of the reader's 512-byte chunks but the last ends in `pastBom` (the text past a
 * leading BOM of `bomBytes`): the offset of the first character it does not hold whole.
 */
function chunkEnds(pastBom: string, bomBytes: number): number[] {
  const ends: number[] = [];
  let bytes = bomBytes;
  for (let i = 0; i < pastBom.length; ) {
    const code = pastBom.codePointAt(i)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + width > (ends.length + 1) * READ_CHUNK_BYTES) ends.push(i);
    bytes += width;
    i += code >= 0x10000 ? 2 : 1;
  }
  return ends;
}

/**
 * Where the reader decodes the chunk starting at `end`: where the scanner first asks for
 * more characters than it holds, among the 3 before `end` ({@link asked}), else at `end`.
 */
function refillAt(reading: ReadingAt, end: number): number {
  for (let at = Math.max(0, end - 3); at < end; at++) if (at + asked(reading, at) > end) return at;
  return end;
}

/**
 * How many characters the scanner asks the reader for as it reaches `at` (scannerc.go):
 * 4 where a token or a scalar's run of non-blanks starts (`yaml_parser_fetch_next_token`,
 * `yaml_parser_scan_plain_scalar`, `yaml_parser_scan_flow_scalar`) and at a `#` after a
 * plain scalar's blanks on its line, 2 past a scalar's
 * character and at a line break, 1 past a blank, a comment's or a block scalar's character
 * or a name's (anchor, tag; the character ending an anchor's or alias's name starts a token,
 * 4: `*a]`); none between CR and LF, skipped as one break.
 */
function asked(reading: ReadingAt, at: number): number {
  const { text } = reading;
  const c = text[at];
  if (c === '\n' && text[at - 1] === '\r') return 0;
  if (isBreak(c)) return 2;
  const prev = text[at - 1];
  const scalar = reading.scalarAt(at);
  if (scalar !== undefined && scalar.style !== 'block') {
    const content = scalar.style === 'quoted' ? scalar.from + 1 : scalar.from;
    if (at <= content || (!isBlank(c) && (at === scalar.to || isBlank(prev) || isBreak(prev)))) return 4;
    // Past a quoted scalar's closing quote, as past any token.
    if (at === scalar.to && scalar.style === 'quoted') return 1;
    return isBlank(prev) || isBreak(prev) ? 1 : 2;
  }
  if (scalar !== undefined) return at === scalar.from ? 4 : 1;
  // A plain scalar's scan reads on over blanks to a `#` and asks for 4 there before it stops.
  if (c === '#' && afterPlainScalar(reading, at)) return 4;
  // In a comment: past the start of its line's comment (`c` is no break here).
  if (isBlank(c) || reading.comments[lastAtMost(reading.lines, at)]! <= at) return 1;
  // The word before `at` (within 1024 characters), walked back: `/[^\s]*$/` backtracks quadratically.
  let word = at;
  while (word > Math.max(0, at - 1024) && !/\s/.test(text[word - 1]!)) word--;
  if (word === at || !'&*!'.includes(text[word]!)) return 4;
  // An anchor's or alias's name ends at its first other character, where a token starts (`*a]`).
  if (text[word] === '!') return 1;
  for (let i = word + 1; i <= at; i++) if (!ANCHOR_CHARACTER.test(text[i]!)) return 4;
  return 1;
}

/** Whether only blanks, at least one, stand between a plain scalar's end and `at` (scannerc.go `yaml_parser_scan_plain_scalar`). */
function afterPlainScalar(reading: ReadingAt, at: number): boolean {
  let end = at;
  while (end > 0 && isBlank(reading.text[end - 1])) end--;
  return end < at && reading.plainEndsAt(end);
}

/**
 * The spans of `pastBom` read with U+FEFF at the start of the buffer, [from, to): past a
 * second U+FEFF at the start, to the first refill; past a U+FEFF where the reader refills, to
 * the next refill.
 */
function bomBufferSpans(pastBom: string, leadingBom: boolean, scalars: readonly ScalarSpan[]): Array<[number, number]> {
  const ends = chunkEnds(pastBom, leadingBom ? BOM_BYTES : 0);
  const reading = readingAt(pastBom, scalars);
  const refills = ends.map((end) => refillAt(reading, end));
  const spans: Array<[number, number]> = [];
  if (leadingBom && pastBom.startsWith('\ufeff')) spans.push([0, refills[0] ?? pastBom.length]);
  refills.forEach((at, k) => {
    if (pastBom[at] !== '\ufeff') return;
    // Asked for at a line's start, before the check for a BOM there: that U+FEFF is skipped too.
    const skipped = at === ends[k] && at > 0 && isBreak(pastBom[at - 1]);
    spans.push([skipped ? at : at + 1, refills[k + 1] ?? pastBom.length]);
  });
  return spans;
}

/**
 * Whether the reader's buffer may start with U+FEFF somewhere in `pastBom` (a cheap test
 * before {@link bomSkips}, which finds none when this is false): a second U+FEFF right after
 * the BOM, or one where a refill may happen, within the 3 characters before a chunk's end or
 * at it ({@link refillAt}), the only places {@link bomBufferSpans} starts a span.
 */
export function bomMayStartBuffer(pastBom: string, leadingBom: boolean): boolean {
  if (!pastBom.includes('\ufeff')) return false;
  if (leadingBom && pastBom.startsWith('\ufeff')) return true;
  return chunkEnds(pastBom, leadingBom ? BOM_BYTES : 0).some((end) => pastBom.slice(Math.max(0, end - 3), end + 1).includes('\ufeff'));
}

/**
 * The column-0 offsets of `pastBom` (the text past a leading BOM, when `leadingBom`) whose
 * character the scanner skips and which is no space (skipping a space changes nothing),
 * ascending; `scalars`: the text's, as the `yaml` package reads it. A second U+FEFF right
 * after the BOM is left out: read as a space ({@link secondBomAsSpace}).
 */
export function bomSkips(pastBom: string, leadingBom: boolean, scalars: readonly ScalarSpan[]): number[] {
  const skips = new Set<number>();
  for (const [from, to] of bomBufferSpans(pastBom, leadingBom, scalars)) {
    for (let at = Math.max(from, 1); at < to; at++) {
      const lineStart = isBreak(pastBom[at - 1]) && !(pastBom[at - 1] === '\r' && pastBom[at] === '\n');
      if (lineStart && pastBom[at] !== ' ') skips.add(at);
    }
  }
  return [...skips].sort((a, b) => a - b);
}

/** The text past a leading BOM with a second U+FEFF there read as a space: libyaml skips it at column 0 as it skips one. */
export function secondBomAsSpace(pastBom: string, leadingBom: boolean): string {
  return leadingBom && pastBom.startsWith('\ufeff') ? ` ${pastBom.slice(1)}` : pastBom;
}

/**
 * What the skips at `skips` (from {@link bomSkips}, offsets of `written`, the text past its
 * BOM) do to the first document, `doc` as parsed without them from `text` (`end`: where the
 * marker ending it stands there). A skip inside a quoted or block scalar is none (the
 * scalar's scanner reads it). A skipped character is otherwise read as a space, which the
 * `yaml` package then reads as libyaml reads the skip: `read`, the offsets to rewrite so
 * (a skipped line break joins two lines).
 *
 * But libyaml ended the value before the line at its column 0, before the skip: what then
 * stands right of the root block mapping's column after a complete value is a node where
 * its parser expects a key, where the `yaml` package would go on with the value. Go's text is
 * then known (parserc.go `yaml_parser_parse_block_mapping_key`, "did not find expected key";
 * decode.go `fail` prints libyaml's 0-based lines: yaml.v2 the problem's, yaml.v3 the
 * mapping's when not 0).
 */
export function bomSkipOutcome(
  skips: readonly number[],
  written: string,
  parsed: { doc: Document.Parsed; text: string; end: number | undefined; scalars: readonly ScalarSpan[] },
): { read: number[] } | { refusal: Refusal } {
  const { doc, text, end, scalars } = parsed;
  const writtenLines = lineStarts(written);
  const textLines = lineStarts(text);
  // Each skip starts a line, which starts at the same line in the parsed text (flow lines may be padded).
  const parsedAt = (at: number) => textLines[lastAtMost(writtenLines, at)] ?? text.length;
  const quoted = spanFinder(scalars.filter((s) => s.style !== 'plain'));
  const read = skips.filter((at) => (end === undefined || parsedAt(at) <= end) && quoted(at - 1, at + 1) === undefined);
  const root = doc.contents;
  if (!isMap(root) || root.flow || root.range === null || root.range === undefined) return { read };
  const mappingLine = lastAtMost(textLines, root.range[0]);
  // The keyed pairs, whose keys stand in document order.
  const keyed = root.items.filter((pair) => isNode(pair.key));
  const keyStarts = keyed.map((pair) => (pair.key as Node).range![0]);
  const mappingStart = textLines[mappingLine]!;
  // The mapping's column; one more when its first key's first character is skipped.
  const column = root.range[0] - mappingStart + (read.some((at) => parsedAt(at) === root.range![0]) ? 1 : 0);
  for (const at of read) {
    const token = tokenColumn(written, at);
    const from = parsedAt(at);
    if (token === undefined || from <= mappingStart || token <= column) continue;
    const last = lastAtMost(keyStarts, from - 1);
    const before = keyStarts[last]! < from ? keyed[last] : undefined;
    const value = before?.value;
    if (!isNode(value) || value.range![1] > from || (isScalar(value) && value.type === 'PLAIN' && value.source === '')) continue;
    // A block collection as the value takes what stands at or right of its column.
    if ((isMap(value) || isSeq(value)) && !value.flow && value.range![0] - textLines[lastAtMost(textLines, value.range![0])]! <= token) continue;
    // A plain scalar reads on over blank lines: the next line's first character is the one skipped.
    const plainBefore = scalars.filter((scalar) => scalar.to <= at).at(-1)?.style === 'plain';
    const line = lastAtMost(writtenLines, at) + (isBreak(written[at]) && plainBefore ? 1 : 0);
    const message = 'did not find expected key';
    const problem = `line ${line + 1}: a U+FEFF at the start of Go's read buffer makes libyaml skip the first character of the line (yamlprivateh.go is_bom), and what follows then stands right of the mapping's other keys`;
    // After a skipped `#`, a comment's words are a plain scalar, which may run on to a scanner error.
    if (written[at] === '#') return { refusal: { by: 'go', field: '', problem } };
    const where = (n: number) => (n === 0 ? '' : `line ${n}: `);
    return {
      refusal: {
        by: 'go',
        field: '',
        problem: `${problem} (${message})`,
        go: { 'yaml.v2': `yaml: ${where(line)}${message}`, 'yaml.v3': `yaml: ${where(mappingLine !== 0 ? mappingLine : line)}${message}` },
      },
    };
  }
  return { read };
}

/** Where each line of `text` starts, lines ended by libyaml's breaks (CR LF as one), as libyaml-chars.ts `lineOf` counts them. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (!isBreak(text[i])) continue;
    if (text[i] === '\r' && text[i + 1] === '\n') i++;
    starts.push(i + 1);
  }
  return starts;
}

/** The index of the last of `starts` (ascending) at or before `at`, 0 when none: with line starts, the 0-based line of offset `at`. */
function lastAtMost(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= at) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * The column of the token libyaml's scanner finds after skipping the character at `at`
 * (column 0), or `undefined` when none follows on that line: blanks, a comment, CR before LF.
 * A skipped line break takes the next line on at column 1.
 */
function tokenColumn(written: string, at: number): number | undefined {
  const c = written[at];
  if (c === '\r' && written[at + 1] === '\n') return undefined;
  const rest = isBreak(c) ? written.slice(at + 1, lineEnd(written, at + 1)) : written.slice(at + 1, lineEnd(written, at));
  const blanks = /^[ \t]*/.exec(rest)![0].length;
  if (blanks === rest.length || rest[blanks] === '#') return undefined;
  return 1 + blanks;
}
