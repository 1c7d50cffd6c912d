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
  LineCounter,
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  parseAllDocuments,
  visit,
  type Alias,
  type Document,
  type Pair,
  type YAMLMap,
} from 'yaml';
import { invalid, type FieldError } from '../field/errors.js';
import { escapeUnprintable, quoteShown, truncate } from '../field/quote.js';

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
type SettingKey = (typeof SETTING_KEYS)[number];

/** The decoders' plain-scalar spellings of null (YAML 1.1 and 1.2 core schemas agree). */
const NULL_SPELLINGS = new Set(['', '~', 'null', 'Null', 'NULL']);
const NULL_TAG = 'tag:yaml.org,2002:null';
const MERGE_TAG = 'tag:yaml.org,2002:merge';

/**
 * Mappings and entries visited while expanding merge keys before giving up, as the Go
 * decoders give up on "excessive aliasing": a few nested `<<: [*a, *a, ...]` grow
 * exponentially.
 */
const MAX_EXPANDED_ENTRIES = 10_000;
/** Merge keys inside merged mappings, at most this deep (the recursion stays shallow). */
const MAX_MERGE_DEPTH = 64;
/**
 * Nesting refused before the YAML parser sees the text: the parser recurses per level and
 * a few thousand levels overflow the stack (and can abort V8). Spiderpool's configuration
 * nests three levels.
 */
const MAX_FLOW_DEPTH = 100;
const MAX_LINE_PREFIX = 400;

/** A decoder refusing the document; carries the field error to report. */
class DecodeFailure extends Error {
  constructor(readonly fieldError: FieldError) {
    super(fieldError.detail);
  }
}

type Node = unknown;
type Semantics = 'yaml.v2' | 'yaml.v3';

interface Context {
  lines: LineCounter;
  /** Each alias resolved once, to the nearest anchor of that name before it. */
  aliases: Map<Alias, Node>;
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
  const tooDeep = nestingProblem(text);
  if (tooDeep !== undefined) return { ok: false, errors: [notDecodable('', tooDeep)] };
  const lines = new LineCounter();
  // Go's Unmarshal reads the first document of a stream and ignores the rest.
  const doc = parseAllDocuments(text, { schema: 'failsafe', merge: false, lineCounter: lines })[0];
  if (doc === undefined) return { ok: true, provider: emptySettings() };
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const pos = syntax.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : '';
    // The parser's message quotes the document: escape what a terminal would interpret.
    const reason = escapeUnprintable(syntax.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''));
    return { ok: false, errors: [notDecodable('', `is not valid YAML: ${where}${truncate(reason)}`)] };
  }
  try {
    const aliases = resolveAliases(doc, lines);
    const v3 = decode(doc.contents, { lines, aliases, budget: MAX_EXPANDED_ENTRIES, expanding: new Set() }, 'yaml.v3');
    const v2 = decode(doc.contents, { lines, aliases, budget: MAX_EXPANDED_ENTRIES, expanding: new Set() }, 'yaml.v2');
    const disagreements = SETTING_KEYS.filter((k) => v2[k] !== v3[k]).map((k) =>
      notDecodable(
        `${PROVIDER_KEY}.${k}`,
        `Spiderpool's controller (gopkg.in/yaml.v2) reads ${quoteShown(v2[k])} but its agent ` +
          `(gopkg.in/yaml.v3) reads ${quoteShown(v3[k])}: the two order merge keys (<<) ` +
          `differently; set ${k} once, outside any merge`,
      ),
    );
    return disagreements.length > 0 ? { ok: false, errors: disagreements } : { ok: true, provider: v3 };
  } catch (e) {
    if (e instanceof DecodeFailure) return { ok: false, errors: [e.fieldError] };
    throw e;
  }
}

function emptySettings(): ProviderSettings {
  return { serverUrl: '', httpRequestTimeout: '' };
}

function notDecodable(field: string, why: string): FieldError {
  return invalid(field, undefined, `${why}; Spiderpool's agent and controller cannot decode it and refuse to start`);
}

/**
 * Why `text` nests too deeply to parse safely, or `undefined`. Counts flow brackets
 * (over-counting brackets inside quoted strings, which only matters for absurd input) and
 * the indentation and block indicators (`- `, `? `, `: `) that start each line.
 */
function nestingProblem(text: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_FLOW_DEPTH) return `nests flow collections ([ or {) more than ${MAX_FLOW_DEPTH} deep`;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  const prefix = /^(?:[ \t]|[-?:](?=[ \t]|$))*/;
  for (const line of text.split('\n')) {
    if (prefix.exec(line)![0].length > MAX_LINE_PREFIX) {
      return `nests block collections deeper than ${MAX_LINE_PREFIX} columns of indentation`;
    }
  }
  return undefined;
}

