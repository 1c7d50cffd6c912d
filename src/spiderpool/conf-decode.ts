/**
 * Decodes a YAML document the way Go's `gopkg.in/yaml.v2` v2.4.0 and `gopkg.in/yaml.v3`
 * v3.0.1 decode it (both ports of libyaml, a YAML 1.1 parser), each with plain
 * `yaml.Unmarshal` into the Go struct a `schema.ts` table describes. The `yaml` package
 * parses the text; where it disagrees with libyaml, yaml-go-compat.ts follows libyaml.
 * One walk of the table per decoder then applies that decoder's rules for each Go type
 * (decode.go, resolve.go): bools, ints, strings from any scalar (`!!binary` decoded),
 * lists, mappings, null, merge keys, duplicate keys (yaml.v3 refuses them, yaml.v2 keeps
 * the last). What either refuses is reported, naming the component that would stop
 * (Spiderpool's agent decodes with yaml.v3, its controller with yaml.v2).
 *
 * Keys the struct does not have are skipped unread by both decoders; they are warned
 * about, with the key the struct has when one is close. Why an emulation and not Go's decoders
 * as WebAssembly (+120 MiB RSS, ~77 ms a document): docs/adr/0023-yaml-emulation-not-wasm.md.
 */
import { LineCounter, isAlias, isMap, isScalar, isSeq, type Alias, type Pair, type Scalar, type YAMLMap, type YAMLParseError } from 'yaml';
import { invalid, type FieldError, type FieldWarning } from '../kubernetes/field-errors.js';
import { MAX_INT64 } from '../go/duration-units.js';
import { ADVICE_VALUE_CHARS, escapeShort, escapeUnprintable, quoteGoString, quoteShown, truncate } from '../go/strconv-quote.js';
import { byComponent, type Component, type Stops } from './conf-components.js';
import { asGoBool, asGoInt, resolvePlain, type Resolved, type Semantics } from '../yaml-go/go-scalar.js';
import { zeroStruct, zeroValue, type GoStruct, type GoType, type GoValue, type StructType } from './conf-schema.js';
import { unknownKeyWarning } from './conf-unknown-keys.js';
import { parseLikeLibyaml } from '../yaml-go/libyaml-parse.js';
import { lineEnd, lineStartOffset, trimBlanks } from '../yaml-go/libyaml-chars.js';
import { decodedCharacters, readPastFirstDocument, scanPastImplicitEnd, type Reach } from '../yaml-go/libyaml-lookahead.js';
import { at, forbiddenCharacter, inspectDocument, limitProblem, tabProblem, textProblem } from '../yaml-go/yaml-go-compat.js';

/**
 * Both decoders' decoding of a text's first document (Go's `Unmarshal` reads only that).
 * `agent` (yaml.v3) and `controller` (yaml.v2) hold each decoder's value, when it decodes;
 * `errors` say why a decoder refuses and `stops` which. `more`: another document with
 * content follows; `empty`: the first document is empty or null. `warnings` are keyed
 * by field path (each warned about once).
 */
export interface GoYamlDecoding {
  agent?: GoStruct;
  controller?: GoStruct;
  errors: FieldError[];
  stops: Stops;
  more: boolean;
  empty: boolean;
  warnings: Map<string, FieldWarning>;
  /** The 1-based line the first document ends at without a marker, when it does (libyaml-parse.ts `implicitEnd`). */
  dedentLine?: number;
  /** The first document is a flow collection (`{...}` or `[...]`) that ends on `dedentLine`, with more after it. */
  flowRoot?: boolean;
}

/**
 * Decodes `written` into a value of struct type `type` with both Go decoders. Field paths
 * in errors and warnings are relative to the document (`""` for the whole document,
 * `podResourceInject.namespacesExclude`, ...). Never throws for any input text.
 */
