/**
 * Tags and %TAG directives as libyaml scans and resolves them (scannerc.go
 * `yaml_parser_scan_tag`, `yaml_parser_scan_tag_handle`, `yaml_parser_scan_tag_uri`,
 * `yaml_parser_scan_tag_directive_value`; parserc.go `yaml_parser_process_directives`,
 * `yaml_parser_parse_node`), identical in Go's yaml.v2 v2.4.0 and yaml.v3 v3.0.1:
 * - a verbatim tag `!<uri>` is its URI (`!<!>` is the non-specific tag `!`);
 * - a handle is `!`, `!!` or `!` + word characters (ASCII letters, digits, `-`, `_`) + `!`;
 *   a tag whose `!` is not followed by such a handle is a local tag `!` + suffix, whose
 *   suffix runs on over every URI character, later `!` included (`!*a!null` is the local
 *   tag `!*a!null`; the `yaml` package splits at its last `!` and cannot resolve it);
 * - a suffix and a %TAG prefix are URI characters (letters, digits and
 *   `-_;/?:@&=+$,.!~*'()[]%`; not `{`, `}`, `<`, `>`, `#`, quotes or anything non-ASCII),
 *   with `%XX` escapes decoded as UTF-8 octets;
 * - a tag resolves to its handle's %TAG prefix + its suffix: `!` and `!!` have defaults
 *   (`!`, `tag:yaml.org,2002:`) a %TAG directive may replace; any other handle must be
 *   declared ("found undefined tag handle"), and once ("found duplicate %TAG directive").
 */
import { isNode, visit, type Document, type Node } from 'yaml';
import { quoteShown } from '../go/strconv-quote.js';
import { ANCHOR_CHARACTER, TAG_CHARACTER, blankOrEnd, decodeUriEscapes, isBlank, isBreak, trimBlanksEnd } from './libyaml-chars.js';
import { where } from './libyaml-flow.js';

/** A tag token of the text: `[start, end)`, its handle (`''` when verbatim or the lone `!`) and its suffix, decoded. */
export interface ScannedTag {
  end: number;
  handle: string;
  suffix: string;
}

/** Why libyaml's scanner refuses a tag or directive, in its words, and where it noticed (an offset of the text). */
export interface ScanProblem {
  problem: string;
  at: number;
}

/** A %TAG directive's handle and prefix (decoded). */
export interface TagDirective {
  handle: string;
  prefix: string;
}

/** The handles every document has unless a %TAG directive replaces them (parserc.go `default_tag_directives`). */
const DEFAULT_TAG_DIRECTIVES: ReadonlyArray<readonly [string, string]> = [
  ['!', '!'],
  ['!!', 'tag:yaml.org,2002:'],
];

/**
 * Scans the tag starting at `start` (a `!`) of `text` as libyaml does: it must be followed
 * by a blank, a line break or the end of the text. Never throws.
 */
export function scanTag(text: string, start: number): ScannedTag | ScanProblem {
  let handle: string;
  let suffix: string;
  let end: number;
  if (text[start + 1] === '<') {
    const uri = scanUri(text, start + 2, start);
    if ('problem' in uri) return uri;
    if (uri.end === start + 2) return { problem: 'did not find expected tag URI', at: start };
    if (text[uri.end] !== '>') return { problem: "did not find the expected '>'", at: uri.end };
    [handle, suffix, end] = ['', uri.decoded, uri.end + 1];
  } else {
    let word = start + 1;
    while (word < text.length && ANCHOR_CHARACTER.test(text[word]!)) word++;
    const named = text[word] === '!';
    const uri = scanUri(text, named ? word + 1 : word, start);
    if ('problem' in uri) return uri;
    end = uri.end;
    if (named) {
      if (uri.end === word + 1) return { problem: 'did not find expected tag URI', at: start };
      [handle, suffix] = [text.slice(start, word + 1), uri.decoded];
    } else {
      // Not a handle: its word starts a local tag's suffix; none at all is the tag `!`.
      suffix = text.slice(start + 1, word) + uri.decoded;
      [handle, suffix] = suffix === '' ? ['', '!'] : ['!', suffix];
    }
  }
  if (!blankOrEnd(text[end])) return { problem: 'did not find expected whitespace or line break', at: end };
  return { end, handle, suffix };
}

