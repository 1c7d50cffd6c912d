/**
 * Fail-fast decoders for the unbounded containers of guarded objects (`[]string`,
 * `map[string]string`). zod checks every element and records one issue per bad element;
 * the webhook reports only the first, so a 3 MiB body of a million numbers in
 * `spec.nodeName` would cost seconds of CPU and hundreds of MiB for issues never shown.
 * These stop at the first bad element, report it with zod's own message and path, and
 * only then let zod build the value (one more pass, over valid input).
 */
import { z } from 'zod';

/** Adds the issues of `item` on `value` to `ctx`, under `key`; whether there were any. */
function reportFirst(item: z.ZodType, value: unknown, key: PropertyKey, ctx: z.RefinementCtx): boolean {
  const result = item.safeParse(value);
  if (result.success) return false;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: [key, ...issue.path] } as z.core.$ZodRawIssue);
  return true;
}

/**
 * An array of `item`s, failing at the first bad element (`spec.nodeName[i]`); a non-array
 * fails as `z.array` reports it.
 */
export function listOf<T>(item: z.ZodType<T>): z.ZodType<T[]> {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (Array.isArray(value)) value.some((element, i) => reportFirst(item, element, i, ctx));
    })
    .pipe(z.array(item));
}

/**
 * A `map[string]string` as JSON: an object of strings, failing at the first key whose value
 * is not a string (`data["key"]`); a non-object fails as `z.record` reports it.
 */
export function stringMap(): z.ZodType<Record<string, string>> {
  const value = z.string();
  return z
    .unknown()
    .superRefine((object, ctx) => {
      if (object !== null && typeof object === 'object' && !Array.isArray(object)) {
        Object.entries(object).some(([key, v]) => reportFirst(value, v, key, ctx));
      }
    })
    .pipe(z.record(z.string(), value));
}