export function decodeGoYaml(written: string, type: StructType): GoYamlDecoding {
  const limit = limitProblem(written);
  if (limit !== undefined) return refused([beyondLimits(limit)]);
  const textRefused = textProblem(written);
  if (textRefused !== undefined) return refused([notDecodable('', textRefused)]);
  let lines = new LineCounter();
  try {
    const parsed = parseLikeLibyaml(written, () => (lines = new LineCounter()));
    if ('dedentLine' in parsed) return firstOfImplicitlyEnded(written, parsed.dedentLine, parsed.rest, type);
    if ('problem' in parsed) {
      // A control character in the first document is what the reader meets first.
      const control = forbiddenCharacter(written);
      const first = control !== undefined && (parsed.end === undefined || control.index < parsed.end);
      if (!first && parsed.unread) return refused([notRead(parsed.problem)]);
      return refused([notDecodable('', first ? control.problem : parsed.problem)]);
    }
    const { doc, more, text } = parsed;
    // Offsets after the first document are those of the written text (padding goes before).
    const end = parsed.end === undefined ? undefined : parsed.end - (text.length - written.length);
    const reach = readPastFirstDocument(written, end);
    const control = forbiddenCharacter(written);
    const controlStops = control === undefined ? undefined : controlCharacterStops(written, control.index, reach, end);
    if (controlStops === 'both') return refused([notDecodable('', control!.problem)]);
    // What yaml.v3 alone meets past the first document.
    const agentProblem = controlStops === 'agent' ? `${control!.problem} past the first document` : reach.v3Problem;
    const warnings = new Map<string, FieldWarning>();
    const empty = doc === undefined || isNull(doc.contents);
    const none = { errors: [], stops: { agent: false, controller: false }, more, empty, warnings };
    const blank = tabProblem(doc, text, lines);
    if (blank !== undefined) return refused([notDecodable('', blank)]);
    if (doc === undefined) return { agent: zeroStruct(type), controller: zeroStruct(type), ...none };
    // Errors past the marker are the yaml package's reading of later documents, which Go does not parse.
    const syntax = doc.errors.find((e) => parsed.end === undefined || e.pos[0] <= parsed.end);
    if (syntax !== undefined) return refused([notDecodable('', syntaxProblem(syntax, lines))]);
    const inspected = inspectDocument(doc, text, lines);
    if ('problem' in inspected) return refused([notDecodable('', inspected.problem)]);
    const pass = (semantics: Semantics): Context => ({
      text,
      lines,
      semantics,
      aliases: inspected.aliases,
      keysChecked: new WeakMap(),
      decoded: 0,
      aliased: 0,
      aliasDepth: 0,
      expanding: new Set(),
      errors: [],
      warnings,
    });
    const v3 = pass('yaml.v3');
    let agent = decodePass(doc.contents, type, v3);
    if (agentProblem !== undefined) {
      v3.errors.unshift({
        field: '',
        node: undefined,
        go: `${agentProblem} (yaml.v3 scans two tokens past the marker ending the first document)`,
        advice: 'remove what follows the first document, or correct it',
      });
      agent = undefined;
    }
    const v2 = pass('yaml.v2');
    const controller = decodePass(doc.contents, type, v2);
    return {
      ...none,
      errors: mergeGoErrors(v3.errors, v2.errors, lines),
      stops: { agent: agent === undefined, controller: controller === undefined },
      ...(agent !== undefined ? { agent } : {}),
      ...(controller !== undefined ? { controller } : {}),
    };
  } catch (e) {
    if (e instanceof DecodeFailure) return refused([e.fieldError]);
    // The parser recurses per nesting level; shapes the pre-checks cannot count (chains of
    // implicit keys inside [ ]) can still exhaust the stack.
    if (e instanceof RangeError) return refused([beyondLimits('nests too deeply to read')]);
    throw e;
  }
}

/**
 * Which decoders meet the control character at `index`: both when it is in the first
 * document (before `end`) or in what yaml.v2's reader decoded, the agent alone when only
 * yaml.v3's lookahead reached its chunk, none when neither reader decoded it.
 */
function controlCharacterStops(text: string, index: number, reach: Reach, end: number | undefined): Component | undefined {
  if (end === undefined || index < end || index < decodedCharacters(text, reach.v2)) return 'both';
  return index < decodedCharacters(text, reach.v3) ? 'agent' : undefined;
}

/**
 * The decoding of a text whose first document ends without a marker (libyaml-parse.ts
 * `implicitEnd`): at the start of 0-based `line`, or `rest` characters before that line's
 * end, past a root flow collection. Go reads what stands before; the tokens its scanners
 * fetch there (libyaml-lookahead.ts `scanPastImplicitEnd`) can still stop both, or the
 * agent alone. A control character past it is refused (Go's reader meets it in the chunk
 * it decodes, up to 512 bytes on).
 */
function firstOfImplicitlyEnded(written: string, line: number, rest: number | undefined, type: StructType): GoYamlDecoding {
  const lineStart = lineStartOffset(written, line);
  const start = rest === undefined ? lineStart : lineEnd(written, lineStart) - rest;
  const control = forbiddenCharacter(written);
  if (control !== undefined && control.index >= start) return refused([notDecodable('', control.problem)]);
  const { v2Problem, v3Problem } = scanPastImplicitEnd(written, start, rest !== undefined);
  if (v2Problem !== undefined) return refused([notDecodable('', `${v2Problem} (after the end of the first document, where Go's decoders read on to end it)`)]);
  const first = { ...decodeGoYaml(written.slice(0, start), type), more: true, dedentLine: line + 1, ...(rest !== undefined ? { flowRoot: true } : {}) };
  if (v3Problem === undefined || first.agent === undefined) return first;
  const { agent: _, ...controllerOnly } = first;
  const why = `${v3Problem} (yaml.v3 scans two tokens past the end of the first document), so ${DECODE_STOPS.agent}; remove what follows the first document, or correct it`;
  return { ...controllerOnly, errors: [invalid('', undefined, why), ...first.errors], stops: { ...first.stops, agent: true } };
}

function refused(errors: FieldError[]): GoYamlDecoding {
  return { errors, stops: { agent: true, controller: true }, more: false, empty: false, warnings: new Map() };
}

/** The decoders' plain-scalar spellings of null (YAML 1.1 and 1.2 core schemas agree). */
const NULL_SPELLINGS = new Set(['', '~', 'null', 'Null', 'NULL']);
const NULL_TAG = 'tag:yaml.org,2002:null';
const MERGE_TAG = 'tag:yaml.org,2002:merge';
const BINARY_TAG = 'tag:yaml.org,2002:binary';

