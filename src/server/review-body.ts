/**
 * A review body: its bytes gathered as they arrive (bounded), then turned into JSON, or why
 * it cannot be: the one step between the bytes read and the reviewer, shared by every path
 * that parses a review body.
 */
import { MAX_BODY_BYTES } from '../defaults.js';
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

/**
 * A request body as it arrives, bounded by `MAX_BODY_BYTES`: one buffer of the declared
 * length (the first chunk itself when it is the whole body, as an ordinary review arrives:
 * no copy), or the chunks of a chunked one (`declaredBytes` -1).
 */
export class BodyBytes {
  receivedBytes = 0;
  private whole: Buffer | undefined;
  private readonly chunks: Buffer[] = [];

  constructor(private readonly declaredBytes: number) {}

  /** Adds `chunk`; false once a chunked body has grown past `MAX_BODY_BYTES`. */
  add(chunk: Buffer): boolean {
    if (this.declaredBytes < 0) {
      this.chunks.push(chunk);
      return (this.receivedBytes += chunk.length) <= MAX_BODY_BYTES;
    }
    if (this.whole === undefined && chunk.length === this.declaredBytes) {
      this.whole = chunk;
      this.receivedBytes = chunk.length;
    } else {
      // Node delivers at most Content-Length bytes; copy() never writes past the buffer anyway.
      this.receivedBytes += chunk.copy((this.whole ??= Buffer.allocUnsafe(this.declaredBytes)), this.receivedBytes);
    }
    return true;
  }

  /** The whole body; undefined when it ended short of its `Content-Length`. */
  bytes(): Buffer | undefined {
    if (this.declaredBytes < 0) return Buffer.concat(this.chunks, this.receivedBytes);
    return this.receivedBytes === this.declaredBytes ? this.whole : undefined;
  }
}
