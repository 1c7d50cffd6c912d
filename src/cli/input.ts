/**
 * Where `review` and `validate-config` read from: `-f/--filename` (repeatable; a file, a
 * folder, or `-` for standard input), as `kubectl apply -f` takes them. Standard input on a
 * terminal is refused instead of waited on: kubectl, too, never reads a terminal for `-f -`
 * silently.
 */
import { boundedText, readText } from '../kubernetes/manifests.js';
import { UsageError } from './cluster-state.js';

/** The error for a command given no input while standard input is a terminal. */
export const NO_INPUT = 'no input: give manifests with -f FILE (repeatable; a folder; - for standard input, piped or redirected)';

/** `FILE` arguments and `-f` values together, `-` when there are none (standard input). */
export function inputPaths(positional: readonly string[], filenames: readonly string[]): string[] {
  const paths = [...positional, ...filenames];
  if (paths.filter((p) => p === '-').length > 1) throw new UsageError('- (standard input) may be given once');
  return paths.length === 0 ? ['-'] : paths;
}

/**
 * All of standard input as UTF-8, at most `MAX_INPUT_BYTES`.
 *
 * @throws UsageError ({@link NO_INPUT}) when it is a terminal; ManifestError past the limit.
 */
export function readStdin(stdin: AsyncIterable<unknown> & { isTTY?: boolean } = process.stdin): Promise<string> {
  if (stdin.isTTY === true) return Promise.reject(new UsageError(NO_INPUT));
  return boundedText(stdin, 'STDIN');
}

/** A file's text, or standard input's for `-`; a file it cannot read is named in plain words. */
export function readInput(file: string): Promise<string> {
  return file === '-' ? readStdin() : readText(file);
}
