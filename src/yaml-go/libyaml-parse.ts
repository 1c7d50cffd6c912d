/**
 * Parses YAML text with the `yaml` package (a YAML 1.2 parser) so that the result is what
 * libyaml, the YAML 1.1 scanner and parser of Go's `gopkg.in/yaml.v2` and `yaml.v3`
 * (scannerc.go, parserc.go), reads. Where the two disagree on the text, the text is
 * adjusted before parsing, or the parse after it, by libyaml's rules:
 *
 * - line breaks: a lone CR and NEL (U+0085) are line breaks for libyaml (both become LF
 *   in its scalars), text for the `yaml` package: read as LF (same length). LS and PS
 *   (U+2028, U+2029) are line breaks too, which libyaml keeps in a scalar where it folds
 *   others: read only inside a quoted scalar between two other characters, where both
 *   keep them; anywhere else they are refused (this webhook does not read them there);
 * - a tag runs over every URI character (`,` `[` `]` `%` included, even in flow
 *   context) and must then be followed by a space, tab or line break ("did not find
 *   expected whitespace or line break"): `!!str,` is one tag, `{a: !}` an error;
 * - anchor and alias names are ASCII letters, digits, `-` and `_`, ended by `:` or `?`
 *   too (`&a: x` is the anchor `a` on an empty key), which the `yaml` package reads on
 *   through: a space is put there;
 * - `-` directly before `,` `]` or `}` in a flow collection is a plain scalar `-`;
 * - inside a flow collection or a quoted scalar, indentation does not matter: a
 *   continuation line less indented than the block around it is indented for the `yaml`
 *   package (where both drop the leading blanks; columns of such lines shift);
 * - `#` directly after a quoted scalar or a flow indicator starts a comment;
 * - the first document of a stream cannot open with `...` ("did not find expected node
 *   content"); after a document, extra `...` are skipped;
 * - properties right before the `:` of a block mapping's first pair with an empty key
 *   (`&a : x`) are the key's, not the mapping's (libyaml-props.ts);
 * - properties before an alias (`&a *a`) make an empty scalar: as the whole document,
 *   libyaml's document ends there and Go reads it as empty;
 * - a U+FEFF at a line's start before the first document is text, not a byte order mark;
 * - a block scalar's text is read as written: no flow rewrite above reaches into it;
 * - a block scalar's trailing line breaks are only those libyaml read: one whose last line
 *   ends the text without a break has no final `\n` (libyaml-block.ts).
 */
import { Composer, Parser, isAlias, type CST, type Document, type LineCounter } from 'yaml';
import { blockScalarSpans, dropUnreadBreaks, headersAtKeyIndent } from './libyaml-block.js';
import { givePropertiesToEmptyKeys } from './libyaml-props.js';
import { ANCHOR_CHARACTER, blankOrEnd, isBlank, isBreak, lfBreaks, lineEnd, lineOf } from './libyaml-chars.js';
import { firstDocumentTagDirectives, respellTags, retag, type FirstDocumentTags } from './libyaml-tags.js';
import { colonProblem, quotedEnd, restoreScalars, rewriteAt, scanFlow, shiftOffsets, unusedCharacter, where } from './libyaml-flow.js';

/** The first document as libyaml reads it, or why libyaml refuses the text. */
export type LibyamlParse =
  | {
      /** The text as parsed: offsets, lines and columns are those of the input (line breaks kept, flow lines at most padded). */
      text: string;
      doc: Document.Parsed | undefined;
      /** Another document with content follows the first. */
      more: boolean;
      /** Where the marker ending the first document (`---` or `...`) stands in `text`; `undefined`: the text ends it. */
      end: number | undefined;
    }
  | {
      /**
       * The first document ends without a marker at this 0-based line (`implicitEnd`): at its
       * start, or `rest` characters before its end, past a root flow collection. Go reads only what stands before.
       */
      dedentLine: number;
      rest?: number;
    }
  | {
      problem: string;
      /** As above, when the parse found it. */
      end?: number;
      /** Go reads the text; this webhook does not (an LS or PS it cannot read as libyaml does). */
      unread?: true;
    };

/** libyaml's anchor and alias names (scannerc.go `yaml_parser_scan_anchor`). */
const ANCHOR_NAME = /^[0-9A-Za-z_-]+$/;
/**
 * Padded continuation lines at most, and the characters their parses read in all: each
 * pad parses the whole text again, so a long text gets fewer (64 up to 2 KiB, 4 at 32 KiB,
 * the first one whatever the length): a hostile text of unclosed quotes or flow lines at column 0 costs a few
 * parses, not 64. A real conf.yml has none or a handful of such lines.
 */
const MAX_PADDED_LINES = 64;
const MAX_REPARSED_CHARS = 128 * 1024;

