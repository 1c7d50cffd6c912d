/**
 * Reads the `iaasNetworkProvider` block of Spiderpool's `conf.yml` the way Spiderpool's
 * own Go decoders read it: the controller with `gopkg.in/yaml.v2`, the agent with
 * `gopkg.in/yaml.v3`. Both must start, so a document either decoder refuses, or that the
 * two read to different values, is reported as an error.
 *
 * Scalars are read as text (the `failsafe` schema): both Go decoders store a scalar's text
 * in a `string` field whatever it looks like (`50` → "50", `yes` → "yes"), and a null
 * (`~`, `null`, empty) as "".
 */
import {
  Composer,
  LineCounter,
  Parser,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Alias,
  type Document,
  type Pair,
  type YAMLMap,
  type YAMLParseError,
} from 'yaml';
import { invalid, type FieldError } from '../field/errors.js';
import { escapeUnprintable, quoteShown, truncate } from '../field/quote.js';
import { at, inspectDocument, limitProblem, textProblem } from './yaml-go-compat.js';

/** The provider settings as Spiderpool decodes them: "" when absent or null. */
export interface ProviderSettings {
  serverUrl: string;
  httpRequestTimeout: string;
}

/** Either the one reading both decoders agree on, or why they cannot start. */
export type ConfYmlReading =
  | { ok: true; provider: ProviderSettings }
  | { ok: false; errors: FieldError[] };

const PROVIDER_KEY = 'iaasNetworkProvider';
const SETTING_KEYS = ['serverUrl', 'httpRequestTimeout'] as const;

/** The decoders' plain-scalar spellings of null (YAML 1.1 and 1.2 core schemas agree). */
const NULL_SPELLINGS = new Set(['', '~', 'null', 'Null', 'NULL']);
const NULL_TAG = 'tag:yaml.org,2002:null';
const MERGE_TAG = 'tag:yaml.org,2002:merge';
const STR_TAG = 'tag:yaml.org,2002:str';

/**
 * Mappings and entries visited while expanding merge keys before giving up. The Go
 * decoders give up on "excessive aliasing" once over 1 000 decoded nodes are 99% alias
 * expansion (yaml.v3 decode.go `allowedAliasRatio`): a few nested `<<: [*a, *a, ...]`.
 */
const MAX_EXPANDED_ENTRIES = 1_000;
/** Merge keys inside merged mappings, at most this deep (the recursion stays shallow). */
const MAX_MERGE_DEPTH = 64;

/** A decoder refusing the document; carries the field error to report. */
class DecodeFailure extends Error {
  constructor(readonly fieldError: FieldError) {
    super(fieldError.detail);
  }
}

type Semantics = 'yaml.v2' | 'yaml.v3';

interface Context {
  text: string;
  lines: LineCounter;
  /** Each alias resolved once, to the nearest anchor of that name before it. */
  aliases: Map<Alias, unknown>;
  /** Mappings whose keys were checked, shared by both decoders' passes. */
  keysChecked: WeakSet<YAMLMap>;
  budget: number;
  expanding: Set<YAMLMap>;
}

/**
 * Reads `conf.yml` text.
 *
 * @returns `{ok: true, provider}` with the settings both decoders read, or `{ok: false,
 *   errors}` with field errors whose paths are relative to the document
 *   (`""` for the whole document, `iaasNetworkProvider.httpRequestTimeout`, ...).
 *   Never throws for any input text.
 */
