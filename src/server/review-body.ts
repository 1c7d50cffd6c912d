/**
 * A review body turned into JSON, or why it cannot be: the one step between the bytes read
 * and the reviewer, shared by every path that parses a review body.
 */
import { scanJsonShape } from './json-shape.js';

/** A body parsed, or the HTTP refusal to answer instead. */
export type ParsedBody = { ok: true; value: unknown } | { ok: false; code: 400; message: string };

/**
 * Parses `body` (UTF-8, an optional byte order mark dropped; invalid sequences become
 * U+FFFD, as Go's decoder reads them). A body nested deeper or holding more tokens than the
 * API server sends (json-shape.ts) is refused before `JSON.parse`, which would spend
 * ~50 bytes of heap per token and block the event loop on it.
 */
export function parseReviewBody(body: Buffer): ParsedBody {
  const shape = scanJsonShape(body);
  if (typeof shape === 'string') return { ok: false, code: 400, message: shape };
  try {
    return { ok: true, value: JSON.parse(utf8Text(body)) };
  } catch {
    return { ok: false, code: 400, message: 'request body is not valid JSON' };
  }
}

/** The body as text: UTF-8 (invalid sequences become U+FFFD), without a byte order mark. */
function utf8Text(body: Buffer): string {
  return body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.toString('utf8', 3) : body.toString('utf8');
}
