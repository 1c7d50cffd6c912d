/**
 * Decoders for the unbounded containers of guarded objects (`[]string`,
 * `map[string]string`) whose cost does not explode on hostile input. zod checks every
 * element and records one issue per bad element; the webhook reports only the first, so a
 * 3 MiB body of a million numbers in `spec.nodeName` would cost seconds of CPU and hundreds
 * of MiB for issues never shown. Lists stop at the first bad element, report it with zod's
 * own message and path, and only then let zod build the value (one more pass, over valid
 * input); maps are read only at the keys the rules use.
 */
import { z } from 'zod';
import { compiled } from './fast-schema.js';

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
  const list = compiled(z.array(item));
  const element = compiled(item);
  return z
    .unknown()
    .superRefine((value, ctx) => {
      // zod's compiled checks (z.validate parses nothing and stops at the first bad element):
      // the whole list first, the common case; then element by element up to the first bad
      // one, whose issues alone are reported.
      if (!Array.isArray(value) || z.validate(list, value)) return;
      const bad = value.findIndex((e) => !z.validate(element, e));
      if (bad >= 0) reportFirst(item, value[bad], bad, ctx);
    })
    .pipe(z.array(item));
}

/**
 * The entries `keys` of a `map[string]string` (annotations, ConfigMap `data`), each checked
 * to be a string; other entries are neither checked nor copied, as a Go struct ignores
 * fields it does not declare. The cost is set by `keys`, not by the map: a hostile review
 * with 300 000 annotations decodes as fast as one with three. A non-object fails as
 * `z.record` reports it.
 *
 * @returns a schema whose output holds only those of `keys` that are present.
 */
export function stringEntries<K extends string>(keys: readonly K[]): z.ZodType<Partial<Record<K, string>>> {
  const value = z.string();
  const map = z.record(z.string(), value);
  return z.unknown().transform((object, ctx) => {
    if (object === null || typeof object !== 'object' || Array.isArray(object)) {
      for (const issue of map.safeParse(object).error?.issues ?? []) ctx.addIssue(issue as z.core.$ZodRawIssue);
      return z.NEVER;
    }
    const picked: Partial<Record<K, string>> = {};
    for (const key of keys) {
      if (!Object.hasOwn(object, key)) continue;
      const entry = (object as Record<string, unknown>)[key];
      // zod's own check of `value` (z.string() does not coerce), for its message when it fails.
      if (typeof entry !== 'string' && reportFirst(value, entry, key, ctx)) return z.NEVER;
      picked[key] = entry as string;
    }
    return picked;
  });
}
