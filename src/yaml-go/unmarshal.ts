/**
 * `yaml.Unmarshal` of a text into a Go struct, as `gopkg.in/yaml.v2` v2.4.0 and
 * `gopkg.in/yaml.v3` v3.0.1 do it (both ports of libyaml, a YAML 1.1 parser): the text is
 * read once as libyaml reads it (libyaml-parse.ts), then each decoder's pass applies its
 * rules per Go type (unmarshal-value.ts). Why an emulation and not Go's decoders as
 * WebAssembly (+120 MiB RSS, ~77 ms a document): docs/adr/0023-yaml-emulation-not-wasm.md.
 */
import { LineCounter, type YAMLParseError } from 'yaml';
import { escapeUnprintable, truncate } from '../go/strconv-quote.js';
import { zeroStruct, type GoStruct, type StructType } from './go-types.js';
import type { Semantics } from './go-scalar.js';
import { lineEnd, lineStartOffset } from './libyaml-chars.js';
import { bomMayStartBuffer, bomSkipOutcome, bomSkips, scalarSpans, secondBomAsSpace } from './libyaml-bom.js';
import { rewriteAt } from './libyaml-flow.js';
import { BOM_BYTES, decodedCharacters, readPastFirstDocument, scanPastImplicitEnd, type Reach } from './libyaml-lookahead.js';
import { parseLikeLibyaml } from './libyaml-parse.js';
import { DecodeFailure, STOPS_AT_ONCE, bothSay, type Context, type DecodeProblem, type Refusal, type UnknownKey } from './unmarshal-context.js';
import { isNull } from './unmarshal-scalar.js';
import { decodePass } from './unmarshal-value.js';
import { forbiddenCharacter, inspectDocument, limitProblem, tabProblem, textProblem } from './yaml-go-compat.js';

/** One decoder's `Unmarshal`: the value when it decodes; else Go's error text and each problem. */
interface GoDecoding {
  value?: GoStruct;
  /**
   * The error as `Unmarshal` returns it: `yaml: unmarshal errors:\n  line 3: cannot
   * unmarshal !!str `abc` into int` (one line per type error), or `yaml: <message>` for
   * what stops the decoder at once. Go's own words for decode errors; for what libyaml's
   * scanner or parser refuses, this package's description with Go's line and column.
   */
  error?: string;
  /** The decoder's problems with single values, in the order it meets them (empty when `refused`). */
  problems: DecodeProblem[];
}

/**
 * Both decoders' reading of a text's first document (`Unmarshal` reads only that).
 * `refused`: both refuse the text as a whole. `more`: another document with content
 * follows; `empty`: the first document is empty or null. `unknownKeys`: keys the struct
 * lacks, which both skip, each once, in the order met.
 */
export interface Unmarshalled {
  v2: GoDecoding;
  v3: GoDecoding;
  refused?: Refusal;
  unknownKeys: UnknownKey[];
  more: boolean;
  empty: boolean;
  /** The 1-based line the first document ends at without a marker, when it does (libyaml-parse.ts `implicitEnd`). */
  dedentLine?: number;
  /** The first document is a flow collection (`{...}` or `[...]`) that ends on `dedentLine`, with more after it. */
  flowRoot?: true;
}

/**
 * Decodes `written` into a value of struct type `type` with both decoders. Field paths
 * are relative to the document. Never throws for any input text.
 */
export function unmarshal(text: string, type: StructType): Unmarshalled {
  // libyaml's reader takes a byte order mark at the start of the stream for no character
  // (readerc.go `yaml_parser_determine_encoding`); the `yaml` package counts it into the
  // first line's indentation. The characters its scanner skips are found with it (libyaml-bom.ts).
  const leadingBom = text.startsWith('\uFEFF');
  return unmarshalRead(leadingBom ? text.slice(1) : text, leadingBom, type);
}

