/**
 * One decoder's pass over a parsed document: each value decoded into its Go type as
 * yaml.v2's or yaml.v3's decode.go does (`unmarshal`, `scalar`, `sequence`, `mappingStruct`),
 * recording what it refuses and going on, as both decoders do with type errors.
 */
import { isAlias, isMap, isScalar, isSeq, type Scalar, type YAMLMap } from 'yaml';
import { asGoBool, asGoInt } from './go-scalar.js';
import { joinField, zeroStruct, zeroValue, type GoStruct, type GoType, type GoValue, type StructType } from './go-types.js';
import { PassFull, placeOf, report, spend, type Context } from './unmarshal-context.js';
import { entries, keyText } from './unmarshal-mapping.js';
import { binaryDecoded, decodesToNull, deref, goTag, isNonSpecific, resolveScalar, scalarText } from './unmarshal-scalar.js';

/** Runs one decoder's pass over the document: its reading, or `undefined` when it refuses it. */
export function decodePass(contents: unknown, type: StructType, ctx: Context): GoStruct | undefined {
  try {
    const conf = decodeValue(contents, type, '', ctx, undefined) as GoStruct;
    return ctx.problems.length === 0 ? conf : undefined;
  } catch (e) {
    if (e instanceof PassFull) return undefined;
    throw e;
  }
}

/**
 * Decodes `node` into a value of Go type `type` as the pass's decoder does.
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
      // struct or map (not a pointer, which these types have none of).
      if (!isMap(value)) return refuse(field, value, type, ctx, existing);
      return type.go === 'struct'
        ? decodeStruct(value, type, field, ctx, (existing as GoStruct | null | undefined) ?? zeroStruct(type))
        : decodeMap(value, field, ctx, (existing as GoStruct | null | undefined) ?? Object.create(null));
    }
    case 'slice':
      return isSeq(value) ? decodeSlice(value.items, type, field, ctx) : refuse(field, value, type, ctx, existing);
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

function decodeSlice(items: unknown[], type: Extract<GoType, { go: 'slice' }>, field: string, ctx: Context): GoValue[] {
  const out: GoValue[] = [];
  items.forEach((item, i) => {
    // yaml.v3 leaves a null out of a slice of values that cannot be nil (decode.go
    // `null` is false for them, and `sequence` keeps only what decoded); yaml.v2 keeps the zero value.
    if (ctx.semantics === 'yaml.v3' && !nilable(type.of) && decodesToNull(deref(item, ctx), `${field}[${i}]`, ctx)) return;
    const before = ctx.problems.length;
    const element = decodeValue(item, type.of, `${field}[${i}]`, ctx, undefined);
    // A refused element is left out of the slice, as decode.go `sequence` does.
    if (ctx.problems.length === before) out.push(element);
  });
  return out;
}

/** Whether yaml.v3 can set a value of this type to null (decode.go `null`: pointers, maps, slices; these types have no pointers). */
function nilable(type: GoType): boolean {
  return type.go === 'map' || type.go === 'slice';
}

/**
 * A mapping into a struct, field by field. Keys the struct lacks are skipped, and noted
 * once in `ctx.unknownKeys`. yaml.v3 also refuses a field its keys set twice when they are
 * written differently (an alias key, a `!!binary` key; decode.go `mappingStruct`: "field X
 * already set in type T"); keys merged in do not count.
 */
function decodeStruct(map: YAMLMap, type: StructType, field: string, ctx: Context, out: GoStruct): GoStruct {
  const explicit = new Set<unknown>(map.items);
  const done = new Set<string>();
  for (const pair of entries(map, field, ctx, ctx.semantics)) {
    const key = keyText(pair, ctx) ?? '';
    const fieldType = Object.hasOwn(type.fields, key) ? type.fields[key] : undefined;
    if (fieldType === undefined) {
      const id = `${field}\n${key}`;
      if (!ctx.unknownKeys.has(id)) ctx.unknownKeys.set(id, { parent: field, key, type });
      continue;
    }
    if (ctx.semantics === 'yaml.v3' && explicit.has(pair)) {
      if (done.has(key)) {
        const message = `field ${key} already set in type ${type.name}`;
        report(ctx, { kind: 'field-set-twice', key, field: joinField(field, key), ...placeOf(pair.key, ctx.lines), message });
        continue;
      }
      done.add(key);
    }
    out[key] = decodeValue(pair.value, fieldType, joinField(field, key), ctx, out[key], pair.aliased);
  }
  return out;
}

/** A `map[string]string`: keys as strings, values as strings. */
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

/**
 * Records the decoder's type error for `node` (decode.go `terror`: "cannot unmarshal
 * !!str `true` into bool", values over 10 bytes cut to 7 and "...").
 */
function refuse(field: string, node: unknown, type: GoType, ctx: Context, existing: GoValue | undefined, resolvedTag?: string): GoValue {
  const place = placeOf(node, ctx.lines);
  const typeName = type.go === 'bool' || type.go === 'int' ? type.go : type.go === 'string' ? (type.name ?? 'string') : type.name;
  if (isMap(node) || isSeq(node)) {
    const tag = isMap(node) ? '!!map' : '!!seq';
    const written = isMap(node) ? 'mapping' : 'sequence';
    report(ctx, { kind: 'type', type, written, tag, field, ...place, message: `cannot unmarshal ${tag} into ${typeName}` });
    return existing ?? zeroValue(type);
  }
  const scalar = node as Scalar;
  const value = scalarText(scalar);
  const tag =
    ctx.semantics === 'yaml.v2' && isNonSpecific(scalar)
      ? '!'
      : scalar.tag !== undefined && scalar.tag !== '!'
        ? scalar.tag.replace(/^tag:yaml\.org,2002:/, '!!')
        : (resolvedTag ?? goTag(scalar, value, ctx));
  const bytes = Buffer.from(value, 'utf8');
  const shown = bytes.length > 10 ? `${bytes.subarray(0, 7).toString('utf8')}...` : value;
  report(ctx, { kind: 'type', type, written: 'scalar', tag, value, field, ...place, message: `cannot unmarshal ${tag} \`${shown}\` into ${typeName}` });
  return existing ?? zeroValue(type);
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