/**
 * Values one decoder's pass decodes (each key and value, each alias followed) before this
 * webhook gives up: aliases and merge keys can make a 64 KiB file decode billions. The Go
 * decoders count the same (decode.go `decodeCount`) and give up on "excessive aliasing"
 * only past 400 000 with nearly all of them aliases, so this is this webhook's limit.
 */
const MAX_DECODED_VALUES = 100_000;
/** Earlier occurrences of a repeated key named in its errors (the response shows 16 causes anyway). */
const MAX_DUPLICATES_NAMED = 16;
/** Merge keys inside merged mappings, at most this deep (the recursion stays shallow). */
const MAX_MERGE_DEPTH = 64;

/** Both decoders refusing the document; carries the field error to report. */
class DecodeFailure extends Error {
  constructor(readonly fieldError: FieldError) {
    super(fieldError.detail);
  }
}

/**
 * Errors one decoder's pass collects before it stops: the decoder already refuses the
 * document, the response lists 16 causes, and a hostile file of thousands of repeated keys
 * must not cost seconds.
 */
const MAX_ERRORS_PER_PASS = 32;

/** Ends a pass that has found {@link MAX_ERRORS_PER_PASS} errors. */
class PassFull extends Error {}

/** Records a decoder's error; ends the pass once it has enough. */
function report(ctx: Context, error: GoError): void {
  ctx.errors.push(error);
  if (ctx.errors.length >= MAX_ERRORS_PER_PASS) throw new PassFull();
}

/** Runs one decoder's pass over the document: its reading, or `undefined` when it refuses it. */
function decodePass(contents: unknown, type: StructType, ctx: Context): GoStruct | undefined {
  try {
    const conf = decodeValue(contents, type, '', ctx, undefined) as GoStruct;
    return ctx.errors.length === 0 ? conf : undefined;
  } catch (e) {
    if (e instanceof PassFull) return undefined;
    throw e;
  }
}

/** One decoder's refusal of one value: Go's message (without its `line N: `) and what to write instead. */
interface GoError {
  field: string;
  node: unknown;
  go: string;
  badValue?: string;
  advice: string;
}

interface Context {
  text: string;
  lines: LineCounter;
  semantics: Semantics;
  /** Each alias resolved once, to the nearest anchor of that name before it. */
  aliases: Map<Alias, unknown>;
  /** Mappings whose keys were checked in this pass: whether a key is written twice. */
  keysChecked: WeakMap<YAMLMap, boolean>;
  /** Values decoded so far in this pass (see {@link MAX_DECODED_VALUES}), and of them through aliases. */
  decoded: number;
  aliased: number;
  /** Aliases being followed now. */
  aliasDepth: number;
  expanding: Set<YAMLMap>;
  errors: GoError[];
  /** Shared by both passes, by field path: each warned about once. */
  warnings: Map<string, FieldWarning>;
}

const AGENT = "Spiderpool's agent (gopkg.in/yaml.v3)";
const CONTROLLER = "Spiderpool's controller (gopkg.in/yaml.v2)";

/** Who stops, in a decode error. */
const DECODE_STOPS: Readonly<Record<Component, string>> = {
  both: "Spiderpool's agent (gopkg.in/yaml.v3) and controller (gopkg.in/yaml.v2) refuse to start",
  agent: `${AGENT} refuses to start (its controller reads it)`,
  controller: `${CONTROLLER} refuses to start (its agent reads it)`,
};

/** One field error per Go message and place, naming the components it stops. */
function mergeGoErrors(v3: GoError[], v2: GoError[], lines: LineCounter): FieldError[] {
  return byComponent(
    v3,
    v2,
    (e) => `${e.field}\n${e.go}\n${at(e.node, lines)}`,
    // Go's messages and the field paths hold keys and values as written, which quoted
    // escapes (`"\e[31m"`) can fill with controls: escaped, so a cause stays one harmless line.
    (e, stops) =>
      invalid(
        escapeUnprintable(e.field),
        e.badValue,
        `${at(e.node, lines)}${escapeUnprintable(e.go)}, so ${DECODE_STOPS[stops]}; ${escapeUnprintable(e.advice)}`,
      ),
  );
}

/**
 * The parser's error as one line: position, then reason. Its messages quote the document,
 * so what a terminal would interpret is escaped.
 */
function syntaxProblem(error: YAMLParseError, lines: LineCounter): string {
  const { line, col } = lines.linePos(error.pos[0]);
  const where = `line ${line}, column ${col}: `;
  const reason = error.message.split('\n')[0]!;
  return `not valid YAML: ${where}${truncate(escapeUnprintable(reason))}`;
}

function notDecodable(field: string, why: string): FieldError {
  return invalid(field, undefined, `${why}; Spiderpool's agent and controller cannot decode it and refuse to start: correct conf.yml and apply it again`);
}