/** {@link unmarshal} of `written`, the text past its BOM when `leadingBom`. */
function unmarshalRead(written: string, leadingBom: boolean, type: StructType): Unmarshalled {
  const limit = limitProblem(written);
  if (limit !== undefined) return refused({ by: 'limit', field: '', problem: limit });
  const textRefused = textProblem(written);
  if (textRefused !== undefined) return refused({ by: 'go', field: '', problem: textRefused });
  let lines = new LineCounter();
  try {
    const read = readSkipping(written, leadingBom);
    if (typeof read !== 'string') return refused(read);
    const parsed = parseLikeLibyaml(read, () => (lines = new LineCounter()));
    if ('dedentLine' in parsed) return firstOfImplicitlyEnded(written, leadingBom, parsed.dedentLine, parsed.rest, type);
    if ('problem' in parsed) {
      // A control character in the first document is what the reader meets first.
      const control = forbiddenCharacter(written);
      const first = control !== undefined && (parsed.end === undefined || control.index < parsed.end);
      if (!first && parsed.unread) return refused({ by: 'unread', field: '', problem: parsed.problem });
      return refused({ by: 'go', field: '', problem: first ? control.problem : parsed.problem });
    }
    const { doc, more, text } = parsed;
    // Offsets after the first document are those of the written text (padding goes before).
    const end = parsed.end === undefined ? undefined : parsed.end - (text.length - written.length);
    const reach = readPastFirstDocument(written, end);
    const control = forbiddenCharacter(written);
    const controlStops = control === undefined ? undefined : controlCharacterStops(written, control.index, reach, end, leadingBom ? BOM_BYTES : 0);
    if (controlStops === 'both') return refused({ by: 'go', field: '', problem: control!.problem });
    // What yaml.v3 alone meets past the first document.
    const v3Problem = controlStops === 'v3' ? `${control!.problem} past the first document` : reach.v3Problem;
    const empty = doc === undefined || isNull(doc.contents);
    const blank = tabProblem(doc, text, lines);
    if (blank !== undefined) return refused({ by: 'go', field: '', problem: blank });
    if (doc === undefined)
      return { v2: { value: zeroStruct(type), problems: [] }, v3: { value: zeroStruct(type), problems: [] }, unknownKeys: [], more, empty };
    // Errors past the marker are the yaml package's reading of later documents, which Go does not parse.
    const syntax = doc.errors.find((e) => parsed.end === undefined || e.pos[0] <= parsed.end);
    if (syntax !== undefined) return refused({ by: 'go', field: '', problem: syntaxProblem(syntax, lines) });
    const inspected = inspectDocument(doc, text, lines);
    if ('problem' in inspected) return refused({ by: 'go', field: '', problem: inspected.problem });
    const unknownKeys = new Map<string, UnknownKey>();
    const pass = (semantics: Semantics): Context => ({
      semantics,
      lines,
      aliases: inspected.aliases,
      keysChecked: new WeakMap(),
      decoded: 0,
      aliased: 0,
      aliasDepth: 0,
      expanding: new Set(),
      problems: [],
      terrors: [],
      unknownKeys,
    });
    const v3 = decoding(doc.contents, type, pass('yaml.v3'));
    const v2 = decoding(doc.contents, type, pass('yaml.v2'));
    const marker = '(yaml.v3 scans two tokens past the marker ending the first document)';
    return { v2, v3: v3Problem === undefined ? v3 : lookedAhead(v3, `${v3Problem} ${marker}`), unknownKeys: [...unknownKeys.values()], more, empty };
  } catch (e) {
    if (e instanceof DecodeFailure) return refused(e.refusal);
    // The parser recurses per nesting level; shapes the pre-checks cannot count (chains of
    // implicit keys inside [ ]) can still exhaust the stack.
    if (e instanceof RangeError) return refused({ by: 'limit', field: '', problem: 'nests too deeply to read' });
    throw e;
  }
}

/**
 * The text to parse: `written` with the characters libyaml's scanner skips (libyaml-bom.ts)
 * read as spaces, or Go's refusal they make. They are found on a first parse without them.
 */
function readSkipping(written: string, leadingBom: boolean): string | Refusal {
  const text = secondBomAsSpace(written, leadingBom);
  if (!bomMayStartBuffer(written, leadingBom)) return text;
  const parsed = parseLikeLibyaml(text, () => new LineCounter());
  const read = 'doc' in parsed && parsed.doc !== undefined ? { ...parsed, doc: parsed.doc } : undefined;
  const scalars = scalarSpans(written);
  const skips = bomSkips(written, leadingBom, scalars);
  if (skips.length === 0) return text;
  if (read === undefined) return rewriteAt(text, skips, 1, ' ');
  const outcome = bomSkipOutcome(skips, written, { ...read, scalars });
  return 'refusal' in outcome ? outcome.refusal : rewriteAt(text, outcome.read, 1, ' ');
}

