/**
 * The one polling wait of the test suites (unit, e2e, soak). A bound, not a timing
 * assertion: it only fails a test whose condition never comes true.
 */

export interface UntilOptions {
  /** Give up after this many milliseconds (default 10 000). */
  timeoutMs?: number;
  /** Wait this many milliseconds between checks (default 50). */
  intervalMs?: number;
  /** Adds what was last seen to the timeout error, e.g. the last command output. */
  describe?: () => string;
}

/**
 * Calls `check` every `intervalMs` until it returns something other than `undefined` or
 * `false`, and returns that (`true` for a boolean condition, or a value found, e.g. a log
 * line; `null` can signal "stop waiting, it failed" to the caller).
 *
 * @throws Error naming `what` (and `describe()`, if given) when `timeoutMs` passes first.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  { timeoutMs = 10_000, intervalMs = 50, describe }: UntilOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${describe ? `: ${describe()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