/** The URI characters of `text` from `from` on, with `%XX` escapes decoded (a bad one is refused). */
function scanUri(text: string, from: number, tagStart: number): { end: number; decoded: string } | ScanProblem {
  let end = from;
  while (end < text.length && TAG_CHARACTER.test(text[end]!)) end++;
  const escapes = decodeUriEscapes(text.slice(from, end));
  return 'problem' in escapes ? { problem: escapes.problem, at: tagStart } : { end, decoded: escapes.decoded };
}

/**
 * The Go tag of a scanned tag (the event's tag, as both decoders see it) under the first
 * document's `directives`; or libyaml's parser error for an undeclared handle.
 */
export function resolveTag(tag: ScannedTag, directives: ReadonlyMap<string, string>): { tag: string } | { problem: string } {
  if (tag.handle === '') return { tag: tag.suffix };
  const prefix = directives.get(tag.handle);
  return prefix === undefined ? { problem: 'found undefined tag handle' } : { tag: prefix + tag.suffix };
}

/**
 * Reads the %TAG directive on `line` (the directive's line, from its `%`, without the line
 * break) as libyaml does: blanks, a handle (`!`, `!!` or `!word!`), blanks, a prefix of URI
 * characters, then only blanks and a comment. Offsets in problems are of `line`.
 */
export function scanTagDirective(line: string): TagDirective | ScanProblem {
  let at = '%TAG'.length;
  while (isBlank(line[at])) at++;
  if (line[at] !== '!') return { problem: "did not find expected '!'", at };
  const handleStart = at++;
  while (at < line.length && ANCHOR_CHARACTER.test(line[at]!)) at++;
  if (line[at] === '!') at++;
  else if (at > handleStart + 1) return { problem: "did not find expected '!'", at };
  const handle = line.slice(handleStart, at);
  if (!isBlank(line[at])) return { problem: 'did not find expected whitespace', at };
  while (isBlank(line[at])) at++;
  const prefixStart = at;
  while (at < line.length && TAG_CHARACTER.test(line[at]!)) at++;
  if (at === prefixStart) return { problem: 'did not find expected tag URI', at };
  const escapes = decodeUriEscapes(line.slice(prefixStart, at));
  if ('problem' in escapes) return { problem: escapes.problem, at: prefixStart };
  if (!blankOrEnd(line[at])) return { problem: 'did not find expected whitespace or line break', at };
  while (isBlank(line[at])) at++;
  if (at < line.length && line[at] !== '#' && !isBreak(line[at])) return { problem: 'did not find expected comment or line break', at };
  return { handle, prefix: escapes.decoded };
}

/**
 * The directive lines before the first document, with their 1-based line numbers: libyaml's
 * lines end at any of its line breaks (CR alone and NEL included), a byte order mark is no
 * character, and directives stand only before the first line that is neither a directive,
 * blank nor a comment.
 */