/** One decoder's pass, with Go's error text. */
function decoding(contents: unknown, type: StructType, ctx: Context): GoDecoding {
  const value = decodePass(contents, type, ctx);
  return value !== undefined ? { value, problems: [] } : { error: goErrorText(ctx), problems: ctx.problems };
}

/** `Unmarshal`'s error: the first problem that stops the decoder at once, else every type error (yaml.go `TypeError`). */
function goErrorText(ctx: Context): string {
  const first = ctx.problems.find((p) => STOPS_AT_ONCE.has(p.kind));
  if (first !== undefined) return `yaml: ${first.message}`;
  return `yaml: unmarshal errors:\n  ${ctx.terrors.join('\n  ')}`;
}

/** yaml.v3's decoding when its scanner's lookahead past the first document meets `message`: refused, that first. */
function lookedAhead(v3: GoDecoding, message: string): GoDecoding {
  const problems: DecodeProblem[] = [{ kind: 'lookahead', field: '', message }, ...v3.problems];
  return { error: `yaml: ${message}`, problems };
}

/**
 * Which decoders meet the control character at `index`: both when it is in the first
 * document (before `end`) or in what yaml.v2's reader decoded, yaml.v3 alone when only its
 * lookahead reached its chunk, none when neither reader decoded it. `bomBytes`: those of a
 * byte order mark before `text`.
 */
function controlCharacterStops(text: string, index: number, reach: Reach, end: number | undefined, bomBytes: number): 'both' | 'v3' | undefined {
  if (end === undefined || index < end || index < decodedCharacters(text, reach.v2, bomBytes)) return 'both';
  return index < decodedCharacters(text, reach.v3, bomBytes) ? 'v3' : undefined;
}

/**
 * The decoding of a text whose first document ends without a marker (libyaml-parse.ts
 * `implicitEnd`): at the start of 0-based `line`, or `rest` characters before that line's
 * end, past a root flow collection. Go reads what stands before; the tokens its scanners
 * fetch there (libyaml-lookahead.ts `scanPastImplicitEnd`) can still stop both, or yaml.v3
 * alone. A control character past it is refused (Go's reader meets it in the chunk it
 * decodes, up to 512 bytes on).
 */
function firstOfImplicitlyEnded(written: string, leadingBom: boolean, line: number, rest: number | undefined, type: StructType): Unmarshalled {
  const lineStart = lineStartOffset(written, line);
  const start = rest === undefined ? lineStart : lineEnd(written, lineStart) - rest;
  const control = forbiddenCharacter(written);
  if (control !== undefined && control.index >= start) return refused({ by: 'go', field: '', problem: control.problem });
  const { v2Problem, v3Problem } = scanPastImplicitEnd(written, start, rest !== undefined);
  if (v2Problem !== undefined) {
    return refused({ by: 'go', field: '', problem: `${v2Problem} (after the end of the first document, where Go's decoders read on to end it)` });
  }
  const first: Unmarshalled = {
    ...unmarshalRead(written.slice(0, start), leadingBom, type),
    more: true,
    dedentLine: line + 1,
    ...(rest !== undefined ? { flowRoot: true } : {}),
  };
  if (v3Problem === undefined || first.v3.value === undefined) return first;
  return { ...first, v3: lookedAhead(first.v3, `${v3Problem} (yaml.v3 scans two tokens past the end of the first document)`) };
}

function refused(refusal: Refusal): Unmarshalled {
  const { go = bothSay(refusal.problem) } = refusal;
  return {
    v2: { error: go['yaml.v2'], problems: [] },
    v3: { error: go['yaml.v3'], problems: [] },
    refused: refusal,
    unknownKeys: [],
    more: false,
    empty: false,
  };
}

/**
 * The parser's error as one line: position, then reason. Its messages quote the document,
 * so what a terminal would interpret is escaped.
 */
function syntaxProblem(error: YAMLParseError, lines: LineCounter): string {
  const { line, col } = lines.linePos(error.pos[0]);
  const reason = error.message.split('\n')[0]!;
  return `not valid YAML: line ${line}, column ${col}: ${truncate(escapeUnprintable(reason))}`;
}