/**
 * The first document of `written` as libyaml reads it, composed without looking further
 * than the start of the next (Go's `Unmarshal` reads only the first document).
 * Duplicate keys are not checked here: the `yaml` package's check is quadratic, and the
 * decoders check only the mappings they decode.
 */
export function parseLikeLibyaml(written: string, newLines: () => LineCounter): LibyamlParse {
  let text = lfBreaks(written);
  const flow = flowOutsideBlockScalars(text);
  let { dashes } = flow;
  text = rewriteAt(text, dashes, 1, 'x');
  // A character of no other use in the text stands for each `:` libyaml keeps in a plain scalar.
  const colon = unusedCharacter(text);
  text = rewriteAt(text, flow.colons, 1, colon);
  // Another for each U+FEFF the `yaml` package would take for a byte order mark (`prologueBoms`).
  const bom = unusedCharacter(`${text}${colon}`);
  let boms: number[] = [];
  const directives = firstDocumentTagDirectives(written);
  if ('problem' in directives) return directives;
  const tags: FirstDocumentTags = { at: [], entries: [] };
  let padded = 0;
  let spaced = false;
  let reparsedChars = 0;
  for (;;) {
    const lines = newLines();
    const parsed = firstDocument(text, lines);
    const end = firstDocumentEnd(parsed.tokens);
    const rewritten = respellTags(tagTokens(parsed.tokens, end), text, directives, tags);
    const moreBoms = prologueBoms(parsed.tokens);
    if (rewritten !== text || moreBoms.length > 0) {
      text = rewriteAt(rewritten, moreBoms, 1, bom);
      boms = [...boms, ...moreBoms].sort((a, b) => a - b);
      continue;
    }
    // Names are ended on every parse: a repad or respelt tag can bring more into the CST.
    const ends = nameEnds(parsed.tokens, text, end);
    // One name libyaml ends can hide the next from the `yaml` package: all are found in one parse, not one per parse.
    const hidden = ends.length > 0 ? spacedNameEnds(text).filter((at) => end === undefined || at < end) : [];
    const spaces = [...new Set([...(spaced ? [] : flow.spaces.filter((at) => end === undefined || at < end)), ...ends, ...hidden])].sort((a, b) => a - b);
    spaced = true;
    if (spaces.length > 0) {
      // Offsets within the first document (before `end`): the length of what follows is kept.
      text = rewriteAt(text, spaces, 0, ' ');
      dashes = shiftOffsets(
        dashes,
        spaces.map((at) => [at, 1] as const),
      );
      tags.at = shiftOffsets(
        tags.at,
        spaces.map((at) => [at, 1] as const),
      );
      continue;
    }
    const { doc } = parsed;
    const repaddable = padded < MAX_PADDED_LINES && (padded === 0 || reparsedChars + text.length <= MAX_REPARSED_CHARS);
    const repadded = doc !== undefined && repaddable ? (repad(doc, text, parsed.tokens) ?? padHeaders(text, parsed.tokens, end)) : undefined;
    if (repadded !== undefined) {
      text = repadded.text;
      // The dashes after each indented line start move with it.
      dashes = shiftOffsets(dashes, repadded.inserts);
      tags.at = shiftOffsets(tags.at, repadded.inserts);
      padded++;
      reparsedChars += text.length;
      continue;
    }
    const implicit = implicitEnd(parsed.tokens, text, end);
    if (implicit !== undefined) return { dedentLine: implicit.line, ...(implicit.rest !== undefined ? { rest: implicit.rest } : {}) };
    // Checked on the text as finally parsed: the `yaml` package's recovery from an error
    // repadding corrects can leave tokens out (a quoted scalar after a flow continuation line).
    // Only the first document: Go reads no further (libyaml-lookahead.ts says what it scans).
    const writtenEnd = end === undefined ? Infinity : end - (text.length - written.length);
    const tagged = doc === undefined ? undefined : retag(doc, tagTokens(parsed.tokens, end), tags, text);
    if (tagged !== undefined) return { problem: tagged, ...(end !== undefined ? { end } : {}) };
    // The `yaml` package reads an LS or PS as text, so what it makes of the text around one
    // (an anchor name running on through it) is no reading of libyaml's: checked first.
    const separator = separatorProblem(text, parsed.tokens, lines, end);
    if (separator !== undefined) return { ...separator, ...(end !== undefined ? { end } : {}) };
    const problem =
      colonProblem(written, flow.colons, writtenEnd) ??
      staleKeyProblem(parsed.tokens, text, end) ??
      emptyKeyProblem(parsed.tokens, text, end) ??
      namesProblem(parsed.tokens, lines, end) ??
      leadingDocumentEnd(parsed.tokens);
    if (problem !== undefined) return { problem, ...(end !== undefined ? { end } : {}) };
    if (flow.colons.length > 0) text = text.replaceAll(colon, ':');
    text = rewriteAt(text, boms, 1, '\uFEFF');
    if (doc === undefined) return { text, doc, more: parsed.more, end };
    doc.errors = doc.errors.filter((e) => !commentAfterToken(e, text) && !(e.code === 'ALIAS_PROPS' && rootAlias(doc, parsed.tokens)));
    if (dashes.length > 0 || flow.colons.length > 0 || boms.length > 0) {
      restoreScalars(
        doc,
        new Set(dashes),
        new Map([
          [colon, ':'],
          [bom, '\uFEFF'],
        ]),
      );
    }
    dropUnreadBreaks(doc, sourceTokens(parsed.tokens));
    return { text, doc, more: parsed.more, end };
  }
}