export function readConfYml(text: string): ConfYmlReading {
  const limit = limitProblem(text);
  if (limit !== undefined) return { ok: false, errors: [beyondLimits(limit)] };
  const textRefused = textProblem(text);
  if (textRefused !== undefined) return { ok: false, errors: [notDecodable('', textRefused)] };
  const lines = new LineCounter();
  try {
    const doc = firstDocument(text, lines);
    if (doc === undefined) return { ok: true, provider: emptySettings() };
    const syntax = doc.errors[0];
    if (syntax !== undefined) return { ok: false, errors: [notDecodable('', syntaxProblem(syntax, lines))] };
    const inspected = inspectDocument(doc, text, lines);
    if ('problem' in inspected) return { ok: false, errors: [notDecodable('', inspected.problem)] };
    const keysChecked = new WeakSet<YAMLMap>();
    const ctx = (): Context => ({ text, lines, aliases: inspected.aliases, keysChecked, budget: MAX_EXPANDED_ENTRIES, expanding: new Set() });
    const v3 = decode(doc.contents, ctx(), 'yaml.v3');
    const v2 = decode(doc.contents, ctx(), 'yaml.v2');
    const disagreements = SETTING_KEYS.filter((k) => v2[k] !== v3[k]).map((k) =>
      invalid(
        `${PROVIDER_KEY}.${k}`,
        undefined,
        `Spiderpool's controller (gopkg.in/yaml.v2) reads ${quoteShown(v2[k])} but its agent ` +
          `(gopkg.in/yaml.v3) reads ${quoteShown(v3[k])}: the two order merge keys (<<) ` +
          `differently; set ${k} once, outside any merge`,
      ),
    );
    return disagreements.length > 0 ? { ok: false, errors: disagreements } : { ok: true, provider: v3 };
  } catch (e) {
    if (e instanceof DecodeFailure) return { ok: false, errors: [e.fieldError] };
    // The parser recurses per nesting level; shapes the pre-checks cannot count (chains of
    // implicit keys inside [ ]) can still exhaust the stack.
    if (e instanceof RangeError) return { ok: false, errors: [beyondLimits('nests too deeply to read')] };
    throw e;
  }
}

/**
 * The first document of the stream, composed without looking further: Go's Unmarshal
 * reads only the first document. Duplicate keys are not checked here: the `yaml`
 * package's check is quadratic, and the decoders check only the mappings they decode
 * (see `checkKeys`).
 */
