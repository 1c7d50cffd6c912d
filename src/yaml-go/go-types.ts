/**
 * Go types as far as yaml.v2's and yaml.v3's `Unmarshal` decode them differently (decode.go:
 * `scalar`, `sequence`, `mapping`, `mappingStruct`), and the values they decode to. A
 * struct's fields are keyed by their yaml tag, matched case-sensitively as both decoders do.
 */

/** A Go type. `name` is how Go prints the type in its errors (`[]string`, `types.Conf`). */
export type GoType =
  | { go: 'bool' }
  | { go: 'int' }
  | { go: 'string'; name?: string }
  | { go: 'map'; name: string }
  | { go: 'slice'; name: string; of: GoType }
  | { go: 'struct'; name: string; fields: Readonly<Record<string, GoType>> };

export type StructType = Extract<GoType, { go: 'struct' }>;

/** A decoded value: bool → boolean, int → bigint, string → string, map → record, slice → array, struct → record; `null` for a nil slice or map. */
export type GoValue = boolean | bigint | string | null | GoValue[] | { [key: string]: GoValue };
export type GoStruct = { [key: string]: GoValue };

/** Go's zero value of `type`. */
export function zeroValue(type: GoType): GoValue {
  switch (type.go) {
    case 'bool':
      return false;
    case 'int':
      return 0n;
    case 'string':
      return '';
    case 'map':
    case 'slice':
      return null;
    case 'struct':
      return zeroStruct(type);
  }
}

/** A struct with every field at its zero value. */
export function zeroStruct(type: StructType): GoStruct {
  const out: GoStruct = {};
  for (const [key, field] of Object.entries(type.fields)) out[key] = zeroValue(field);
  return out;
}

/** `a.b` for a struct field or map key under `a`; `b` at the top (the field paths of decode errors). */
export function joinField(field: string, key: string): string {
  return field === '' ? key : `${field}.${key}`;
}