/**
 * `scanFlow` of `text` (line breaks as LF) past its block scalars, whose text libyaml reads
 * as it stands (a `[-]` there opens no flow collection, a `'` starts no quoted scalar). They
 * are found by a parse of their own, only for a text with a `[` or `{` and a line ending as
 * a block header.
 */
export function flowOutsideBlockScalars(text: string): ReturnType<typeof scanFlow> {
  const headed = /[[{]/.test(text) && /[|>][0-9+-]*[ \t]*(?:#.*)?\r?$/m.test(text);
  return scanFlow(text, headed ? libyamlBlockScalars(text) : []);
}

/**
 * The block scalars of `text` (`blockScalarSpans`, offsets of `text`) with anchor and alias
 * names ended where libyaml ends them (`nameEnds`): to the `yaml` package `*a: 'x'` then
 * `*a: |` is an alias `a:` whose quoted scalar runs on, so that it takes the `|` for a
 * block scalar holding the lines after it. At most three parses.
 */
function libyamlBlockScalars(text: string): Array<[number, number]> {
  const tokens = [...new Parser().parse(text)] as unknown as Token[];
  const found = nameEnds(tokens, text);
  const ends = [...new Set([...found, ...(found.length > 0 ? spacedNameEnds(text) : [])])].sort((a, b) => a - b);
  if (ends.length === 0) return blockScalarSpans(tokens);
  // The space put at ends[k] stands at ends[k] + k of the spaced text; spans and spaces ascend.
  let before = 0;
  const back = (at: number) => {
    while (before < ends.length && ends[before]! + before < at) before++;
    return at - before;
  };
  return blockScalarSpans(new Parser().parse(rewriteAt(text, ends, 0, ' '))).map(([from, to]) => [back(from), back(to)]);
}

/**
 * Each U+FEFF past the text's start that the `yaml` package takes for a byte order mark,
 * at a line's start before the first document (YAML 1.2 allows one before each document):
 * libyaml's reader drops only the stream's first (readerc.go `yaml_parser_determine_encoding`),
 * so its scanner reads one there as text, a plain scalar's first character.
 */
function prologueBoms(tokens: readonly Token[]): number[] {
  const first = tokens.findIndex((t) => t.type === 'document');
  return tokens
    .slice(0, first < 0 ? tokens.length : first)
    .filter((t) => t.type === 'byte-order-mark' && t.offset! > 0)
    .map((t) => t.offset!);
}

/** The CST tokens the parse went through, as plain objects. */
type Token = { type?: string; offset?: number; source?: string; [key: string]: unknown };

function firstDocument(text: string, lines: LineCounter): { doc: Document.Parsed | undefined; more: boolean; tokens: Token[] } {
  // The parser builds one error per bad token; without stack traces that is a third of the
  // time for hostile text, and only the first error is ever shown.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const tokens: Token[] = [];
  function* tap(source: Iterable<CST.Token>) {
    for (const token of source) {
      tokens.push(token as unknown as Token);
      if (token.type === 'document') givePropertiesToEmptyKeys(token as unknown as Token);
      yield token;
    }
  }
  try {
    const composer = new Composer({ schema: 'failsafe', merge: false, uniqueKeys: false });
    let first: Document.Parsed | undefined;
    for (const doc of composer.compose(tap(new Parser(lines.addNewLine).parse(text)), false, text.length)) {
      if (first === undefined) first = doc;
      else return { doc: first, more: doc.contents !== null && !isEmpty(doc.contents), tokens };
    }
    return { doc: first, more: false, tokens };
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

function isEmpty(node: unknown): boolean {
  const value = (node as { value?: unknown; type?: string; tag?: string }) ?? {};
  return value.tag === undefined && value.type === 'PLAIN' && ['', '~', 'null', 'Null', 'NULL'].includes(String(value.value));
}

/** {@link sourceTokens} of each parse's tokens: a parse's checks walk its CST a dozen times, once is enough (nothing changes it after the parse). */
const walked = new WeakMap<readonly Token[], Token[]>();

/** Every source token (tags, anchors, aliases, indicators) of the CST, walked without recursion. */
function sourceTokens(tokens: readonly Token[]): Token[] {
  let out = walked.get(tokens);
  if (out === undefined) walked.set(tokens, (out = walkSourceTokens(tokens)));
  return out;
}

function walkSourceTokens(tokens: readonly Token[]): Token[] {
  const out: Token[] = [];
  const stack: unknown[] = [...tokens];
  while (stack.length > 0) {
    const item = stack.pop();
    if (Array.isArray(item)) stack.push(...item);
    else if (item !== null && typeof item === 'object') {
      const token = item as Token;
      if (typeof token.source === 'string' && typeof token.offset === 'number') out.push(token);
      for (const key of ['start', 'items', 'key', 'sep', 'value', 'end', 'props']) {
        if (key in token && token[key] !== undefined && typeof token[key] === 'object') stack.push(token[key]);
      }
    }
  }
  return out;
}

/** The first document's tag tokens (of the CST walk, a token may come twice). */
function tagTokens(tokens: readonly Token[], end = Infinity): Token[] {
  return sourceTokens(tokens).filter((t) => t.type === 'tag' && t.offset! < end);
}

/** An anchor or alias name libyaml does not take (only ASCII letters, digits, `-` and `_`). */
function namesProblem(tokens: readonly Token[], lines: LineCounter, end = Infinity): string | undefined {
  for (const token of sourceTokens(tokens)) {
    if ((token.type !== 'anchor' && token.type !== 'alias') || token.offset! >= end) continue;
    const name = token.source!.slice(1);
    if (!ANCHOR_NAME.test(name)) {
      const { line, col } = lines.linePos(token.offset!);
      return `line ${line}, column ${col}: anchor or alias name ${JSON.stringify(name)} is not one Go's decoders read (only ASCII letters, digits, - and _)`;
    }
  }
  return undefined;
}

/**
 * Where libyaml ends an anchor or alias name that the `yaml` package reads on through `:`
 * or `?` (YAML 1.2 names take both): scannerc.go `yaml_parser_scan_anchor` stops at the
 * first character that is not a letter, digit, `-` or `_`, and takes a `:` or `?` after
 * the name as the next token's. A space put there makes both end the name there; not
 * before `?` and a blank, a key indicator libyaml refuses after a property ("mapping keys
 * are not allowed in this context") and the `yaml` package would take: the name stays
 * whole, and refused.
 */
function nameEnds(tokens: readonly Token[], text: string, end = Infinity): number[] {
  const out: number[] = [];
  for (const token of sourceTokens(tokens)) {
    if ((token.type !== 'anchor' && token.type !== 'alias') || token.offset! >= end) continue;
    const name = token.source!.slice(1);
    let length = 0;
    while (length < name.length && ANCHOR_CHARACTER.test(name[length]!)) length++;
    const at = token.offset! + 1 + length;
    if (length > 0 && (name[length] === ':' || (name[length] === '?' && !blankOrEnd(text[at + 1])))) out.push(at);
  }
  return out;
}

/**
 * The name ends of `nameEnds` that one parse finds, ascending: each place libyaml could end
 * a name before `:` or `?` gets a space, and those where the `yaml` package then ends an
 * anchor or alias are kept (a name it reads on through hides the text after it, and with it
 * the next name: one parse per name was quadratic). Offsets of `text`.
 */
function spacedNameEnds(text: string): number[] {
  const candidates: number[] = [];
  for (const match of text.matchAll(/[&*][0-9A-Za-z_-]+(?=[:?])/g)) {
    const at = match.index + match[0].length;
    if (text[at] === ':' || !blankOrEnd(text[at + 1])) candidates.push(at);
  }
  if (candidates.length === 0) return [];
  // The space put at candidates[k] stands at candidates[k] + k of the spaced text.
  const tokens = [...new Parser().parse(rewriteAt(text, candidates, 0, ' '))] as unknown as Token[];
  const named = new Set(sourceTokens(tokens).flatMap((t) => (t.type === 'anchor' || t.type === 'alias' ? [t.offset! + t.source!.length] : [])));
  return candidates.filter((at, k) => named.has(at + k));
}

/**
 * Where the first document ends without a marker, when content follows that libyaml leaves
 * to a next document (parserc.go `yaml_parser_parse_document_end`, implicit; Go's
 * `Unmarshal` reads only the first): the 0-based line (lines as libyaml-chars.ts
 * `lineStartOffset` counts them) and, past a root flow collection, the characters after its
 * closing `]` or `}` to the end of that line (`rest`); without `rest` the document ends at
 * the line's start:
 * - a root block mapping or sequence indented (column > 0) ends at the first line whose
 *   content starts at a lower column (a BLOCK-END ends the root node);
 * - a root flow collection ends at its closing bracket, whatever follows (a `{}` key of a
 *   block mapping makes the root a block mapping).
 * A tab in that line's indentation is refused there by the scan that follows (Go's scan of
 * a plain scalar before it fails too, with "found a tab character that violates indentation").
 */
function implicitEnd(tokens: readonly Token[], text: string, end = text.length): { line: number; rest?: number } | undefined {
  const doc = tokens.find((t) => t.type === 'document');
  const root = doc?.['value'] as Token | undefined;
  if (root?.type === 'flow-collection') {
    const close = (root['end'] as Token[] | undefined)?.find((t) => t.type === 'flow-map-end' || t.type === 'flow-seq-end');
    if (close === undefined || close.offset! >= end) return undefined;
    const after = close.offset! + 1;
    if (/^(?:[ \t\r\n]|#[^\r\n]*)*$/.test(text.slice(after, end))) return undefined;
    return { line: lineOf(text, after), rest: lineEnd(text, after) - after };
  }
  if (root === undefined || (root.type !== 'block-map' && root.type !== 'block-seq') || !((root['indent'] as number) > 0)) return undefined;
  // The first content after the root: in the document's end, or a token the `yaml` package could not place (a `:`).
  const content = (t: Token) => !['space', 'newline', 'comment'].includes(t.type ?? '');
  const next = tokens.slice(tokens.indexOf(doc!) + 1).find(content);
  const stray = (doc!['end'] as Token[] | undefined)?.find(content) ?? (next?.type === 'error' ? next : undefined);
  // An LS or PS there is a line break to libyaml, content to the `yaml` package: libyaml's next token lies past it (refused, `separatorProblem`).
  if (stray === undefined || stray.offset! >= end || isBreak(text[stray.offset!])) return undefined;
  const lineStart = text.lastIndexOf('\n', stray.offset! - 1) + 1;
  if (stray.offset! - lineStart >= (root['indent'] as number)) return undefined;
  return { line: lineOf(text, lineStart) };
}

/** The offset of the marker (`...` or the next `---`) ending the first document; `undefined` when the text ends it. */
function firstDocumentEnd(tokens: readonly Token[]): number | undefined {
  const first = tokens.findIndex((t) => t.type === 'document');
  if (first < 0) return undefined;
  for (const token of tokens.slice(first + 1)) {
    if (token.type === 'doc-end') return token.offset;
    const start = token.type === 'document' ? (token['start'] as Token[] | undefined)?.find((t) => t.type === 'doc-start') : undefined;
    if (start !== undefined) return start.offset;
  }
  return undefined;
}

/** libyaml's parser refuses `...` where the first document should begin (parserc.go `yaml_parser_parse_document_start`, implicit). */
function leadingDocumentEnd(tokens: readonly Token[]): string | undefined {
  const first = tokens.findIndex((t) => t.type === 'document');
  if (first < 0) return undefined;
  const doc = tokens[first]!;
  const opened = (doc['start'] as Token[] | undefined)?.some((t) => t.type === 'doc-start');
  if (opened || doc['value'] !== undefined || tokens[first + 1]?.type !== 'doc-end') return undefined;
  return 'the document end marker "..." stands before any document (Go\'s decoders: "did not find expected node content")';
}

/**
 * An LS or PS (U+2028, U+2029) the `yaml` package reads differently from libyaml: any
 * but one inside a quoted scalar with an ordinary character on either side (`unread`:
 * Go reads it, this webhook does not). In a quoted implicit key, Go refuses it: the
 * key then spans two lines, no simple key (scannerc.go `yaml_parser_stale_simple_keys`).
 */
function separatorProblem(text: string, tokens: readonly Token[], lines: LineCounter, end = text.length): { problem: string; unread?: true } | undefined {
  const keys = quotedImplicitKeys(tokens);
  // Quoted scalars do not overlap: ascending, they are walked once along the matches (a search per match was quadratic).
  const quoted = sourceTokens(tokens)
    .filter((t) => /quoted-scalar$/.test(t.type ?? ''))
    .sort((a, b) => a.offset! - b.offset!);
  let next = 0;
  for (const match of text.matchAll(/[\u2028\u2029]/g)) {
    const at = match.index;
    if (at >= end) break;
    while (next < quoted.length && quoted[next]!.offset! + quoted[next]!.source!.length <= at) next++;
    const t = quoted[next];
    const inside = t !== undefined && t.offset! < at - 1 && at + 1 < t.offset! + t.source!.length - 1;
    // libyaml strips blanks around a line break; a NBSP or U+3000 is text to both.
    const ordinary = (c: string | undefined) => c !== undefined && !isBlank(c) && !isBreak(c) && !'\\"\''.includes(c);
    const { line, col } = lines.linePos(at);
    const name = text[at] === '\u2028' ? 'U+2028 (LINE SEPARATOR)' : 'U+2029 (PARAGRAPH SEPARATOR)';
    if (t !== undefined && t.offset! < at && keys.has(t)) {
      const close = keys.get(t);
      const go = close !== undefined ? `did not find expected ',' or '${close}'` : 'mapping values are not allowed in this context';
      return {
        problem: `line ${line}, column ${col}: a quoted key holds ${name}, a line break for Go's YAML 1.1 decoders, so the key spans two lines, which they refuse (Go's decoders: "${go}"); write the key on one line`,
      };
    }
    if (inside && ordinary(text[at - 1]) && ordinary(text[at + 1])) continue;
    return {
      problem: `line ${line}, column ${col}: contains ${name}, a line break for Spiderpool's YAML 1.1 decoders, which this webhook reads only inside a quoted value between two other characters`,
      unread: true,
    };
  }
  return undefined;
}

type Item = { start?: Token[]; key?: Token | null; sep?: Token[]; value?: Token | null };

/** Every collection of the CST with its items, walked without recursion (a collection's own after those it holds, last first). */
function* collections(tokens: readonly Token[]): Generator<{ node: Token; items: Item[] }> {
  const nodes: unknown[] = [...tokens];
  while (nodes.length > 0) {
    const node = nodes.pop() as Token | null | undefined;
    if (node === null || typeof node !== 'object') continue;
    if (node.type === 'document') nodes.push(node['value']);
    if (!Array.isArray(node['items'])) continue;
    const items = node['items'] as Item[];
    for (const { key, value } of items) nodes.push(key, value);
    yield { node, items };
  }
}

/** The quoted scalars that are implicit keys (a `:` follows, no `?` before) of any mapping, with the `]` or `}` closing the flow collection each is in. */
function quotedImplicitKeys(tokens: readonly Token[]): Map<Token, string | undefined> {
  const keys = new Map<Token, string | undefined>();
  for (const { node, items } of collections(tokens)) {
    const close = node.type === 'flow-collection' ? ((node['start'] as Token | undefined)?.source === '[' ? ']' : '}') : undefined;
    for (const { start = [], key, sep = [] } of items) {
      const implicit = !start.some((t) => t.type === 'explicit-key-ind') && sep.some((t) => t.type === 'map-value-ind');
      if (implicit && key && /quoted-scalar$/.test(key.type ?? '')) keys.set(key, close);
    }
  }
  return keys;
}

/**
 * A `:` with no key before it, neither properties nor `?` (or properties at another column
 * than the block mapping's keys), in any mapping of the first document, decoded or not: libyaml's scanner makes no KEY token for it (scannerc.go
 * `yaml_parser_fetch_value`) and its parser fails ("did not find expected key" in a block
 * mapping, "did not find expected node content" in a flow collection); the `yaml` package
 * reads a pair with a null key.
 */
function emptyKeyProblem(tokens: readonly Token[], text: string, end = Infinity): string | undefined {
  for (const { node, items } of collections(tokens)) {
    for (const [i, { start = [], key, sep = [] }] of items.entries()) {
      const skipped = (node['start'] as Token | undefined)?.type === 'flow-seq-start' ? skippedAfterEmptyKey(items, i, text, end) : undefined;
      if (skipped !== undefined) return skipped;
      const colon = sep.find((t) => t.type === 'map-value-ind');
      if (colon === undefined || colon.offset! >= end || (key !== null && key !== undefined)) continue;
      const property = start.find((t) => t.type === 'anchor' || t.type === 'tag');
      // Properties of an empty key stand where the mapping's keys do (the `yaml` package does not check their column).
      const aligned = node.type !== 'block-map' || property === undefined || columnOf(text, property.offset!) === node['indent'];
      if (start.some((t) => t.type === 'explicit-key-ind') || (property !== undefined && aligned)) continue;
      return `${where(text, colon.offset!)}has a value without a key (Go's decoders: "did not find expected key"); write the key before ":"`;
    }
  }
  return undefined;
}

/**
 * An explicit key `?` with nothing after it (no node, no properties) in a flow sequence,
 * item `i` of `items`: libyaml's parser skips the token that follows it, whatever it is
 * (parserc.go `yaml_parser_parse_flow_sequence_entry_mapping_key` calls `skip_token` on a
 * `:`, `,` or `]`), and then wants `,` or `]`: Go fails ("did not find expected ',' or
 * ']'") when the skipped `:` has a value after it (`[? : a]`), the skipped `,` a further
 * item (`[?, a]`), or the skipped `]` closed the sequence (`[? ]`); the `yaml` package reads a
 * pair with a null key. After a skipped `,` that ends the sequence (`[?,]`) both read the same.
 */
function skippedAfterEmptyKey(
  items: ReadonlyArray<{ start?: Token[]; key?: Token | null; sep?: Token[]; value?: Token | null }>,
  i: number,
  text: string,
  end: number,
): string | undefined {
  const { start = [], key, sep = [], value } = items[i]!;
  const mark = start.find((t) => t.type === 'explicit-key-ind');
  if (mark === undefined || mark.offset! >= end || start.some((t) => t.type === 'anchor' || t.type === 'tag')) return undefined;
  if (key !== null && key !== undefined && !(key.type === 'scalar' && key.source === '')) return undefined;
  const colon = sep.some((t) => t.type === 'map-value-ind');
  const hasValue = value !== null && value !== undefined && !(value.type === 'scalar' && value.source === '' && !Array.isArray(value['props']));
  const next = items[i + 1];
  const filled =
    next !== undefined &&
    (next.key != null || next.value != null || (next.start ?? []).some((t) => !['comma', 'space', 'newline', 'comment'].includes(t.type ?? '')));
  // The `,` skipped may stand in the item's own tokens (after a comment) or begin the next item's; no `,` at all: the `]` is skipped.
  const comma = start.some((t) => t.type === 'comma' && t.offset! > mark.offset!) || next !== undefined;
  if (!(colon ? hasValue : !comma || filled || (next === undefined && hasValue))) return undefined;
  return `${where(text, mark.offset!)}an explicit key "?" with nothing after it inside [ ] makes Go's decoders skip the token after it, and they then fail ("did not find expected ',' or ']'"); write the key after "?", or remove the "?"`;
}

/** How far (characters) a simple key may stand before its `:` (scannerc.go `yaml_parser_stale_simple_keys`). */
const MAX_SIMPLE_KEY_CHARS = 1024;

/**
 * An implicit key in a flow collection whose `:` stands on a later line than the key's
 * first token (its anchor or tag, if any), or more than 1024 characters after it, in the
 * first document: libyaml no longer takes it for a key (scannerc.go
 * `yaml_parser_stale_simple_keys`, outside block context without an error), so the `:`
 * follows a complete entry and its parser fails ("did not find expected ',' or '}'"); the
 * `yaml` package reads the pair. An explicit key (`? key`) has no such limit.
 */
function staleKeyProblem(tokens: readonly Token[], text: string, end = Infinity): string | undefined {
  type Item = { start?: Token[]; key?: Token | null; sep?: Token[]; value?: Token | null };
  const nodes: unknown[] = [...tokens];
  const items: Item[] = [];
  while (nodes.length > 0) {
    const node = nodes.pop() as Token | null | undefined;
    if (node === null || typeof node !== 'object') continue;
    if (node.type === 'document') nodes.push(node['value']);
    const collected = Array.isArray(node['items']) ? (node['items'] as Item[]) : [];
    if (node.type === 'flow-collection') items.push(...collected);
    for (const item of collected) nodes.push(item.key, item.value);
  }
  for (const { start = [], key, sep = [] } of items) {
    const colon = sep.find((t) => t.type === 'map-value-ind');
    const first = start.find((t) => t.type === 'anchor' || t.type === 'tag') ?? key ?? undefined;
    if (colon === undefined || first?.offset === undefined || colon.offset! >= end) continue;
    if (start.some((t) => t.type === 'explicit-key-ind')) continue;
    const between = text.slice(first.offset, colon.offset);
    const refused = `which Go's YAML 1.1 decoders refuse inside { } or [ ] ("did not find expected ','")`;
    if (between.includes('\n'))
      return `${where(text, colon.offset!)}this ":" stands on a later line than its key begins, ${refused}; put the key and ":" on one line`;
    if ([...between].length > MAX_SIMPLE_KEY_CHARS)
      return `${where(text, colon.offset!)}this ":" stands over ${MAX_SIMPLE_KEY_CHARS} characters after its key begins, ${refused}; shorten the key`;
  }
  return undefined;
}

/**
 * The text with a continuation line indented that the `yaml` package refuses as too
 * little indented and libyaml does not: in a flow collection ("Flow sequence in block
 * collection must be sufficiently indented") or a quoted scalar ("Missing closing quote"
 * for one that closes further on). The line is indented past the collection's opening or
 * the quote's column. `undefined` when there is no such line (a document marker at column
 * 0, which libyaml reads as one even there, is left alone).
 */
function repad(doc: Document.Parsed, text: string, tokens: readonly Token[]): Padded | undefined {
  // The CST indexed once, at the first error that needs it (a walk per error was quadratic).
  let index: { openings: number[]; quotedByEnd: Map<number, Token> } | undefined;
  const indexed = () => (index ??= indexTokens(tokens));
  for (const error of doc.errors) {
    const at = error.pos[0];
    if (error.code === 'BAD_INDENT' && /^Flow (sequence|map|mapping) in block collection/.test(error.message)) {
      const lineStart = text.lastIndexOf('\n', nextContent(text, at) - 1) + 1;
      const opening = lastBefore(indexed().openings, lineStart);
      if (opening !== undefined) return padLines(text, lineStart, lineStart + 1, columnOf(text, opening) + 1);
    } else if (error.code === 'MISSING_CHAR' && error.message.startsWith('Missing closing')) {
      // The error stands where the `yaml` package ended the scalar.
      const scalar = indexed().quotedByEnd.get(at);
      if (scalar === undefined) continue;
      const open = scalar.offset!;
      const end = quotedEnd(text, open);
      if (text[end - 1] === text[open] && end - 1 > open) return padLines(text, open + 1, end, columnOf(text, open) + 1);
    }
  }
  return undefined;
}

/**
 * The offset of the first character at or after `at` that is neither a blank nor a line
 * break (the text's length when none): the `yaml` package reports a flow continuation line
 * too little indented at the line break ending the line before it when that line ends
 * with a key's `:` (`{a:` then `b}` at column 0), at the line's first character otherwise.
 */
function nextContent(text: string, at: number): number {
  let i = at;
  while (i < text.length && (isBlank(text[i]) || isBreak(text[i]))) i++;
  return i;
}

/** The offsets of the flow collections' openings, ascending, and the quoted scalars by where they end. */
function indexTokens(tokens: readonly Token[]): { openings: number[]; quotedByEnd: Map<number, Token> } {
  const openings: number[] = [];
  const quotedByEnd = new Map<number, Token>();
  for (const t of sourceTokens(tokens)) {
    if (t.type === 'flow-seq-start' || t.type === 'flow-map-start') openings.push(t.offset!);
    else if (/quoted-scalar$/.test(t.type ?? '') && !quotedByEnd.has(t.offset! + t.source!.length)) quotedByEnd.set(t.offset! + t.source!.length, t);
  }
  return { openings: openings.sort((a, b) => a - b), quotedByEnd };
}

/** The greatest of `sorted` (ascending) below `limit`, by binary search. */
function lastBefore(sorted: readonly number[], limit: number): number | undefined {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < limit) low = middle + 1;
    else high = middle;
  }
  return low === 0 ? undefined : sorted[low - 1];
}

function columnOf(text: string, at: number): number {
  return at - (text.lastIndexOf('\n', at - 1) + 1);
}

/** The text with a space before each block scalar header libyaml reads as a value at its key's indentation (libyaml-block.ts); `undefined` when none. */
function padHeaders(text: string, tokens: readonly Token[], end = text.length): Padded | undefined {
  const headers = headersAtKeyIndent(tokens, text).filter((at) => at < end);
  if (headers.length === 0) return undefined;
  return { text: rewriteAt(text, headers, 0, ' '), inserts: headers.map((at) => [at, 1]) };
}

/** A text with spaces inserted: where (offsets in the text before) and how many. */
type Padded = { text: string; inserts: Array<[number, number]> };

/** The lines starting in [from, to) indented to at least `column` with spaces; `undefined` when none needed it. */
function padLines(text: string, from: number, to: number, column: number): Padded | undefined {
  let out = '';
  let last = 0;
  const inserts: Array<[number, number]> = [];
  for (let lineStart = text.lastIndexOf('\n', from - 1) + 1; lineStart < to; ) {
    const indent = /^[ ]*/.exec(text.slice(lineStart))![0].length;
    const marker = (text.startsWith('---', lineStart) || text.startsWith('...', lineStart)) && blankOrEnd(text[lineStart + 3]);
    if (lineStart >= from && indent < column && !marker) {
      out += text.slice(last, lineStart) + ' '.repeat(column - indent);
      inserts.push([lineStart, column - indent]);
      last = lineStart;
    }
    const next = text.indexOf('\n', lineStart);
    if (next < 0) break;
    lineStart = next + 1;
  }
  return inserts.length === 0 ? undefined : { text: out + text.slice(last), inserts };
}

/** The `yaml` package's complaint about a comment right after a quoted scalar or a flow indicator, which libyaml reads as a comment. */
function commentAfterToken(error: { code: string; message: string; pos: [number, number] }, text: string): boolean {
  return error.code === 'MISSING_CHAR' && error.message.startsWith('Comments must be separated') && /["'\]},[{]/.test(text[error.pos[0] - 1] ?? '');
}

/**
 * An alias with only an anchor before it as the whole document: libyaml ends the document
 * at the anchored empty scalar, so the document is empty (made so here).
 */
function rootAlias(doc: Document.Parsed, tokens: readonly Token[]): boolean {
  if (!isAlias(doc.contents) || sourceTokens(tokens).some((t) => t.type === 'tag' && t.offset! < doc.contents!.range![0])) return false;
  doc.contents = null;
  return true;
}