/** Text Go's decoders read and this webhook does not read as they do: refused by this webhook, not by Go. */
function notRead(why: string): FieldError {
  return invalid(
    '',
    undefined,
    `${why}: refused by this webhook's own limit, not by Spiderpool, whose decoders read the character; write a line break (or a space) instead of it`,
  );
}

/** A refusal by this webhook's own limits (yaml-go-compat.ts `limitProblem`), not by Go. */
function beyondLimits(why: string): FieldError {
  return invalid(
    '',
    undefined,
    `${why}: this webhook's own limit against hostile input, not Spiderpool's (whose configuration is a few KiB, six levels deep); shorten conf.yml`,
  );
}

/**
 * The entries of a mapping in the order the decoder applies them (later ones override),
 * with merge keys (`<<`) expanded.
 * - yaml.v2 applies entries in document order, a merge where it stands: an explicit key
 *   written before `<<` is overridden by the merged value.
 * - yaml.v3 lets explicit keys win wherever they stand (the YAML merge spec).
 * In a `<<: [*a, *b]` list both let the earlier mapping win.
 */
function entries(map: YAMLMap, field: string, ctx: Context, semantics: Semantics, aliased = false): Entry[] {
  if (ctx.expanding.has(map)) {
    throw new DecodeFailure(notDecodable('', `${at(map, ctx.lines)}an anchor's value contains itself`));
  }
  if (ctx.expanding.size > MAX_MERGE_DEPTH) {
    throw new DecodeFailure(beyondLimits(`merge keys (<<) nest more than ${MAX_MERGE_DEPTH} deep`));
  }
  // yaml.v3 decodes nothing of a mapping with a key written twice (decode.go `mapping`).
  if (checkKeys(map, field, ctx) && semantics === 'yaml.v3') return [];
  // The mapping and each key, as Go decodes them (merged ones again for each merge).
  spend(ctx, map.items.length + 1, aliased);
  ctx.expanding.add(map);
  try {
    const own = map.items.map((pair): Entry => (aliased ? { key: pair.key, value: pair.value, aliased } : pair));
    return semantics === 'yaml.v2' ? entriesInDocumentOrder(own, field, ctx, aliased) : entriesExplicitFirst(own, field, ctx, aliased);
  } finally {
    ctx.expanding.delete(map);
  }
}

/** A mapping entry, `aliased` when decoded through an alias (Go counts those apart). */
type Entry = Pick<Pair, 'key' | 'value'> & { aliased?: boolean };

function entriesInDocumentOrder(items: Entry[], field: string, ctx: Context, aliased: boolean): Entry[] {
  const out: Entry[] = [];
  for (const pair of items) {
    if (!isMergeKey(pair, ctx)) out.push(pair);
    else for (const source of mergeSources(pair, ctx).reverse()) out.push(...entries(source.map, field, ctx, 'yaml.v2', aliased || source.aliased));
  }
  return out;
}

function entriesExplicitFirst(items: Entry[], field: string, ctx: Context, aliased: boolean): Entry[] {
  const explicit = items.filter((pair) => !isMergeKey(pair, ctx));
  const taken = new Set(explicit.map((pair) => keyText(pair, ctx)));
  const merged: Entry[] = [];
  for (const pair of items.filter((item) => isMergeKey(item, ctx))) {
    for (const source of mergeSources(pair, ctx)) {
      for (const entry of entries(source.map, field, ctx, 'yaml.v3', aliased || source.aliased)) {
        const key = keyText(entry, ctx);
        if (taken.has(key)) continue;
        taken.add(key);
        merged.push(entry);
      }
    }
  }
  return [...merged, ...explicit];
}

/** The mappings a `<<` value names (one mapping, or a sequence of mappings), each `aliased` when named by an alias. */
function mergeSources(pair: Entry, ctx: Context): Array<{ map: YAMLMap; aliased: boolean }> {
  const value = deref(pair.value, ctx);
  const items = isSeq(value) ? value.items : [pair.value];
  return items.map((written) => {
    const item = deref(written, ctx);
    if (!isMap(item)) {
      throw new DecodeFailure(notDecodable('', `${at(item, ctx.lines)}a merge key (<<) must name a mapping or a list of mappings`));
    }
    return { map: item, aliased: isAlias(written) || isAlias(pair.value) };
  });
}

/**
 * A merge key as Go's `isMerge` sees it: the text `<<` tagged `!!merge` in any style, or
 * plain and untagged or tagged `!`; yaml.v2 also takes `!` on a quoted or block `<<`
 * (parserc.go makes a scalar tagged "!" plain-implicit whatever its style; yaml.v3 gives a
 * quoted one !!str).
 */
function isMergeKey(pair: Entry, ctx: Context): boolean {
  const key = pair.key;
  if (!isScalar(key) || scalarText(key) !== '<<') return false;
  const tag = tagOf(key, ctx.semantics);
  if (tag === MERGE_TAG) return true;
  if (tag !== undefined && tag !== '!') return false;
  return key.type === 'PLAIN' || (tag === '!' && ctx.semantics === 'yaml.v2');
}

/**
 * A node's tag as one decoder compares it: yaml.v3 takes the spelling `!!x` (a verbatim
 * `!<!!x>`, a %TAG prefix `!!`) for `tag:yaml.org,2002:x`, as its yaml.go `shortTag`
 * writes both alike; yaml.v2 compares the long form only, so `!!x` is a tag of its own.
 */
