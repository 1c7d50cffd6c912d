/**
 * A mapping's entries as one decoder applies them: merge keys (`<<`) expanded in that
 * decoder's order, and its keys checked (decode.go `mapping`, `merge`, `isMerge`).
 */
import { isAlias, isMap, isScalar, isSeq, type Pair, type YAMLMap } from 'yaml';
import { quoteGoString } from '../go/strconv-quote.js';
import { joinField } from './go-types.js';
import type { Semantics } from './go-scalar.js';
import { at } from './yaml-go-compat.js';
import { DecodeFailure, placeOf, report, spend, type Context } from './unmarshal-context.js';
import { MERGE_TAG, binaryDecoded, deref, isNull, resolveScalar, scalarText, tagOf } from './unmarshal-scalar.js';

/** Earlier occurrences of a repeated key named in its problems. */
const MAX_DUPLICATES_NAMED = 16;
/** Merge keys inside merged mappings, at most this deep (the recursion stays shallow). */
const MAX_MERGE_DEPTH = 64;

/** A mapping entry, `aliased` when decoded through an alias (Go counts those apart). */
export type Entry = Pick<Pair, 'key' | 'value'> & { aliased?: boolean };

/**
 * The entries of a mapping in the order the decoder applies them (later ones override),
 * with merge keys (`<<`) expanded.
 * - yaml.v2 applies entries in document order, a merge where it stands: an explicit key
 *   written before `<<` is overridden by the merged value.
 * - yaml.v3 lets explicit keys win wherever they stand (the YAML merge spec).
 * In a `<<: [*a, *b]` list both let the earlier mapping win.
 *
 * @throws DecodeFailure for an anchor containing itself, a merge of no mapping, a key that
 *   is a collection, merges nested past this package's bound
 */
export function entries(map: YAMLMap, field: string, ctx: Context, semantics: Semantics, aliased = false): Entry[] {
  if (ctx.expanding.has(map)) throw new DecodeFailure({ by: 'go', field: '', problem: `${at(map, ctx.lines)}an anchor's value contains itself` });
  if (ctx.expanding.size > MAX_MERGE_DEPTH) {
    throw new DecodeFailure({ by: 'limit', field: '', problem: `merge keys (<<) nest more than ${MAX_MERGE_DEPTH} deep` });
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
      throw new DecodeFailure({ by: 'go', field: '', problem: `${at(item, ctx.lines)}a merge key (<<) must name a mapping or a list of mappings` });
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

/** The field name a key decodes to (an alias is followed, `!!binary` decoded); `undefined` for a null key. */
export function keyText(pair: Entry, ctx: Context): string | undefined {
  const key = deref(pair.key, ctx);
  return isScalar(key) && !isNull(key, ctx.semantics) ? binaryDecoded(key, scalarText(key), ctx) : undefined;
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
  const seen = new Map<string, number[]>();
  // Go compares each key with every later one: its errors go by the earlier key, then the later.
  const terrors: Array<{ earlier: number; later: number; text: string }> = [];
  try {
    for (const [index, pair] of map.items.entries()) {
      const key = deref(pair.key, ctx);
      if (isMap(key) || isSeq(key)) {
        throw new DecodeFailure({ by: 'go', field: '', problem: `${at(key, ctx.lines)}has a ${isMap(key) ? 'mapping' : 'sequence'} as a key` });
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
        // Each earlier occurrence is named.
        for (const first of earlier.slice(0, MAX_DUPLICATES_NAMED)) {
          const shown = isAlias(pair.key) ? pair.key.source : name;
          const line = placeOf(map.items[first]!.key, ctx.lines).line ?? ctx.lines.linePos(0).line;
          const message = `mapping key ${quoteGoString(shown)} already defined at line ${line}`;
          const place = placeOf(pair.key, ctx.lines);
          terrors.push({ earlier: first, later: index, text: `line ${place.line ?? 1}: ${message}` });
          report(ctx, { kind: 'duplicate-key', key: shown, field: joinField(field, shown), ...place, message });
        }
      }
      repeated ||= earlier.length > 0;
      earlier.push(index);
      seen.set(written, earlier);
    }
  } finally {
    // Also when report() ends the pass (PassFull): the errors found so far, in Go's order.
    terrors.sort((a, b) => a.earlier - b.earlier || a.later - b.later);
    ctx.terrors.push(...terrors.map((t) => t.text));
  }
  ctx.keysChecked.set(map, repeated);
  return repeated;
}
