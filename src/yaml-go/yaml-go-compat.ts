/**
 * What Spiderpool's Go YAML decoders (`gopkg.in/yaml.v2` and `yaml.v3`, both built on
 * libyaml's YAML 1.1 scanner) refuse although the `yaml` package, a YAML 1.2 parser,
 * accepts it. Each check was found by the differential test against the real decoders
 * (`test/e2e/go-oracle.test.ts`); each returns why the text is refused, or `undefined`.
 */
import { isAlias, isCollection, isNode, isScalar, visit, type Alias, type Document, type LineCounter, type YAMLMap, type YAMLSeq } from 'yaml';
import { quoteShown } from '../go/strconv-quote.js';
import { blockScalarProblem } from './libyaml-lookahead.js';
import { scanFlow } from './libyaml-flow.js';
import { lfBreaks, trimBlanks } from './libyaml-chars.js';
import { flowOutsideBlockScalars } from './libyaml-parse.js';
import { firstDocumentTagDirectives, leadingDirectives } from './libyaml-tags.js';

/**
 * Nesting refused before the YAML parser sees the text: parsing time grows with the
 * square of the nesting (16 000 levels in 32 KiB hold the event loop for seconds).
 * Spiderpool's configuration nests six levels; Go's decoders allow 10 000, so this is
 * this webhook's limit, stricter than Go on purpose.
 */
const MAX_FLOW_DEPTH = 100;
/**
 * Brackets nested deeper are refused even in block scalars, which Go reads as text: should
 * the block scalars ever be misread, the composer's recursion on 20 000 of them is a V8 fatal
 * error, not an exception (5 000 measured harmless). No conf.yml comes near.
 */
const MAX_BRACKET_DEPTH = 2_000;
/** Block collections opened on one line (`- - - x`, `? - a`), also this webhook's limit. */
const MAX_COMPACT_INDICATORS = 100;
/**
 * Spiderpool's conf.yml is a few KiB. Above {@link LARGE_TEXT_CHARS} it is read with a
 * warning; above MAX_TEXT_CHARS refused. Parsing is linear, but the `yaml` package builds
 * an error object per bad token, and every review waits behind a parse: measured on the
 * 2-core machine at a load of 7, hostile shapes took up to 0.75 s at 32 KiB and 3 s at
 * 128 KiB (10-16: 0.5-7 s), against the conf webhook's 5 s timeout and the probes' 2 s,
 * so the bound stays at twice the warning's.
 */
const MAX_TEXT_CHARS = 64 * 1024;
/** Longer than any real conf.yml: read, with a warning that a text over MAX_TEXT_CHARS is refused. */
const LARGE_TEXT_CHARS = 32 * 1024;

/**
 * The warning for a conf.yml longer than {@link LARGE_TEXT_CHARS} that is still read, naming
 * the refusal's bound; none past the bound, where the refusal says it.
 */
export function largeTextWarning(length: number): string | undefined {
  if (length <= LARGE_TEXT_CHARS || length > MAX_TEXT_CHARS) return undefined;
  return `is ${length} characters long, more than ${LARGE_TEXT_CHARS} (Spiderpool's is a few KiB): read, but this webhook refuses one over ${MAX_TEXT_CHARS}, its own limit against hostile input`;
}

/**
 * Limits of this webhook, not of Go: text it refuses to parse to stay responsive under
 * hostile input. Real configurations are far inside them. Flow nesting is counted as
 * libyaml reads it: brackets in comments, in quoted scalars, inside plain scalars
 * (`a: b[c`) and in block scalars do not count. The block scalars are found by a parse
 * (linear in the text) only when the brackets outside comments and quotes nest too deep.
 */
export function limitProblem(text: string): string | undefined {
  if (text.length > MAX_TEXT_CHARS) return `is ${text.length} characters long, more than ${MAX_TEXT_CHARS}`;
  const deepest = scanFlow(text).deepest;
  if (deepest > MAX_BRACKET_DEPTH) return `nests [ or { more than ${MAX_BRACKET_DEPTH} deep, counting those in block scalars`;
  if (deepest > MAX_FLOW_DEPTH && flowOutsideBlockScalars(lfBreaks(text)).deepest > MAX_FLOW_DEPTH)
    return `nests flow collections ([ or {) more than ${MAX_FLOW_DEPTH} deep`;
  const compact = /^[ \t]*(?:[-?:](?=[ \t]|$)[ \t]*)*/;
  for (const line of text.split('\n')) {
    const indicators = compact.exec(line)![0].replace(/[ \t]/g, '').length;
    if (indicators > MAX_COMPACT_INDICATORS) return `opens more than ${MAX_COMPACT_INDICATORS} block collections on one line`;
  }
  return undefined;
}