function tagOf(node: { tag?: string }, semantics: Semantics): string | undefined {
  return semantics === 'yaml.v3' && node.tag?.startsWith('!!') ? `tag:yaml.org,2002:${node.tag.slice(2)}` : node.tag;
}

/** The field name a key decodes to (an alias is followed, `!!binary` decoded); `undefined` for a null key. */
function keyText(pair: Entry, ctx: Context): string | undefined {
  const key = deref(pair.key, ctx);
  return isScalar(key) && !isNull(key, ctx.semantics) ? binaryDecoded(key, scalarText(key), ctx) : undefined;
}

/**
 * A scalar's text as a Go string: for `!!binary`, its base64 decoded as both decoders do
 * (`base64.StdEncoding`, which skips CR and LF; bytes that are not UTF-8 become U+FFFD, as
 * Go's JSON shows them). Invalid base64 stops both ("!!binary value contains invalid base64 data").
 */
function binaryDecoded(node: Scalar, text: string, ctx: Context): string {
  if (tagOf(node, ctx.semantics) !== BINARY_TAG) return text;
  const decoded = goBase64(text);
  if (decoded === undefined && node.tag !== BINARY_TAG) {
    // Spelt `!!binary` (a verbatim `!<!!binary>`): yaml.v3 alone decodes it, and fails.
    report(ctx, { field: '', node, go: '!!binary value contains invalid base64 data', advice: 'write valid base64 or remove the tag' });
    return text;
  }
  if (decoded === undefined) {
    throw new DecodeFailure(notDecodable('', `${at(node, ctx.lines)}!!binary value contains invalid base64 data`));
  }
  return decoded;
}

/**
 * The keys of a mapping the decoders decode: each is decoded into a string, so a mapping
 * or sequence cannot be one (an empty key without properties, `: x`, is refused as
 * libyaml's syntax error before: libyaml-parse.ts); and yaml.v3 refuses a key written twice ("mapping key already
 * defined"), comparing keys of the same kind as written (an alias by its anchor's name,
 * so `&x a` and `*x` differ), merge keys included.
 *
 * @returns whether a key is written twice (then yaml.v3 decodes nothing of the mapping).
 */
function checkKeys(map: YAMLMap, field: string, ctx: Context): boolean {
  const checked = ctx.keysChecked.get(map);
  if (checked !== undefined) return checked;
  let repeated = false;
  const seen = new Map<string, unknown[]>();
  for (const pair of map.items) {
    const key = deref(pair.key, ctx);
    if (isMap(key) || isSeq(key)) {
      throw new DecodeFailure(notDecodable('', `${at(key, ctx.lines)}has a ${isMap(key) ? 'mapping' : 'sequence'} as a key`));
    }
    if (!isScalar(key)) continue;
    const merge = isMergeKey(pair, ctx);
    // A key is decoded into a string first: a standard tag it does not satisfy fails.
    if (!merge && key.tag !== undefined) resolveScalar(key, scalarText(key), joinField(field, scalarText(key)), ctx);
    // yaml.v3 refuses a key written twice (two `<<` included): same kind (alias or scalar)
    // and same text as written (an alias by its anchor's name).
    const name = merge ? '<<' : scalarText(key);
    const written = isAlias(pair.key) ? `alias:${pair.key.source}` : `scalar:${name}`;
    const earlier = seen.get(written) ?? [];
    if (ctx.semantics === 'yaml.v3') {
      // It compares every key with every later one: each earlier occurrence is named.
      for (const first of earlier.slice(0, MAX_DUPLICATES_NAMED)) {
        const shown = isAlias(pair.key) ? pair.key.source : name;
        report(ctx, {
          field: joinField(field, shown),
          node: pair.key,
          go: `mapping key ${quoteGoString(shown)} already defined at line ${ctx.lines.linePos(rangeStart(first)).line}`,
          advice: `write ${shown} once in this mapping (the controller keeps the last, the agent refuses both)`,
        });
      }
    }
    repeated ||= earlier.length > 0;
    earlier.push(pair.key);
    seen.set(written, earlier);
  }
  ctx.keysChecked.set(map, repeated);
  return repeated;
}

function rangeStart(node: unknown): number {
  return (node as { range?: [number, number, number] }).range?.[0] ?? 0;
}

/**
 * Counts `n` decoded values (`aliased`: decoded through an alias) as Go's decoders count
 * them (decode.go `decodeCount`, `aliasCount`): past 1 000, with over 100 through aliases
 * and more of them than `allowedAliasRatio` allows, both fail with "document contains
 * excessive aliasing". Past {@link MAX_DECODED_VALUES} this webhook gives up.
 */
