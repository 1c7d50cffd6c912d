/** The one reading of a failed zod parse as a message: its first issue, with its field path. */
import { z } from 'zod';
import { Path, pathOf } from './field-path.js';

/** `a string`, `an object`, `null`: a JSON type as a person names it. */
function aType(type: string): string {
  return type === 'null' ? type : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/**
 * The JSON type of a decoded value, as zod names expected types; a number `z.number()`
 * refuses is named apart from a number: NaN (YAML's `.nan`), or past a double's range
 * (`JSON.parse` reads it as Infinity, as YAML does `.inf`).
 */
function typeOf(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : 'out-of-range number';
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

type RawIssue = z.core.$ZodRawIssue;

/**
 * zod's own wording (`Invalid input: expected object, received undefined`) never reaches a
 * person: a missing or mistyped field reads as the `request.uid` error does
 * (`is required (a string)`); a schema's own message, where it has one, still wins.
 */
function plainIssue(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? `is required (${aType(issue.expected)})` : `must be ${aType(issue.expected)}, not ${aType(typeOf(issue.input))}`;
    case 'invalid_value':
      return `must be ${issue.values.map((v: unknown) => JSON.stringify(v)).join(' or ')}`;
    case 'invalid_union':
      return 'has none of the accepted shapes';
    default:
      return undefined;
  }
}

z.config({ customError: plainIssue });

/**
 * `<path>: <message>` of the first issue of `error`, the path rendered under `under` as
 * every field path is ({@link Path}); the message alone for an issue at the root.
 */
export function firstIssue(error: z.ZodError, under: Path = Path.ROOT): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = pathOf(issue.path, under).toString();
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