function firstDocument(text: string, lines: LineCounter): Document.Parsed | undefined {
  // The parser builds one error per bad token; without stack traces that is a third of the
  // time for hostile text, and only the first error is ever shown.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const composer = new Composer({ schema: 'failsafe', merge: false, uniqueKeys: false });
    const tokens = new Parser(lines.addNewLine).parse(text);
    for (const doc of composer.compose(tokens, false, text.length)) return doc;
    return undefined;
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
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

function emptySettings(): ProviderSettings {
  return { serverUrl: '', httpRequestTimeout: '' };
}

function notDecodable(field: string, why: string): FieldError {
  return invalid(
    field,
    undefined,
    `${why}; Spiderpool's agent and controller cannot decode it and refuse to start: correct conf.yml and apply it again`,
  );
}

/** A refusal by this webhook's own limits (yaml-go-compat.ts `limitProblem`), not by Go. */
function beyondLimits(why: string): FieldError {
  return invalid(
    '',
    undefined,
    `${why}, beyond what this webhook reads (Spiderpool's configuration is a few KiB, three levels deep); shorten conf.yml`,
  );
}

/** Decodes the provider block into a struct as the given Go decoder would. */
function decode(contents: unknown, ctx: Context, semantics: Semantics): ProviderSettings {
  const settings = emptySettings();
  const root = mappingValue(contents, '', ctx);
  if (root === null) return settings;
  for (const pair of entries(root, ctx, semantics)) {
    if (keyText(pair, ctx) !== PROVIDER_KEY) continue;
    const block = mappingValue(pair.value, PROVIDER_KEY, ctx);
    // A null resets the struct; a mapping is decoded into the existing struct, so a
    // second occurrence (through a merge) overrides field by field, as both decoders do.
    if (block === null) Object.assign(settings, emptySettings());
    else {
      for (const setting of entries(block, ctx, semantics)) {
        const key = keyText(setting, ctx);
        if (key === 'serverUrl' || key === 'httpRequestTimeout') {
          settings[key] = stringValue(setting.value, `${PROVIDER_KEY}.${key}`, ctx);
        }
      }
    }
  }
  return settings;
}

/**
 * The entries of a mapping in the order the decoder applies them (later ones override),
 * with merge keys (`<<`) expanded.
 * - yaml.v2 applies entries in document order, a merge where it stands: an explicit key
 *   written before `<<` is overridden by the merged value.
 * - yaml.v3 lets explicit keys win wherever they stand (the YAML merge spec).
 * In a `<<: [*a, *b]` list both let the earlier mapping win.
 */
function entries(map: YAMLMap, ctx: Context, semantics: Semantics): Pair[] {
  if (ctx.expanding.has(map)) {
    throw new DecodeFailure(notDecodable('', `${at(map, ctx.lines)}an anchor's value contains itself`));
  }
  if (ctx.expanding.size > MAX_MERGE_DEPTH) {
    throw new DecodeFailure(beyondLimits(`merge keys (<<) nest more than ${MAX_MERGE_DEPTH} deep`));
  }
  checkKeys(map, ctx);
  // Only what merge keys bring in counts against the aliasing budget.
  if (ctx.expanding.size > 0) ctx.budget -= map.items.length + 1;
  ctx.expanding.add(map);
  if (ctx.budget < 0) {
    throw new DecodeFailure(notDecodable('', 'merge keys (<<) expand to too many entries (excessive aliasing)'));
  }
  try {
    return semantics === 'yaml.v2' ? entriesInDocumentOrder(map, ctx) : entriesExplicitFirst(map, ctx);
  } finally {
    ctx.expanding.delete(map);
  }
}

function entriesInDocumentOrder(map: YAMLMap, ctx: Context): Pair[] {
  const out: Pair[] = [];
  for (const pair of map.items) {
    if (!isMergeKey(pair, ctx)) out.push(pair);
    else for (const source of mergeSources(pair, ctx).reverse()) out.push(...entries(source, ctx, 'yaml.v2'));
  }
  return out;
}

function entriesExplicitFirst(map: YAMLMap, ctx: Context): Pair[] {
  const explicit = map.items.filter((pair) => !isMergeKey(pair, ctx));
  const taken = new Set(explicit.map((pair) => keyText(pair, ctx)));
  const merged: Pair[] = [];
  for (const pair of map.items.filter((item) => isMergeKey(item, ctx))) {
    for (const source of mergeSources(pair, ctx)) {
      for (const entry of entries(source, ctx, 'yaml.v3')) {
        const key = keyText(entry, ctx);
        if (taken.has(key)) continue;
        taken.add(key);
        merged.push(entry);
      }
    }
  }
  return [...merged, ...explicit];
}

/** The mappings a `<<` value names: one mapping, or a sequence of mappings. */
function mergeSources(pair: Pair, ctx: Context): YAMLMap[] {
  const value = deref(pair.value, ctx);
  const items = isSeq(value) ? value.items.map((item) => deref(item, ctx)) : [value];
  return items.map((item) => {
    if (!isMap(item)) {
      throw new DecodeFailure(notDecodable('', `${at(item, ctx.lines)}a merge key (<<) must name a mapping or a list of mappings`));
    }
    return item;
  });
}

/**
 * A merge key as Go's `isMerge` sees it: the plain text `<<`, untagged or tagged `!` or
 * `!!merge`. (The parser here turns `!!merge` text into a symbol, so the text is read
 * from the document.)
 */
function isMergeKey(pair: Pair, ctx: Context): boolean {
  const key = pair.key;
  if (!isScalar(key) || key.type !== 'PLAIN' || !key.range) return false;
  if (key.tag !== undefined && key.tag !== '!' && key.tag !== MERGE_TAG) return false;
  return /(^|\s)<<$/.test(ctx.text.slice(key.range[0], key.range[1]));
}

/** The field name a key decodes to (an alias is followed); `undefined` for a null key. */
function keyText(pair: Pair, ctx: Context): string | undefined {
  const key = deref(pair.key, ctx);
  return isScalar(key) && !isNull(key) ? String(key.value) : undefined;
}

/**
 * The keys of a mapping the decoders decode: each is decoded into a string, so a mapping
 * or sequence cannot be one; an empty plain key (`: x`) is a libyaml syntax error ("did
 * not find expected key"); and yaml.v3 refuses a key written twice ("mapping key already
 * defined"), comparing keys as written, merge keys included.
 */
function checkKeys(map: YAMLMap, ctx: Context): void {
  if (ctx.keysChecked.has(map)) return;
  ctx.keysChecked.add(map);
  const seen = new Set<string>();
  const names = new Set<string>();
  for (const pair of map.items) {
    const key = deref(pair.key, ctx);
    if (isMap(key) || isSeq(key)) {
      throw new DecodeFailure(notDecodable('', `${at(key, ctx.lines)}has a ${isMap(key) ? 'mapping' : 'sequence'} as a key`));
    }
    if (isScalar(key) && key.type === 'PLAIN' && key.tag === undefined && key.range && key.range[0] === key.range[1]) {
      throw new DecodeFailure(notDecodable('', `${at(key, ctx.lines)}has a value without a key`));
    }
    if (!isScalar(key)) continue;
    const merge = isMergeKey(pair, ctx);
    // A key is decoded into a string first: a standard tag it does not satisfy fails.
    if (!merge && key.tag !== undefined && key.tag !== '!' && key.tag !== STR_TAG) throw tagFailure('', key, ctx);
    // yaml.v3 refuses a key written twice (two `<<` included), and a field set twice
    // through an alias key.
    const name = merge ? '<<' : String(key.value);
    const written = isAlias(pair.key) ? `alias:${pair.key.source}` : `scalar:${name}`;
    if (seen.has(written) || (isAlias(pair.key) && names.has(name))) {
      throw new DecodeFailure(
        notDecodable('', `${at(pair.key, ctx.lines)}key ${quoteShown(name)} appears twice in the same mapping (yaml.v3 refuses duplicate keys)`),
      );
    }
    seen.add(written);
    names.add(name);
  }
}

function deref(node: unknown, ctx: Context): unknown {
  return isAlias(node) ? ctx.aliases.get(node) : node;
}

/** A null as the decoders resolve it: a missing node, a plain null spelling, or `!!null` on one. */
function isNull(node: unknown): boolean {
  if (node === null || node === undefined) return true;
  if (!isScalar(node) || !NULL_SPELLINGS.has(String(node.value))) return false;
  return node.tag === NULL_TAG || (node.tag === undefined && node.type === 'PLAIN');
}

/** Whether a value the decoders decode is null; `!!null` on other text fails ("cannot decode !!str `50s` as a !!null"). */
function decodesToNull(node: unknown, field: string, ctx: Context): boolean {
  if (isScalar(node) && node.tag === NULL_TAG && !isNull(node)) throw tagFailure(field, node, ctx);
  return isNull(node);
}

/**
 * A mapping where the decoders fill a struct, or `null`; anything else fails to decode.
 * Tags on a mapping are ignored by both decoders, except `!!null`, which yaml.v3 refuses.
 */
function mappingValue(node: unknown, field: string, ctx: Context): YAMLMap | null {
  const value = deref(node, ctx);
  if (decodesToNull(value, field, ctx)) return null;
  if (!isMap(value)) throw typeFailure(field, value, 'a mapping', ctx);
  if (value.tag === NULL_TAG) throw tagFailure(field, value, ctx);
  return value;
}

/**
 * A Go `string` field: a scalar's text, "" for null; a mapping or sequence fails. The
 * decoders resolve the text by a standard tag first: `!!int`, `!!float` and `!!bool` on
 * text that is no such value fail (yaml.v3 refuses `!!bool` on `yes`, which yaml.v2
 * reads). `!!binary` is refused outright: Go base64-decodes it, which the parser here
 * cannot check, and nobody writes a URL or a timeout in base64. Other tags leave the text
 * as written.
 */
function stringValue(node: unknown, field: string, ctx: Context): string {
  const value = deref(node, ctx);
  if (decodesToNull(value, field, ctx)) return '';
  if (!isScalar(value)) throw typeFailure(field, value, 'a string', ctx);
  // The failsafe schema still turns !!timestamp into a Date: keep the text as written.
  const text = value.value instanceof Date ? (value.source ?? '') : String(value.value);
  const readable = TAG_RESOLVES[value.tag ?? ''];
  if (value.tag === BINARY_TAG || value.tag === MERGE_TAG || (readable !== undefined && !readable.test(text))) {
    throw tagFailure(field, value, ctx);
  }
  return text;
}

const BINARY_TAG = 'tag:yaml.org,2002:binary';
/** Standard tags whose resolution can fail, with the texts that resolve (YAML 1.1/1.2 core). */
const TAG_RESOLVES: Readonly<Record<string, RegExp>> = {
  'tag:yaml.org,2002:int': /^[-+]?(0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|0o?[0-7_]+|0b[01_]+)$/,
  'tag:yaml.org,2002:float': /^([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/,
  'tag:yaml.org,2002:bool': /^(true|True|TRUE|false|False|FALSE)$/,
};

function tagFailure(field: string, node: { tag?: string }, ctx: Context): DecodeFailure {
  const tag = (node.tag ?? '').replace(/^tag:yaml\.org,2002:/, '!!');
  return new DecodeFailure(
    notDecodable(field, `${at(node, ctx.lines)}is tagged ${quoteShown(tag)}, which Spiderpool's decoders do not read as written; remove the tag`),
  );
}

function typeFailure(field: string, node: unknown, wanted: string, ctx: Context): DecodeFailure {
  const found = isMap(node) ? 'a mapping' : isSeq(node) ? 'a sequence' : 'a scalar';
  return new DecodeFailure(notDecodable(field, `${at(node, ctx.lines)}must be ${wanted}, not ${found}`));
}