function spend(ctx: Context, n: number, aliased: boolean): void {
  ctx.decoded += n;
  if (aliased || ctx.aliasDepth > 0) ctx.aliased += n;
  if (ctx.aliased > 100 && ctx.decoded > 1_000 && ctx.aliased / ctx.decoded > allowedAliasRatio(ctx.decoded)) {
    throw new DecodeFailure(notDecodable('', 'document contains excessive aliasing'));
  }
  if (ctx.decoded > MAX_DECODED_VALUES) {
    throw new DecodeFailure(beyondLimits(`decoding it reads more than ${MAX_DECODED_VALUES} values (aliases and merge keys, <<, repeat what they name)`));
  }
}

/** yaml.v3 decode.go `allowedAliasRatio` (yaml.v2 has the same): 0.99 up to 400 000 decoded values, down to 0.1 at 4 000 000. */
function allowedAliasRatio(decoded: number): number {
  if (decoded <= 400_000) return 0.99;
  if (decoded >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decoded - 400_000) / 3_600_000);
}

/** `a.b` for a struct field or map key under `a`; `b` at the top. */
export function joinField(field: string, key: string): string {
  return field === '' ? key : `${field}.${key}`;
}

function deref(node: unknown, ctx: Context): unknown {
  return isAlias(node) ? ctx.aliases.get(node) : node;
}

/** Whether yaml.v3 can set a value of this type to null (decode.go `null`: pointers, maps, slices; conf.yml has no pointers). */
function nilable(type: GoType): boolean {
  return type.go === 'map' || type.go === 'slice';
}

/** A null as the decoders resolve it: a missing node, a plain null spelling, or `!!null` on one (as `semantics` compares tags). */
function isNull(node: unknown, semantics: Semantics = 'yaml.v2'): boolean {
  if (node === null || node === undefined) return true;
  if (!isScalar(node) || !NULL_SPELLINGS.has(String(node.value))) return false;
  return tagOf(node, semantics) === NULL_TAG || (node.tag === undefined && node.type === 'PLAIN');
}

/** Whether a value the decoders decode is null; `!!null` on other text fails ("cannot decode !!str `50s` as a !!null"). */
function decodesToNull(node: unknown, field: string, ctx: Context): boolean {
  if (isScalar(node) && tagOf(node, ctx.semantics) === NULL_TAG && !isNull(node, ctx.semantics)) {
    if (node.tag === NULL_TAG) throw tagFailure(field, node, ctx);
    // Spelt `!!null` (a verbatim `!<!!null>`): yaml.v3 alone reads it as !!null, and fails.
    const text = scalarText(node);
    report(ctx, { field, node, go: `cannot decode ${goTag(node, text, ctx)} \`${text}\` as a !!null`, advice: 'remove the tag' });
    return true;
  }
  // yaml.v3 reads the non-specific tag `!` as no tag; yaml.v2 keeps `! ~` the string "~".
  if (ctx.semantics === 'yaml.v3' && isNonSpecific(node)) return NULL_SPELLINGS.has(String((node as Scalar).value));
  return isNull(node, ctx.semantics);
}

/** A plain scalar tagged `!`: yaml.v3 resolves it as untagged, yaml.v2 leaves it an unresolved string tagged `!`. */
function isNonSpecific(node: unknown): boolean {
  return isScalar(node) && node.tag === '!' && node.type === 'PLAIN';
}

/**
 * Decodes `node` into a value of Go type `type` as the pass's decoder does, recording
 * what it refuses in `ctx.errors` and going on, as both decoders do with type errors.
 * `existing` is what the field holds already: a mapping decodes into an existing struct
 * or map field by field (a key repeated, or brought in again by a merge).
 *
 * @returns the field's new value, or `existing` when the decoder refuses the node.
 */
function decodeValue(node: unknown, type: GoType, field: string, ctx: Context, existing: GoValue | undefined, aliased = false): GoValue {
  spend(ctx, 1, aliased);
  if (isAlias(node) || aliased) {
    ctx.aliasDepth++;
    try {
      return decodeResolved(deref(node, ctx), type, field, ctx, existing);
    } finally {
      ctx.aliasDepth--;
    }
  }
  return decodeResolved(node, type, field, ctx, existing);
}

function decodeResolved(value: unknown, type: GoType, field: string, ctx: Context, existing: GoValue | undefined): GoValue {
  if (decodesToNull(value, field, ctx)) return zeroValue(type);
  switch (type.go) {
    case 'struct':
    case 'map': {
      // Tags on a mapping are ignored by both decoders, `!!null` too: it decodes into a
      // struct or map (not a pointer, which conf.yml's struct has none of).
      if (!isMap(value)) return refuse(field, value, type, ctx, existing);
      return type.go === 'struct'
        ? decodeStruct(value, type, field, ctx, (existing as GoStruct | null | undefined) ?? zeroStruct(type))
        : decodeMap(value, field, ctx, (existing as GoStruct | null | undefined) ?? Object.create(null));
    }
    case 'slice': {
      if (!isSeq(value)) return refuse(field, value, type, ctx, existing);
      const out: GoValue[] = [];
      value.items.forEach((item, i) => {
        // yaml.v3 leaves a null out of a slice of values that cannot be nil (decode.go
        // `null` is false for them, and `sequence` keeps only what decoded); yaml.v2 keeps the zero value.
        if (ctx.semantics === 'yaml.v3' && !nilable(type.of) && decodesToNull(deref(item, ctx), `${field}[${i}]`, ctx)) return;
        const before = ctx.errors.length;
        const element = decodeValue(item, type.of, `${field}[${i}]`, ctx, undefined);
        // A refused element is left out of the slice, as decode.go `sequence` does.
        if (ctx.errors.length === before) out.push(element);
      });
      return out;
    }
    case 'string':
      if (!isScalar(value)) return refuse(field, value, type, ctx, existing);
      return stringValue(value, field, ctx);
    case 'bool':
    case 'int': {
      if (!isScalar(value)) return refuse(field, value, type, ctx, existing);
      const text = scalarText(value);
      const resolved = resolveScalar(value, text, field, ctx);
      if (resolved === undefined) return existing ?? zeroValue(type);
      const got = type.go === 'bool' ? asGoBool(resolved, text, ctx.semantics) : asGoInt(resolved);
      return got ?? refuse(field, value, type, ctx, existing, resolved.tag);
    }
  }
}

