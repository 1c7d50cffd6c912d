/**
 * Scalars as one decoder's pass reads them: nulls, tags as yaml.v2 or yaml.v3 compares
 * them, a tagged scalar resolved and checked against its tag (resolve.go `resolve`), and
 * `!!binary` decoded (decode.go `scalar`).
 */
import { isAlias, isScalar, type Scalar } from 'yaml';
import { MAX_INT64 } from '../go/duration-units.js';
import { quoteShown } from '../go/strconv-quote.js';
import { resolvePlain, type Resolved, type Semantics } from './go-scalar.js';
import { at } from './yaml-go-compat.js';
import { DecodeFailure, bothSay, placeOf, report, type Context } from './unmarshal-context.js';

/** The decoders' plain-scalar spellings of null (YAML 1.1 and 1.2 core schemas agree). */
const NULL_SPELLINGS = new Set(['', '~', 'null', 'Null', 'NULL']);
const NULL_TAG = 'tag:yaml.org,2002:null';
export const MERGE_TAG = 'tag:yaml.org,2002:merge';
const BINARY_TAG = 'tag:yaml.org,2002:binary';
/** The tags `resolve` checks the text against (`!!str` takes any text). */
const RESOLVED_TAGS = new Set(['!!bool', '!!int', '!!float', '!!null', '!!timestamp']);

export function deref(node: unknown, ctx: Context): unknown {
  return isAlias(node) ? ctx.aliases.get(node) : node;
}

/** A null as the decoders resolve it: a missing node, a plain null spelling, or `!!null` on one (as `semantics` compares tags). */
export function isNull(node: unknown, semantics: Semantics = 'yaml.v2'): boolean {
  if (node === null || node === undefined) return true;
  if (!isScalar(node) || !NULL_SPELLINGS.has(String(node.value))) return false;
  return tagOf(node, semantics) === NULL_TAG || (node.tag === undefined && node.type === 'PLAIN');
}

/** Whether a value the decoders decode is null; `!!null` on other text fails ("cannot decode !!str `50s` as a !!null"). */
export function decodesToNull(node: unknown, field: string, ctx: Context): boolean {
  if (isScalar(node) && tagOf(node, ctx.semantics) === NULL_TAG && !isNull(node, ctx.semantics)) {
    if (node.tag === NULL_TAG) throw tagFailure(field, node, ctx);
    // Spelt `!!null` (a verbatim `!<!!null>`): yaml.v3 alone reads it as !!null, and fails.
    const text = scalarText(node);
    report(ctx, { kind: 'tag', field, ...placeOf(node, ctx.lines), message: `cannot decode ${goTag(node, text, ctx)} \`${text}\` as a !!null` });
    return true;
  }
  // yaml.v3 reads the non-specific tag `!` as no tag; yaml.v2 keeps `! ~` the string "~".
  if (ctx.semantics === 'yaml.v3' && isNonSpecific(node)) return NULL_SPELLINGS.has(String((node as Scalar).value));
  return isNull(node, ctx.semantics);
}

/** A plain scalar tagged `!`: yaml.v3 resolves it as untagged, yaml.v2 leaves it an unresolved string tagged `!`. */
export function isNonSpecific(node: unknown): boolean {
  return isScalar(node) && node.tag === '!' && node.type === 'PLAIN';
}

/**
 * A node's tag as one decoder compares it: yaml.v3 takes the spelling `!!x` (a verbatim
 * `!<!!x>`, a %TAG prefix `!!`) for `tag:yaml.org,2002:x`, as its yaml.go `shortTag`
 * writes both alike; yaml.v2 compares the long form only, so `!!x` is a tag of its own.
 */
export function tagOf(node: { tag?: string }, semantics: Semantics): string | undefined {
  return semantics === 'yaml.v3' && node.tag?.startsWith('!!') ? `tag:yaml.org,2002:${node.tag.slice(2)}` : node.tag;
}

/** A scalar's text as the decoders see it (the failsafe schema still makes a Date of !!timestamp, bytes of !!binary). */
export function scalarText(node: Scalar): string {
  return typeof node.value === 'string' ? node.value : (node.source ?? String(node.value));
}

/** The tag Go gives a scalar in its messages: `!!str` for quoted text, else its resolution. */
export function goTag(node: Scalar, text: string, ctx: Context): string {
  return node.type === 'PLAIN' ? resolvePlain(text, ctx.semantics).tag : '!!str';
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
export function resolveScalar(node: Scalar, text: string, field: string, ctx: Context): Resolved | undefined {
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
  report(ctx, { kind: 'tag', field, ...placeOf(node, ctx.lines), message: `cannot decode ${resolved.tag} \`${text}\` as a ${short}` });
  return undefined;
}

/**
 * A scalar's text as a Go string: for `!!binary`, its base64 decoded as both decoders do
 * (`base64.StdEncoding`, which skips CR and LF; bytes that are not UTF-8 become U+FFFD, as
 * Go's JSON shows them). Invalid base64 stops both ("!!binary value contains invalid base64 data").
 */
export function binaryDecoded(node: Scalar, text: string, ctx: Context): string {
  if (tagOf(node, ctx.semantics) !== BINARY_TAG) return text;
  const decoded = goBase64(text);
  const message = '!!binary value contains invalid base64 data';
  if (decoded === undefined && node.tag !== BINARY_TAG) {
    // Spelt `!!binary` (a verbatim `!<!!binary>`): yaml.v3 alone decodes it, and fails.
    report(ctx, { kind: 'binary', field: '', ...placeOf(node, ctx.lines), message });
    return text;
  }
  if (decoded === undefined) throw new DecodeFailure({ by: 'go', field: '', problem: `${at(node, ctx.lines)}${message}`, go: bothSay(message) });
  return decoded;
}

/** Go's `base64.StdEncoding.DecodeString`: padded standard alphabet, CR and LF skipped; `undefined` when invalid. */
function goBase64(text: string): string | undefined {
  const data = text.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(data)) return undefined;
  return new TextDecoder('utf-8').decode(Buffer.from(data, 'base64'));
}

/**
 * Both decoders refusing a standard tag the value does not satisfy, as written (`!!null 50s`);
 * each names the text as it resolves it, whatever its style (resolve.go `resolve`).
 */
function tagFailure(field: string, node: Scalar, ctx: Context): DecodeFailure {
  const tag = (node.tag ?? '').replace(/^tag:yaml\.org,2002:/, '!!');
  const text = scalarText(node);
  const says = (semantics: Semantics) => `yaml: cannot decode ${resolvePlain(text, semantics).tag} \`${text}\` as a ${tag}`;
  const go = { 'yaml.v2': says('yaml.v2'), 'yaml.v3': says('yaml.v3') };
  return new DecodeFailure({ by: 'tag', field, problem: `${at(node, ctx.lines)}is tagged ${quoteShown(tag)}`, go });
}