/**
 * Characters libyaml refuses anywhere in the stream ("control characters are not
 * allowed"). Its YAML 1.1 line breaks NEL, LS and PS are read in libyaml-parse.ts.
 */
const FORBIDDEN_CHARACTER = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]/;

/**
 * The first character libyaml's reader refuses, with where it stands: its index in the
 * text and the line saying so. Whether a decoder meets it depends on how far it reads
 * (libyaml-lookahead.ts).
 */
export function forbiddenCharacter(text: string): { index: number; problem: string } | undefined {
  const bad = FORBIDDEN_CHARACTER.exec(text);
  if (bad === null) return undefined;
  const before = text.slice(0, bad.index);
  const line = before.split('\n').length;
  const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  return { index: bad.index, problem: `line ${line}, column ${bad.index - before.lastIndexOf('\n')}: contains U+${code}, a control character` };
}

/**
 * What libyaml refuses in the directives before the first document: its lines end at any
 * of its line breaks (CR alone and NEL included), and a byte order mark is no character.
 */
export function textProblem(text: string): string | undefined {
  const tags = firstDocumentTagDirectives(text);
  return directiveProblem(leadingDirectives(text)) ?? ('problem' in tags ? tags.problem : undefined);
}

/** libyaml accepts one `%YAML 1.1` and `%TAG` directives (libyaml-tags.ts reads those); any other directive is an error. */
function directiveProblem(directives: ReadonlyArray<{ line: number; text: string }>): string | undefined {
  let yamlDirectives = 0;
  for (const { line, text } of directives) {
    const [name, version] = trimBlanks(text.slice(1)).split(/[ \t]+/);
    if (name === 'TAG') continue;
    if (name === 'YAML' && version === '1.1' && ++yamlDirectives === 1) continue;
    return `line ${line}: directive ${quoteShown(trimBlanks(text))} is not supported (only one %YAML 1.1 and %TAG)`;
  }
  return undefined;
}

/** Where a node starts, as `line L, column C: `, or "" when it has no position. */
export function at(node: unknown, lines: LineCounter): string {
  const start = (node as { range?: [number, number, number] } | null)?.range?.[0];
  if (start === undefined) return '';
  const { line, col } = lines.linePos(start);
  return `line ${line}, column ${col}: `;
}

/**
 * One pass over the parsed document: resolves every alias to the nearest anchor of that
 * name before it (as YAML and both Go decoders do; resolving each alias by searching the
 * document would be quadratic), and finds what libyaml refuses in it:
 * - an alias to an anchor not seen before ("unknown anchor"), wherever it stands;
 * - a double-quoted escape YAML 1.1 lacks: `\/`, or `\u` of a UTF-16 surrogate;
 * - a `?` inside a plain value in a flow collection (`{serverUrl: http://h/x?y=1}`):
 *   libyaml ends the value there and then fails.
 *
 * @returns the resolved aliases, or why the document is refused.
 */
export function inspectDocument(doc: Document.Parsed, text: string, lines: LineCounter): { aliases: Map<Alias, unknown> } | { problem: string } {
  const anchors = new Map<string, unknown>();
  const aliases = new Map<Alias, unknown>();
  let problem: string | undefined;
  visit(doc, (_key, node, path) => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) problem = `${at(node, lines)}refers to unknown anchor ${quoteShown(node.source)}`;
      else aliases.set(node, target);
    } else if (isScalar(node)) {
      const source = node.range ? text.slice(node.range[0], node.range[1]) : '';
      if (node.type === 'QUOTE_DOUBLE' && hasYaml12OnlyEscape(source)) {
        problem = `${at(node, lines)}uses an escape that YAML 1.1 lacks (\\/ or a \\u surrogate); write the character itself`;
      } else if (node.type === 'PLAIN' && source.includes('?') && path.some((p) => isCollection(p) && p.flow)) {
        problem = `${at(node, lines)}has "?" in an unquoted value inside { } or [ ]; quote the value`;
      }
    }
    if (problem !== undefined) return visit.BREAK;
    if (isNode(node) && node.anchor) anchors.set(node.anchor, node);
    return undefined;
  });
  return problem === undefined ? { aliases } : { problem };
}

