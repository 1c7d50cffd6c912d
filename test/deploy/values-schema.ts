/**
 * The part of JSON Schema (draft 7) the chart's values.schema.json uses, enough to check in
 * Node what Helm checks on `helm install`/`template`/`lint` (Helm validates with the full
 * draft; test/e2e/chart.test.ts runs it). A keyword outside this subset is reported by
 * {@link schemaProblems}, so the schema cannot outgrow what these tests understand.
 */

export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  items?: JsonSchema;
  uniqueItems?: boolean;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  pattern?: string;
  minLength?: number;
  minimum?: number;
  description?: string;
  title?: string;
  $schema?: string;
}

const KNOWN = new Set([
  'type', 'properties', 'additionalProperties', 'required', 'items', 'uniqueItems', 'enum', 'anyOf',
  'pattern', 'minLength', 'minimum', 'description', 'title', '$schema',
]);

/**
 * Object schemas that take any keys: the Kubernetes types passed to the pod as given
 * (affinity, a toleration, a topology spread constraint, nodeSelector's string map) and Helm's `global`. Every other
 * object schema must say `additionalProperties: false`.
 */
const FREE_FORM = new Set(['global', 'affinity', 'tolerations.items', 'topologySpread.extraConstraints.items', 'nodeSelector']);

/** What is wrong with the schema itself: unknown keywords, object schemas that take unknown keys. */
export function schemaProblems(schema: JsonSchema, at = ''): string[] {
  const name = at === '' ? '(top)' : at;
  const problems = Object.keys(schema)
    .filter((k) => !KNOWN.has(k))
    .map((k) => `${name}: keyword "${k}" is not understood by test/deploy/values-schema.ts`);
  if (schema.type === 'object' && !FREE_FORM.has(at) && schema.additionalProperties !== false) {
    problems.push(`${name}: an object schema without additionalProperties: false takes misspelt keys`);
  }
  for (const [key, sub] of Object.entries(schema.properties ?? {})) problems.push(...schemaProblems(sub, at === '' ? key : `${at}.${key}`));
  if (schema.items) problems.push(...schemaProblems(schema.items, `${at}.items`));
  for (const [i, sub] of (schema.anyOf ?? []).entries()) problems.push(...schemaProblems(sub, `${at}.anyOf.${i}`));
  return problems;
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (Number.isInteger(value)) return 'integer';
  return typeof value;
}

/** Where `value` breaks `schema`, one line per problem (`path: what`); empty when it conforms. */
export function valuesProblems(schema: JsonSchema, value: unknown, at = ''): string[] {
  const name = at === '' ? '(top)' : at;
  const child = (key: string | number) => (at === '' ? String(key) : `${at}.${key}`);
  if (schema.anyOf) {
    const fits = schema.anyOf.some((sub) => valuesProblems(sub, value, at).length === 0);
    return fits ? [] : [`${name}: matches none of its anyOf schemas`];
  }
  const actual = typeOf(value);
  if (schema.type !== undefined && actual !== schema.type && !(schema.type === 'number' && actual === 'integer')) {
    return [`${name}: must be ${schema.type}`];
  }
  if (schema.enum && !schema.enum.includes(value)) return [`${name}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`];
  const problems: string[] = [];
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) problems.push(`${name}: shorter than ${schema.minLength}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) problems.push(`${name}: does not match ${schema.pattern}`);
  }
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) problems.push(`${name}: less than ${schema.minimum}`);
  if (Array.isArray(value)) {
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) problems.push(`${name}: items are not unique`);
    if (schema.items) value.forEach((item, i) => problems.push(...valuesProblems(schema.items!, item, child(i))));
  }
  if (actual === 'object') {
    const o = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in o)) problems.push(`${name}: "${key}" is required`);
    for (const [key, v] of Object.entries(o)) {
      const sub = schema.properties?.[key];
      if (sub) problems.push(...valuesProblems(sub, v, child(key)));
      else if (schema.additionalProperties === false) problems.push(`${name}: unknown key "${key}"`);
      else if (typeof schema.additionalProperties === 'object') problems.push(...valuesProblems(schema.additionalProperties, v, child(key)));
    }
  }
  return problems;
}
