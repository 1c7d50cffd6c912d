/**
 * A streaming reader of one Kubernetes list response (`{"kind":"…List","metadata":{…},
 * "items":[{…},{…}]}`): each element of the top-level `items` array is handed over as
 * soon as its last byte has arrived, parsed on its own, so the response is never held
 * as one string (V8 caps a string at 512 MiB; a 50 000-pool list is 1 GB) and only one
 * item's full object is alive at a time. Everything outside `items` (apiVersion, kind,
 * `metadata.resourceVersion` and `metadata.continue`) is kept and parsed at the end.
 *
 * A byte scanner: UTF-8 continuation bytes are all ≥ 0x80, so the structural ASCII bytes
 * (`{ } [ ] " \`) are recognised without decoding; inside a string only `"` and the
 * backslashes right before it matter (an odd run escapes it).
 * Malformed JSON is found by `JSON.parse` of an item or of the rest, whose error is thrown.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** How many bytes a top-level key may have and still be recognised as `items`. */
const KEY_BYTES = 16;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** Strings shorter than this are scanned byte by byte: a call to `Buffer.indexOf` costs more than that. */
const SHORT_STRING_BYTES = 64;

/** The position of the next `"` in `chunk` from `from`, or -1. */
function nextQuote(chunk: Buffer, from: number): number {
  const n = chunk.length;
  const near = Math.min(n, from + SHORT_STRING_BYTES);
  for (let j = from; j < near; j++) if (chunk[j] === QUOTE) return j;
  return near < n ? chunk.indexOf(QUOTE, near) : -1;
}

/**
 * Whether an odd number of backslashes ends `chunk[from, end)`: then the byte at `end` is
 * escaped. Nothing before `from` counts: it is the string's opening quote, an escaped byte
 * or a quote found escaped.
 */
function oddBackslashesBefore(chunk: Buffer, end: number, from: number): boolean {
  let j = end - 1;
  while (j >= from && chunk[j] === BACKSLASH) j--;
  return ((end - 1 - j) & 1) === 1;
}

export class ListItemReader {
  /** Nesting depth of `{` and `[` after the current byte (1 inside the list object). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Within the top-level `items` array. */
  private inItems = false;
  /** Within one element of `items`; its bytes so far (from earlier chunks). */
  private inItem = false;
  private itemParts: Buffer[] = [];
  /** The bytes of the list outside `items`' elements (copies, so no chunk is kept whole). */
  private readonly restParts: Buffer[] = [];
  /** The last string closed at depth 1 (a key, when a value follows it), and one being read. */
  private key = '';
  private readingKey = false;
  private keyParts: Buffer[] = [];
  private ended = false;

  /** @param onItem called with each element of `items`, as `JSON.parse` gives it, in order. */
  constructor(private readonly onItem: (item: unknown) => void) {}

  /**
   * Reads the next bytes of the response. Inside a string only quotes are looked for (a long
   * string's with `Buffer.indexOf`, native), so most bytes are never looked at one by one.
   *
   * @throws SyntaxError when an item is not JSON (the caller abandons the list); whatever
   *   `onItem` throws.
   */
  write(chunk: Buffer): void {
    // The state in locals while scanning (V8 keeps them in registers), written back at the end.
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let inItems = this.inItems;
    let inItem = this.inItem;
    let itemStart = inItem ? 0 : -1;
    let restStart = inItems ? -1 : 0;
    let keyStart = this.readingKey ? 0 : -1;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (inString) {
        // The byte after a backslash that ended the last chunk is escaped.
        const from = escaped ? i + 1 : i;
        escaped = false;
        const quote = nextQuote(chunk, from);
        if (quote < 0) {
          escaped = oddBackslashesBefore(chunk, n, from);
          i = n;
          break;
        }
        i = quote + 1;
        if (oddBackslashesBefore(chunk, quote, from)) continue;
        inString = false;
        if (this.readingKey) {
          this.closeKey(chunk.subarray(keyStart, quote));
          keyStart = -1;
        }
        continue;
      }
      const b = chunk[i]!;
      if (inItems && depth === 2) {
        if (inItem) {
          // A scalar or string element ends at the first byte after it.
          if (b === COMMA || b === CLOSE_BRACKET || isSpace(b)) {
            this.itemParts.push(chunk.subarray(itemStart, i));
            itemStart = -1;
            inItem = false;
            this.emitItem();
          }
          if (b !== CLOSE_BRACKET) {
            i++;
            continue;
          }
        } else if (b !== COMMA && b !== CLOSE_BRACKET && !isSpace(b)) {
          inItem = true;
          itemStart = i;
          if (b === QUOTE) {
            inString = true;
            i++;
            continue;
          }
          if (b !== OPEN_BRACE && b !== OPEN_BRACKET) {
            i++;
            continue;
          }
        }
      }
      if (b === QUOTE) {
        inString = true;
        if (depth === 1) {
          this.readingKey = true;
          keyStart = i + 1;
        }
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        depth++;
        if (!inItems && depth === 2 && b === OPEN_BRACKET && this.key === 'items') {
          // The rest keeps the `[` and, later, the `]`: `items: []`.
          this.pushRest(chunk.subarray(restStart, i + 1));
          restStart = -1;
          inItems = true;
        }
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        depth--;
        if (inItems && depth === 2) {
          this.itemParts.push(chunk.subarray(itemStart, i + 1));
          itemStart = -1;
          inItem = false;
          this.emitItem();
        } else if (inItems && depth === 1) {
          inItems = false;
          restStart = i;
        }
      }
      i++;
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.inItems = inItems;
    this.inItem = inItem;
    if (inItem && itemStart >= 0) this.itemParts.push(chunk.subarray(itemStart));
    if (restStart >= 0) this.pushRest(chunk.subarray(restStart));
    if (this.readingKey && keyStart >= 0) this.keyParts.push(Buffer.from(chunk.subarray(keyStart)));
  }

  /**
   * The list without its items (`items: []`), once the whole response has been read.
   *
   * @throws SyntaxError when the response is not one complete JSON object.
   */
  end(): Record<string, unknown> {
    if (this.ended) throw new Error('the list was already ended');
    this.ended = true;
    if (this.inItem || this.depth !== 0) throw new SyntaxError('the list response ended before its JSON did');
    const rest: unknown = JSON.parse(Buffer.concat(this.restParts).toString('utf8'));
    if (rest === null || typeof rest !== 'object' || Array.isArray(rest)) throw new SyntaxError('the list response is not a JSON object');
    return rest as Record<string, unknown>;
  }

  private pushRest(part: Buffer): void {
    if (part.length > 0) this.restParts.push(Buffer.from(part));
  }

  private closeKey(last: Buffer): void {
    const parts = [...this.keyParts, last];
    const length = parts.reduce((sum, p) => sum + p.length, 0);
    this.key = length <= KEY_BYTES ? Buffer.concat(parts).toString('latin1') : '';
    this.keyParts = [];
    this.readingKey = false;
  }

  private emitItem(): void {
    const text = this.itemParts.length === 1 ? this.itemParts[0]!.toString('utf8') : Buffer.concat(this.itemParts).toString('utf8');
    this.itemParts = [];
    this.onItem(JSON.parse(text));
  }
}
