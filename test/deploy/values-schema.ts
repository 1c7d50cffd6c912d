/**
 * The chart's values.schema.json as Helm checks values against it (JSON Schema draft 7), by
 * ajv in strict mode (an unknown keyword fails to compile). One line per problem: `path: what`.
 */
import { Ajv } from 'ajv';

export type JsonSchema = Record<string, unknown>;

/** Where `values` break `schema`; empty when they fit. */
export function valuesProblems(schema: JsonSchema, values: unknown): string[] {
  const { $schema: _, ...draft7 } = schema; // names draft 7 at an address ajv does not hold
  const validate = new Ajv({ allErrors: true, strict: true }).compile(draft7);
  if (validate(values)) return [];
  return (validate.errors ?? []).map((e) => {
    const at = e.instancePath.slice(1).replaceAll('/', '.') || '(top)';
    return e.keyword === 'additionalProperties' ? `${at}: unknown key "${String(e.params['additionalProperty'])}"` : `${at}: ${e.message ?? e.keyword}`;
  });
}
