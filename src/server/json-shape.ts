/**
 * The shape of a JSON body, read before `JSON.parse`: nesting depth and token count, in one
 * linear pass over the bytes, no I/O. Parsed memory follows the token count (an empty
 * object or array costs ~40–70 bytes of heap, its text 2–3 bytes), and depth is what the
 * API server bounds itself; the bounds and measurements are docs/adr/0002-json-shape-bounds.md.
 */
/**
 * Deepest nesting a review body may have: 10 000 for the object, as the kube-apiserver's
 * own JSON decoder refuses deeper (`maxNestingDepth`, sigs.k8s.io/json
 * internal/golang/encoding/json/scanner.go, Go's encoding/json limit), plus the review's
 * two levels around `request.object`.
 */
export const MAX_JSON_DEPTH = 10_002;

/**
 * Most tokens (objects, arrays, strings, keys included, numbers, literals) a review body
 * may hold: 1 Mi. A review at 7 bytes per token fills `MAX_BODY_BYTES` (7 MiB) at this count;
 * real objects are sparser (the fixtures: 9–15 bytes per token; a list of IPs 14, env
 * variables with their managedFields 7.3), so only bodies of bare numbers, empty
 * containers or tiny keys reach it.
 */
export const MAX_JSON_TOKENS = 1024 * 1024;

/**
 * Heap bytes one token may cost once parsed: 80, above the 64–65 measured for an empty
 * object (Node 24.22.3 and 20.20, `bench/json-shapes.ts`; arrays 40, numbers 8–9).
 */
const PARSED_BYTES_PER_TOKEN = 80;
/** Heap bytes per body byte besides the tokens: the body itself, its text and its strings' copies. */
const PARSED_BYTES_PER_BODY_BYTE = 4;

/**
 * The most heap a body of `bodyBytes` can cost while read and parsed within the bounds: a
 * token takes at least 2 bytes of text (`0,`, `[]`), at most {@link MAX_JSON_TOKENS} count.
 * 108 MiB for a 7 MiB body; ~40 times the bytes of a small one.
 */
export function worstParsedBytes(bodyBytes: number): number {
  const tokens = Math.min(MAX_JSON_TOKENS, Math.ceil(bodyBytes / 2) + 1);
  return bodyBytes * PARSED_BYTES_PER_BODY_BYTE + tokens * PARSED_BYTES_PER_TOKEN;
}

/** The depth and token count of a body that is within the bounds. */
export interface JsonShape {
  depth: number;
  tokens: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Bytes that end a bare value (number, literal) outside strings. */
const DELIMITER = new Uint8Array(256);
for (const c of ' \t\r\n,:[]{}"') DELIMITER[c.charCodeAt(0)] = 1;

/**
 * Reads `body` (JSON as UTF-8: multi-byte sequences never hold `"` or `\`) and returns its
 * shape, or a one-line refusal naming the bound crossed. Malformed JSON is not judged here
 * (`JSON.parse` refuses it after); the scan stops at the first bound crossed.
 */
export function scanJsonShape(body: Uint8Array, maxDepth = MAX_JSON_DEPTH, maxTokens = MAX_JSON_TOKENS): JsonShape | string {
  let depth = 0;
  let deepest = 0;
  let tokens = 0;
  let inBare = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (DELIMITER[c] === 0) {
      if (!inBare) tokens++;
      inBare = true;
      continue;
    }
    inBare = false;
    if (c === QUOTE) {
      tokens++;
      // To the closing quote (an escape skips a byte): a byte loop measured 3× faster than indexOf per string.
      for (i++; i < body.length && body[i] !== QUOTE; i++) if (body[i] === BACKSLASH) i++;
    } else if (c === 0x5b || c === 0x7b) {
      tokens++;
      if (++depth > maxDepth)
        return `request body nests JSON deeper than ${maxDepth} levels (the API server's limit for an object); send the AdmissionReview the API server sent`;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
    if (tokens > maxTokens) return `request body holds more than ${maxTokens} JSON values and keys; send the AdmissionReview the API server sent`;
  }
  return { depth: deepest, tokens };
}