/**
 * Resolves every alias, in one pass over the document, to the nearest anchor of that name
 * before it (as the YAML spec and both Go decoders do; resolving each alias by searching
 * the document would be quadratic). Go refuses an alias to an anchor it has not seen
 * ("unknown anchor"), wherever it stands, so that is refused too.
 */
function resolveAliases(doc: Document.Parsed, lines: LineCounter): Map<Alias, Node> {
  const anchors = new Map<string, Node>();
  const aliases = new Map<Alias, Node>();
  visit(doc, (_key, node) => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) {
        throw new DecodeFailure(notDecodable('', `${at(node, lines)}refers to unknown anchor ${quoteShown(node.source)}`));
      }
      aliases.set(node, target);
    } else if (isNode(node) && node.anchor) {
      anchors.set(node.anchor, node);
    }
  });
  return aliases;
}

/** Decodes the provider block into a struct as the given Go decoder would. */
function decode(contents: Node, ctx: Context, semantics: Semantics): ProviderSettings {
  const settings = emptySettings();
  const root = deref(contents, ctx);
  if (isNull(root)) return settings;
  if (!isMap(root)) throw typeFailure('', root, 'a mapping', ctx);
  for (const pair of entries(root, ctx, semantics)) {
    if (keyText(pair) !== PROVIDER_KEY) continue;
    const block = deref(pair.value, ctx);
    // A null resets the struct; a mapping is decoded into the existing struct, so a
    // second occurrence (through a merge) overrides field by field, as both decoders do.
    if (isNull(block)) Object.assign(settings, emptySettings());
    else if (!isMap(block)) throw typeFailure(PROVIDER_KEY, block, 'a mapping', ctx);
    else {
      for (const setting of entries(block, ctx, semantics)) {
        const key = keyText(setting);
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
    throw new DecodeFailure(notDecodable('', `merge keys (<<) nest more than ${MAX_MERGE_DEPTH} deep`));
  }
  ctx.expanding.add(map);
  ctx.budget -= map.items.length + 1;
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
    if (!isMergeKey(pair)) out.push(pair);
    else for (const source of mergeSources(pair, ctx).reverse()) out.push(...entries(source, ctx, 'yaml.v2'));
  }
  return out;
}

function entriesExplicitFirst(map: YAMLMap, ctx: Context): Pair[] {
  const explicit = map.items.filter((pair) => !isMergeKey(pair));
  const taken = new Set(explicit.map(keyText));
  const merged: Pair[] = [];
  for (const pair of map.items.filter(isMergeKey)) {
    for (const source of mergeSources(pair, ctx)) {
      for (const entry of entries(source, ctx, 'yaml.v3')) {
        const key = keyText(entry);
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

function isMergeKey(pair: Pair): boolean {
  const key = pair.key;
  return isScalar(key) && key.value === '<<' && (key.tag === MERGE_TAG || (key.tag === undefined && key.type === 'PLAIN'));
}

/** A scalar key's text; other keys match no struct field. */
function keyText(pair: Pair): string | undefined {
  return isScalar(pair.key) ? String(pair.key.value) : undefined;
}

function deref(node: Node, ctx: Context): Node {
  return isAlias(node) ? ctx.aliases.get(node) : node;
}

function isNull(node: Node): boolean {
  if (node === null || node === undefined) return true;
  if (!isScalar(node)) return false;
  return node.tag === NULL_TAG || (node.tag === undefined && node.type === 'PLAIN' && NULL_SPELLINGS.has(String(node.value)));
}

/** A Go `string` field: a scalar's text, "" for null; a mapping or sequence fails. */
function stringValue(node: Node, field: string, ctx: Context): string {
  const value = deref(node, ctx);
  if (isNull(value)) return '';
  if (!isScalar(value)) throw typeFailure(field, value, 'a string', ctx);
  return Buffer.isBuffer(value.value) ? value.value.toString('utf8') : String(value.value);
}

function typeFailure(field: string, node: Node, wanted: string, ctx: Context): DecodeFailure {
  const found = isMap(node) ? 'a mapping' : isSeq(node) ? 'a sequence' : 'a scalar';
  return new DecodeFailure(notDecodable(field, `${at(node, ctx.lines)}must be ${wanted}, not ${found}`));
}

/** `line L, column C: ` for a node with a source range, else "". */
function at(node: Node, lines: LineCounter): string {
  const start = (node as { range?: [number, number, number] } | null)?.range?.[0];
  if (start === undefined) return '';
  const { line, col } = lines.linePos(start);
  return `line ${line}, column ${col}: `;
}
