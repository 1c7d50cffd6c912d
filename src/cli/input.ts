/**
 * Where `review` and `validate-config` read from: `-f/--filename` (repeatable; a file, a
 * folder, or `-` for standard input), as `kubectl apply -f` takes them. Standard input on a
 * terminal is refused instead of waited on: kubectl, too, never reads a terminal for `-f -`
 * silently.
 */
import { boundedText, readText } from '../kubernetes/manifests.js';
import { UsageError } from './cluster-state.js';

/** The error for `review` given no input while standard input is a terminal. */
export const NO_INPUT = 'no input: give manifests with -f FILE (repeatable; a folder; - for standard input, piped or redirected)';

/** The error for `validate-config -` while standard input is a terminal. */
export const NO_CONFIG_INPUT =
  'no input: standard input is a terminal; give the file (validate-config FILE), or pipe or redirect conf.yml or its ConfigMap into validate-config -';

/** `FILE` arguments and `-f` values together, `-` when there are none (standard input). */
export function inputPaths(positional: readonly string[], filenames: readonly string[]): string[] {
  const paths = [...positional, ...filenames];
  if (paths.filter((p) => p === '-').length > 1) throw new UsageError('- (standard input) may be given once');
  return paths.length === 0 ? ['-'] : paths;
}

/**
 * All of standard input as UTF-8, at most `MAX_INPUT_BYTES`.
 *
 * @throws UsageError (`noInput`, by default {@link NO_INPUT}) when it is a terminal; ManifestError past the limit.
 */
export function readStdin(stdin: AsyncIterable<unknown> & { isTTY?: boolean } = process.stdin, noInput = NO_INPUT): Promise<string> {
  if (stdin.isTTY === true) return Promise.reject(new UsageError(noInput));
  return boundedText(stdin, 'STDIN');
}

/**
 * `validate-config`'s one file, or standard input's text for `-`; a file it cannot read is
 * named in plain words, a terminal refused with {@link NO_CONFIG_INPUT}.
 */
export function readInput(file: string, stdin: AsyncIterable<unknown> & { isTTY?: boolean } = process.stdin): Promise<string> {
  return file === '-' ? readStdin(stdin, NO_CONFIG_INPUT) : readText(file);
}