/**
 * A mapping into a struct, field by field. yaml.v3 also refuses a field its keys set twice
 * when they are written differently (an alias key, a `!!binary` key; decode.go
 * `mappingStruct`: "field X already set in type T"); keys merged in do not count.
 */
function decodeStruct(map: YAMLMap, type: StructType, field: string, ctx: Context, out: GoStruct): GoStruct {
  const explicit = new Set<unknown>(map.items);
  const done = new Set<string>();
  for (const pair of entries(map, field, ctx, ctx.semantics)) {
    const key = keyText(pair, ctx) ?? '';
    const fieldType = Object.hasOwn(type.fields, key) ? type.fields[key] : undefined;
    if (fieldType === undefined) {
      const warning = unknownKeyWarning(key, field, type);
      if (!ctx.warnings.has(warning.field)) ctx.warnings.set(warning.field, warning);
      continue;
    }
    if (ctx.semantics === 'yaml.v3' && explicit.has(pair)) {
      if (done.has(key)) {
        report(ctx, {
          field: joinField(field, key),
          node: pair.key,
          go: `field ${key} already set in type ${type.name}`,
          advice: `set ${key} once in this mapping (the controller keeps the last, the agent refuses both)`,
        });
        continue;
      }
      done.add(key);
    }
    out[key] = decodeValue(pair.value, fieldType, joinField(field, key), ctx, out[key], pair.aliased);
  }
  return out;
}

/** A `map[string]string` (a selector's `matchlabels`): keys as strings, values as strings. */
function decodeMap(map: YAMLMap, field: string, ctx: Context, out: GoStruct): GoStruct {
  for (const pair of entries(map, field, ctx, ctx.semantics)) {
    const written = keyText(pair, ctx);
    // A null key decodes into a string key as "" in yaml.v2; yaml.v3 skips the entry (decode.go `mapping`).
    if (written === undefined && ctx.semantics === 'yaml.v3') continue;
    const key = written ?? '';
    out[key] = decodeValue(pair.value, { go: 'string' }, `${field}[${key}]`, ctx, out[key], pair.aliased);
  }
  return out;
}

/** A scalar's text as the decoders see it (the failsafe schema still makes a Date of !!timestamp, bytes of !!binary). */
function scalarText(node: Scalar): string {
  return typeof node.value === 'string' ? node.value : (node.source ?? String(node.value));
}

/**
 * Resolves a scalar as `decoder.scalar` does before storing it (resolve.go `resolve`, for
 * every scalar either decoder decodes: keys, strings, bools, ints): quoted and block
 * scalars are strings; plain ones resolve by their text (yaml.v2 reads YAML 1.1's
 * yes/on/y words as bools, yaml.v3 does not); a standard tag (`!!bool`, `!!int`,
 * `!!float`, `!!null`, `!!timestamp`) resolves the text, quoted or not, and must match
 * it, else the decoder fails ("cannot decode !!str `yes` as a !!bool": yaml.v3 alone for
 * `!!bool yes`); `!!float` takes an int64; `!!str` and other tags leave the text a string.
 *
 * @returns the resolution, or `undefined` after recording the decoder's failure.
 */
function resolveScalar(node: Scalar, text: string, field: string, ctx: Context): Resolved | undefined {
  if (ctx.semantics === 'yaml.v2' && isNonSpecific(node)) return { tag: '!!str' };
  const tag = node.tag === undefined || node.tag === '!' ? undefined : tagOf(node, ctx.semantics)!;
  if (tag === undefined) return node.type === 'PLAIN' ? resolvePlain(text, ctx.semantics) : { tag: '!!str' };
  const short = tag.replace(/^tag:yaml\.org,2002:/, '!!');
  // `!!binary` (its base64 checked first) and `!!merge` resolve to strings of their own tag.
  if (tag === BINARY_TAG || tag === MERGE_TAG) {
    binaryDecoded(node, text, ctx);
    return { tag: tag === BINARY_TAG ? '!!binary' : '!!merge' };
  }
  if (!RESOLVED_TAGS.has(short) || short === tag) return { tag: '!!str' };
  const resolved = resolvePlain(text, ctx.semantics, short === '!!timestamp');
  if (resolved.tag === short) return resolved;
  // A uint64 beyond int64 is no int64 and fails as a !!float.
  if (short === '!!float' && resolved.tag === '!!int' && resolved.value <= MAX_INT64) return { tag: '!!float', value: Number(resolved.value) };
  report(ctx, {
    field,
    node,
    go: `cannot decode ${resolved.tag} \`${text}\` as a ${short}`,
    advice: 'remove the tag',
  });
  return undefined;
}

