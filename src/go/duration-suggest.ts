/**
 * "Did you mean" for a text Go's `time.ParseDuration` refuses but a person clearly meant
 * as a duration: a bare number (`50` → `50s`), or a unit Go does not know written the way
 * people write it (`1min` → `1m`, `50sec` → `50s`, `2hours` → `2h`, `1d` → `24h`).
 */

/** Units people write, and Go's spelling. Minutes and months (`M`) are not guessed. */
const UNIT_WORDS: ReadonlyMap<string, string> = new Map([
  ...['sec', 'secs', 'second', 'seconds', 'S'].map((u) => [u, 's'] as const),
  ...['min', 'mins', 'minute', 'minutes'].map((u) => [u, 'm'] as const),
  ...['hr', 'hrs', 'hour', 'hours', 'H'].map((u) => [u, 'h'] as const),
  ...['msec', 'msecs', 'millisecond', 'milliseconds', 'MS'].map((u) => [u, 'ms'] as const),
  ...['usec', 'microsecond', 'microseconds'].map((u) => [u, 'us'] as const),
  ...['nsec', 'nanosecond', 'nanoseconds'].map((u) => [u, 'ns'] as const),
]);

/**
 * The Go duration `text` was most likely meant as, or `undefined` when there is no
 * obvious one. The caller decides whether the suggestion is worth showing (e.g. only
 * when it would be accepted).
 */
export function suggestGoDuration(text: string): string | undefined {
  const trimmed = text.trim();
  if (/^[0-9]+(\.[0-9]*)?$/.test(trimmed)) return `${trimmed}s`;
  const parts = [...trimmed.matchAll(/([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]+)/g)];
  if (
    parts.length === 0 ||
    parts
      .map((p) => p[0])
      .join('')
      .replace(/\s+/g, '') !== trimmed.replace(/\s+/g, '')
  )
    return undefined;
  let changed = trimmed !== text || /\s/.test(trimmed);
  const out = parts.map(([, number, unit]) => {
    if (unit === 'd' || unit === 'day' || unit === 'days') {
      changed = true;
      return `${Number(number) * 24}h`;
    }
    const go = UNIT_WORDS.get(unit!) ?? unit!;
    if (go !== unit) changed = true;
    return `${number}${go}`;
  });
  return changed ? out.join('') : undefined;
}
