/**
 * Spiderpool's `HasWildcardInStr` (pkg/ippoolmanager/utils.go): a name with `?` or `*`, or
 * with both `[` and `]`, is expanded; any other name is taken literally (`a[b` names a pool).
 */
export function hasWildcard(name: string): boolean {
  return name.includes('?') || name.includes('*') || (name.includes('[') && name.includes(']'));
}