/** A blank or comment line whose indentation has a tab after spaces only: `<spaces>\t…`. */
const TAB_INDENTED_BLANK_LINE = /^( *)\t[ \t]*(#.*)?\r?$/;

/**
 * A tab in the indentation of a blank or comment line in block context, which libyaml
 * refuses although the `yaml` package skips the line: at the start of a line it cannot
 * start a token ("found character that cannot start any token"), unless a plain scalar
 * is still being read (no comment since), whose scan skips tabs at or past its own
 * indentation, the enclosing block collection's column + 1 ("found a tab character that
 * violates indentation", scannerc.go `yaml_parser_scan_plain_scalar`).
 */
export function tabProblem(doc: Document.Parsed | undefined, text: string, lines: LineCounter): string | undefined {
  if (!text.includes('\t')) return undefined;
  // Where lines are not read in block context (flow collections, quoted and block scalars),
  // and where each block-context plain scalar ends, with the indentation its scan keeps.
  const elsewhere: Array<[number, number]> = [];
  const plainEnds = new Map<number, number>();
  let blockProblem: string | undefined;
  visit(doc?.contents ?? null, (_key, node, path) => {
    if (isCollection(node) && node.flow && node.range) {
      elsewhere.push([node.range[0], node.range[1]]);
      return visit.SKIP;
    }
    if (!isScalar(node) || !node.range) return undefined;
    if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
      const block = [...path].reverse().find((p): p is YAMLMap | YAMLSeq => isCollection(p));
      const header = text.slice(node.range[0]).search(/[|>]/) + node.range[0];
      blockProblem ??= blockScalarProblem(text, header, block?.range ? lines.linePos(block.range[0]).col - 1 : -1);
    }
    if (node.type !== 'PLAIN') elsewhere.push([node.range[0], node.range[1]]);
    // An empty scalar (`a: !!str`) is no plain scalar being scanned.
    else if (node.range[0] < node.range[1]) {
      const block = [...path].reverse().find((p): p is YAMLMap | YAMLSeq => isCollection(p));
      plainEnds.set(node.range[1], block?.range ? lines.linePos(block.range[0]).col : 0);
    }
    return undefined;
  });
  if (blockProblem !== undefined) return blockProblem;
  // A byte order mark is no character of the first line for libyaml.
  const textLines = text.replace(/^\ufeff/, ' ').split('\n');
  let offset = 0;
  const starts = textLines.map((line) => {
    const start = offset;
    offset += line.length + 1;
    return start;
  });
  // Go reads only the first document, but scans on to the token after it (the next
  // document's marker), so blank lines after its content are read.
  const contentEnd = doc?.contents?.range?.[2] ?? 0;
  const marker = /^(---|\.\.\.)(?=[ \t\n\r\u0085\u2028\u2029]|$)/m.exec(text.slice(contentEnd));
  const documentEnd = marker === null ? text.length : contentEnd + marker.index;
  for (const [index, line] of textLines.entries()) {
    const tab = TAB_INDENTED_BLANK_LINE.exec(line);
    const start = starts[index]!;
    if (start >= documentEnd) break;
    if (!tab || elsewhere.some(([from, to]) => start >= from && start < to)) continue;
    const indent = plainScalarIndent(textLines, starts, index, plainEnds);
    const column = tab[1]!.length;
    if (indent === undefined || column < indent) {
      return `line ${index + 1}, column ${column + 1}: has a tab in the indentation of a blank or comment line, which Go's YAML decoders refuse; indent with spaces or remove the line`;
    }
  }
  return undefined;
}

/**
 * The indentation of the plain scalar still being scanned at line `index` (the last
 * content above it is a block-context plain scalar, with no comment since), or `undefined`.
 */
function plainScalarIndent(textLines: readonly string[], starts: readonly number[], index: number, plainEnds: ReadonlyMap<number, number>): number | undefined {
  for (let i = index - 1; i >= 0; i--) {
    const line = textLines[i]!;
    if (/^[ \t]*\r?$/.test(line)) continue;
    if (/^[ \t]*#/.test(line)) return undefined;
    for (let end = starts[i]! + line.length; end > starts[i]!; end--) {
      const indent = plainEnds.get(end);
      if (indent === undefined) continue;
      // Only blanks may follow it on its line (a comment ends the scalar's scan).
      return /^[ \t]*\r?$/.test(line.slice(end - starts[i]!)) ? indent : undefined;
    }
    return undefined;
  }
  return undefined;
}

/** Whether double-quoted source text uses `\/` or a `\u` escape of a surrogate. */
function hasYaml12OnlyEscape(source: string): boolean {
  for (const match of source.matchAll(/\\(u[0-9a-fA-F]{4}|.)/gs)) {
    const escaped = match[1]!;
    if (escaped === '/' || /^u[dD][89a-fA-F]/.test(escaped)) return true;
  }
  return false;
}