/** The tags `resolve` checks the text against (`!!str` takes any text). */
const RESOLVED_TAGS = new Set(['!!bool', '!!int', '!!float', '!!null', '!!timestamp']);

/**
 * Records the decoder's type error for `node` (decode.go `terror`: "cannot unmarshal
 * !!str `true` into bool", values over 10 bytes cut to 7 and "...") and what to write.
 */
function refuse(field: string, node: unknown, type: GoType, ctx: Context, existing: GoValue | undefined, resolvedTag?: string): GoValue {
  let shown = '';
  let tag: string;
  let badValue: string | undefined;
  if (isMap(node) || isSeq(node)) tag = isMap(node) ? '!!map' : '!!seq';
  else {
    const scalar = node as Scalar;
    const text = scalarText(scalar);
    badValue = text;
    tag =
      ctx.semantics === 'yaml.v2' && isNonSpecific(scalar)
        ? '!'
        : scalar.tag !== undefined && scalar.tag !== '!'
          ? scalar.tag.replace(/^tag:yaml\.org,2002:/, '!!')
          : (resolvedTag ?? goTag(scalar, text, ctx));
    const bytes = Buffer.from(text, 'utf8');
    shown = ` \`${bytes.length > 10 ? `${bytes.subarray(0, 7).toString('utf8')}...` : text}\``;
  }
  const typeName = type.go === 'bool' || type.go === 'int' ? type.go : type.go === 'string' ? (type.name ?? 'string') : type.name;
  const advice = tag === '!' ? 'remove the "!" tag, which makes the value a string for the controller' : adviceFor(type, node, badValue);
  report(ctx, { field, node, go: `cannot unmarshal ${tag}${shown} into ${typeName}`, badValue, advice });
  return existing ?? zeroValue(type);
}

/** The tag Go gives a scalar in its messages: `!!str` for quoted text, else its resolution. */
function goTag(node: Scalar, text: string, ctx: Context): string {
  return node.type === 'PLAIN' ? resolvePlain(text, ctx.semantics).tag : '!!str';
}

/** What to write instead of a value of the wrong shape. */
function adviceFor(type: GoType, node: unknown, text: string | undefined): string {
  const wrote = isMap(node) ? 'a mapping' : isSeq(node) ? 'a list' : undefined;
  switch (type.go) {
    case 'bool':
      return text !== undefined && /^(true|false|yes|no|on|off|y|n)$/i.test(trimBlanks(text))
        ? `write ${/^(true|yes|on|y)$/i.test(trimBlanks(text)) ? 'true' : 'false'} without quotes`
        : 'write true or false, without quotes';
    case 'int':
      return text !== undefined && /^[-+]?[0-9][0-9_]*$/.test(trimBlanks(text)) && trimBlanks(text).length > 18
        ? 'write a whole number between -9223372036854775808 and 9223372036854775807'
        : 'write a whole number without quotes, such as 10';
    case 'string':
      return `write a single value${wrote ? `, not ${wrote}` : ''} (quote it if it contains ": " or " #")`;
    case 'slice':
      return text !== undefined && type.of.go === 'string'
        ? `write a list: [${escapeShort(text, ADVICE_VALUE_CHARS)}]`
        : `write a list${type.of.go === 'struct' ? ' of mappings ("- key: value" items)' : ' ("- item" lines or [a, b])'}`;
    case 'map':
      return 'write a mapping of label keys to values, such as {kubernetes.io/os: linux}';
    case 'struct':
      return `write a mapping of its fields (indented "key: value" lines), or remove the key`;
  }
}

/**
 * A Go `string` field: a scalar's text, once the decoder has resolved it
 * ({@link resolveScalar}: a standard tag the text does not satisfy fails that decoder);
 * `!!binary` is base64-decoded, other tags leave the text as written.
 */
function stringValue(value: Scalar, field: string, ctx: Context): string {
  const text = scalarText(value);
  if (value.tag !== undefined) resolveScalar(value, text, field, ctx);
  return binaryDecoded(value, text, ctx);
}

/** Go's `base64.StdEncoding.DecodeString`: padded standard alphabet, CR and LF skipped; `undefined` when invalid. */
function goBase64(text: string): string | undefined {
  const data = text.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(data)) return undefined;
  return new TextDecoder('utf-8').decode(Buffer.from(data, 'base64'));
}
function tagFailure(field: string, node: { tag?: string }, ctx: Context): DecodeFailure {
  const tag = (node.tag ?? '').replace(/^tag:yaml\.org,2002:/, '!!');
  return new DecodeFailure(
    notDecodable(field, `${at(node, ctx.lines)}is tagged ${quoteShown(tag)}, which Spiderpool's decoders do not read as written; remove the tag`),
  );
}
