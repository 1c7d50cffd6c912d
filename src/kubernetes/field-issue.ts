/** The one reading of a failed zod parse as a message: its first issue, with its field path. */
import type { z } from 'zod';
import { Path, pathOf } from './field-path.js';

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
