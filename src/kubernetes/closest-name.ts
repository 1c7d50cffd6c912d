/**
 * "did you mean": the known name closest to one mistyped, as kubectl (cobra's
 * `SuggestionsFor`) suggests commands: the same letters in another case, else one within
 * two edits (Levenshtein), for names of four characters or more.
 */

/** Largest edit distance still suggested. */
const MAX_EDITS = 2;

/** The first of `known` that `name` differs from only in case, else by at most {@link MAX_EDITS} edits; undefined when none. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  return known.find((k) => k.toLowerCase() === lower) ?? known.find((k) => name.length >= 4 && editDistance(k, name, MAX_EDITS) <= MAX_EDITS);
}

/** Levenshtein distance, or `limit + 1` once it is certain to exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      best = Math.min(best, current[j]!);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}
