/**
 * The `yaml` package's error messages in one line: they end with a code frame on further
 * lines, and a syntax error puts its place last, before the colon that introduced that frame.
 */
import { escapeUnprintable, truncate } from '../go/strconv-quote.js';

/** The first line of `message`, printable and bounded. */
export const firstLine = (message: string): string => escapeUnprintable(truncate(message.split('\n', 1)[0]!.trim()));

/** A syntax error in one line, its place first: `line 3, column 1: Map keys must be unique`. */
export function syntaxReason(message: string): string {
  const line = message.split('\n', 1)[0]!.trim();
  const place = / at (line \d+, column \d+):?$/.exec(line);
  return firstLine(place === null ? line : `${place[1]}: ${line.slice(0, place.index)}`);
}
