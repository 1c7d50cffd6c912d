/**
 * What a review request's head says before its body is read: who sent it (the client
 * certificate), what the body is (content type, charset, encoding) and how long it is.
 * Pure but for reading the request's socket and raw headers.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { MAX_BODY_BYTES } from '../defaults.js';
import { quoteShown } from '../go/strconv-quote.js';
import { errored, type Refusal } from './review-answer.js';

/** Only JSON is accepted, as the kube-apiserver sends it (`application/json`, maybe with parameters). */
const JSON_CONTENT_TYPE = /^application\/json[ \t]*(;|$)/i;

const ENCODING_REFUSED = 'request body encoding or charset is not supported; send UTF-8 JSON without content encoding';

/** The answer to a body over `MAX_BODY_BYTES`, declared or (chunked) as it arrives. */
export const TOO_LARGE: Refusal = errored(413, `request body is larger than ${MAX_BODY_BYTES} bytes`);

/**
 * With client verification on, only a client whose certificate chains to the client CA
 * may send reviews. Both a missing and an untrusted certificate fail authentication: 401.
 */
export function clientRefusal(req: IncomingMessage): Refusal | undefined {
  const socket = req.socket as TLSSocket;
  if (socket.authorized) return undefined;
  const presented = Object.keys(socket.getPeerCertificate?.() ?? {}).length > 0;
  return errored(
    401,
    presented
      ? `client certificate is not trusted (${String(socket.authorizationError)}); this webhook accepts reviews only from a client certificate issued by its client CA`
      : 'a client certificate is required; this webhook accepts reviews only from a client certificate issued by its client CA',
  );
}

/**
 * The charset parameter of a content type, lower-cased and unquoted ('' when absent).
 * Parameters that do not parse are ignored, as body-parser did.
 */
function charsetOf(type: string): string {
  for (const param of type.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq >= 0 && param.slice(0, eq).trim().toLowerCase() === 'charset')
      return param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
  }
  return '';
}

/**
 * How many `rawHeaders` entries (names and values) Node folds into `req.headers`: its
 * parser's default `maxHeaderPairs` (the server leaves `maxHeadersCount` unset). On Node 20
 * a request may carry a few more in `rawHeaders`, which `req.headers` leaves out; Node 24
 * answers such a request 431 itself.
 */
const FOLDED_HEADER_ENTRIES = 2000;

export interface BodyHead {
  contentType: string;
  contentLength: string | undefined;
  transferEncoding: string | undefined;
  contentEncoding: string | undefined;
}

/**
 * The request headers the review path reads, taken from `req.rawHeaders` as Node would
 * fold them into `req.headers` (the first `Content-Type` and `Content-Length` win; repeated
 * `Transfer-Encoding` and `Content-Encoding` are joined with ", "; only the first
 * {@link FOLDED_HEADER_ENTRIES} entries count). `req.headers` is built on first use, every
 * header lower-cased into a new object: the review path never asks for it.
 */
export function bodyHead(raw: readonly string[]): BodyHead {
  const head: BodyHead = { contentType: '', contentLength: undefined, transferEncoding: undefined, contentEncoding: undefined };
  let typeSeen = false;
  const end = Math.min(raw.length, FOLDED_HEADER_ENTRIES);
  for (let i = 0; i < end; i += 2) {
    const name = raw[i]!;
    // Only the lengths of the four names are worth lower-casing for.
    if (name.length !== 12 && name.length !== 14 && name.length !== 16 && name.length !== 17) continue;
    const value = raw[i + 1]!;
    switch (name.toLowerCase()) {
      case 'content-type':
        if (!typeSeen) head.contentType = value;
        typeSeen = true;
        break;
      case 'content-length':
        head.contentLength ??= value;
        break;
      case 'transfer-encoding':
        head.transferEncoding = head.transferEncoding === undefined ? value : `${head.transferEncoding}, ${value}`;
        break;
      case 'content-encoding':
        head.contentEncoding = head.contentEncoding === undefined ? value : `${head.contentEncoding}, ${value}`;
        break;
    }
  }
  return head;
}

/** The body's length from `Content-Length`, in bytes: -1 for a chunked body, 0 for none. */
export function declaredBytesOf(head: BodyHead): number {
  if (head.transferEncoding !== undefined) return -1;
  return head.contentLength === undefined ? 0 : Number(head.contentLength);
}

/**
 * What the request head says about the body: 415 for another content type, a charset
 * other than UTF-8 or a content encoding (a compressed body could expand past the limit),
 * 400 for no body, 413 for a declared length over `MAX_BODY_BYTES`. The header is read
 * directly: express's `req.is` answers "no" for a request without a body, which deserves
 * "empty body" instead.
 */
export function bodyRefusal(head: BodyHead, declaredBytes: number): Refusal | undefined {
  const type = head.contentType;
  if (type !== 'application/json') {
    if (!JSON_CONTENT_TYPE.test(type)) return errored(415, `content type ${quoteShown(type)} is not supported; send application/json`);
    const charset = charsetOf(type);
    if (charset !== '' && charset !== 'utf-8') return errored(415, ENCODING_REFUSED);
  }
  if (declaredBytes === 0) return errored(400, 'request body is empty; send an admission.k8s.io/v1 AdmissionReview');
  const encoding = head.contentEncoding;
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return errored(415, ENCODING_REFUSED);
  if (declaredBytes > MAX_BODY_BYTES) return TOO_LARGE;
  return undefined;
}