export function leadingDirectives(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  for (const [index, line] of text
    .replace(/^\ufeff/, '')
    .split(/\r\n|[\r\n\u0085\u2028\u2029]/)
    .entries()) {
    if (line.startsWith('%')) out.push({ line: index + 1, text: line });
    else if (!/^[ \t]*(#|$)/.test(line)) break;
  }
  return out;
}

/**
 * The handles of the first document and their prefixes (its %TAG directives, then the
 * defaults), or why libyaml refuses one of its %TAG directives.
 */
export function firstDocumentTagDirectives(text: string): Map<string, string> | { problem: string } {
  const declared: TagDirective[] = [];
  for (const { line, text: directive } of leadingDirectives(text)) {
    if (!/^%TAG(?:[ \t]|$)/.test(directive)) continue;
    const scanned = scanTagDirective(directive);
    if ('problem' in scanned) return { problem: `line ${line}, column ${scanned.at + 1}: ${directiveProblem(directive, scanned)}` };
    declared.push(scanned);
  }
  const directives = documentTagDirectives(declared);
  if ('problem' in directives)
    return { problem: `a %TAG directive declares a handle twice (Go's decoders: "${directives.problem}"); declare each handle once` };
  return directives;
}

/** The line for a %TAG directive libyaml refuses. */
function directiveProblem(directive: string, { problem, at }: ScanProblem): string {
  if (problem.includes('octet')) return `%TAG prefix ${JSON.stringify(directive.slice(at).split(/[ \t]/)[0])}: ${tagEscapeProblem(problem)}`;
  return `Go's decoders refuse the directive ${quoteShown(trimBlanksEnd(directive))} ("${problem}"): write "%TAG", a handle (!, !! or !name!) and a prefix of URI characters (letters, digits, -_;/?:@&=+$,.!~*'()[]%), then only a comment`;
}

/**
 * The handles of a document and their prefixes: its %TAG directives, then the defaults
 * for `!` and `!!` where no directive replaced them; or the parser's error for a handle
 * declared twice.
 */
export function documentTagDirectives(declared: readonly TagDirective[]): Map<string, string> | { problem: string } {
  const directives = new Map<string, string>();
  for (const { handle, prefix } of declared) {
    if (directives.has(handle)) return { problem: 'found duplicate %TAG directive' };
    directives.set(handle, prefix);
  }
  for (const [handle, prefix] of DEFAULT_TAG_DIRECTIVES) if (!directives.has(handle)) directives.set(handle, prefix);
  return directives;
}

/**
 * The first document's tags as libyaml reads them, by offset in the text as parsed
 * (ascending; the parse loop shifts `at` where it inserts spaces), one entry each: its Go
 * tag or libyaml's problem with it (`at` its offset from the tag's start), and its text as
 * written while the parse reads it respelt.
 */
export interface FirstDocumentTags {
  at: number[];
  entries: TagEntry[];
}

type TagEntry = ({ tag: string } | ScanProblem) & { written?: string; restored?: true };

/** A tag token of the `yaml` package's CST: where it starts. */
type TagToken = { offset?: number };

/**
 * The text with each tag of `tokens` (the first document's, not seen before) respelt for
 * the `yaml` package as a local tag of the same length, `!xx…`, which it reads as one tag
 * whatever libyaml's tag holds (`,` `[` `]` `%`, a later `!`, a verbatim `!<!>`); the lone
 * `!` is kept (non-specific to both), and so is a tag libyaml refuses (refused by
 * {@link retag} if it is still a tag once the parse settles). A respelt tag the parse no
 * longer reads as a tag (a broken quoted scalar, repadded, took it in) gets its text back,
 * once. Each tag's Go tag or problem is recorded in `tags`.
 */
export function respellTags(tokens: readonly TagToken[], text: string, directives: ReadonlyMap<string, string>, tags: FirstDocumentTags): string {
  const current = new Set(tokens.map((t) => t.offset!));
  const edits: Array<[number, string]> = [];
  tags.entries.forEach((entry, i) => {
    if (entry.written === undefined || current.has(tags.at[i]!)) return;
    edits.push([tags.at[i]!, entry.written]);
    delete entry.written;
    entry.restored = true;
  });
  const known = new Map(tags.at.map((at, i) => [at, tags.entries[i]!]));
  // A token inside a tag scanned before it in this round is part of that one libyaml tag
  // (`![!a[!a…`): skipped, so each character is scanned and respelt once, not once per token.
  let scannedTo = -1;
  for (const start of [...current].filter((at) => !known.has(at)).sort((a, b) => a - b)) {
    if (start < scannedTo) continue;
    const scanned = scanTag(text, start);
    scannedTo = 'problem' in scanned ? scanned.at : scanned.end;
    const resolved = 'problem' in scanned ? scanned : resolveTag(scanned, directives);
    const entry: TagEntry =
      'problem' in resolved ? { problem: resolved.problem, at: 'at' in resolved ? (resolved as ScanProblem).at - start : 0 } : { tag: resolved.tag };
    known.set(start, entry);
    if ('problem' in scanned || 'problem' in entry || scanned.end - start === 1) continue;
    entry.written = text.slice(start, scanned.end);
    edits.push([start, `!${'x'.repeat(scanned.end - start - 1)}`]);
  }
  tags.at = [...known.keys()].sort((a, b) => a - b);
  tags.entries = tags.at.map((at) => known.get(at)!);
  if (edits.length === 0) return text;
  // Each edit keeps the length of what it replaces.
  const parts: string[] = [];
  let last = 0;
  for (const [at, spelt] of edits.sort((a, b) => a[0] - b[0])) {
    parts.push(text.slice(last, at), spelt);
    last = at + spelt.length;
  }
  parts.push(text.slice(last));
  return parts.join('');
}

/** Why libyaml refuses a tag of `text` (offsets in it), as one line. */
function tagRefusal(text: string, start: number, entry: ScanProblem): string {
  if (entry.problem === 'found undefined tag handle') {
    const handle = text.slice(start, text.indexOf('!', start + 1) + 1);
    return `${where(text, start)}the tag handle ${JSON.stringify(handle)} is not declared by a %TAG directive (Go's decoders: "${entry.problem}"); declare it before "---" or remove the tag`;
  }
  return `${where(text, start + entry.at)}${tagProblem(entry.problem)}`;
}

/** The line for a tag libyaml's scanner refuses, with Go's `problem`. */
function tagProblem(problem: string): string {
  switch (problem) {
    case 'did not find expected whitespace or line break':
      return `a tag must be followed by a space or a line break (Go's decoders: "${problem}")`;
    case 'did not find expected tag URI':
      return `a tag needs a name of URI characters after "!<", "!!" or its handle (Go's decoders: "${problem}"); write the name or remove the tag`;
    case "did not find the expected '>'":
      return `a verbatim tag "!<...>" holds only URI characters (letters, digits, -_;/?:@&=+$,.!~*'()[]%) and ends with ">" (Go's decoders: "${problem}")`;
    default:
      return tagEscapeProblem(problem);
  }
}

/** The line for a `%` in a tag or %TAG prefix libyaml refuses, with Go's `problem`. */
const tagEscapeProblem = (problem: string): string => `a "%" in a tag must start two hex digits of UTF-8 octets (Go's decoders: "${problem}")`;

/**
 * Gives each tagged node of the first document the Go tag of its tag token: the tokens in
 * text order are the tagged nodes in document order (a node's tag stands before its
 * contents, each before the next sibling's), so the n-th token tags the n-th node, whatever
 * text the two share. Or why libyaml refuses the first tag it refuses, in text order; or
 * a refusal when tokens and nodes cannot be paired (expected only with the parse's own
 * errors, which refuse the text anyway: then `undefined`).
 */
export function retag(doc: Document.Parsed, tokens: readonly TagToken[], tags: FirstDocumentTags, text: string): string | undefined {
  const starts = [...new Set(tokens.map((t) => t.offset!))].sort((a, b) => a - b);
  const byOffset = new Map(tags.at.map((at, i) => [at, tags.entries[i]!]));
  for (const start of starts) {
    const entry = byOffset.get(start);
    if (entry !== undefined && 'problem' in entry) return tagRefusal(text, start, entry);
  }
  const nodes: Node[] = [];
  visit(doc, (_, node) => {
    if (isNode(node) && node.tag !== undefined) nodes.push(node);
  });
  if (nodes.length !== starts.length) {
    return doc.errors.length > 0 ? undefined : `this webhook cannot tell which value each of the document's ${starts.length} tags belongs to; remove the tags`;
  }
  nodes.forEach((node, i) => {
    const entry = byOffset.get(starts[i]!);
    if (entry !== undefined && 'tag' in entry) node.tag = entry.tag;
  });
  return undefined;
}
