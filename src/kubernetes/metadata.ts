/** What every Kubernetes object's `metadata` gives, read from an object not yet decoded. */

/** An object's `metadata.name` when it is a string, else `""` (a CREATE with `generateName`, or not an object). */
export function nameOf(object: unknown): string {
  const name = (object as { metadata?: { name?: unknown } } | null | undefined)?.metadata?.name;
  return typeof name === 'string' ? name : '';
}
