/**
 * A streaming reader of one Kubernetes list response (`{"kind":"…List","metadata":{…},
 * "items":[{…},{…}]}`): each element of the top-level `items` array is handed over as
 * soon as its last byte has arrived, parsed on its own, so the response is never held
 * as one string (V8 caps a string at 512 MiB; a 50 000-pool list is 1 GB) and only one
 * item's full object is alive at a time. Everything outside `items` (apiVersion, kind,
 * `metadata.resourceVersion` and `metadata.continue`) is kept and parsed at the end.
 *
 * A byte scanner: UTF-8 continuation bytes are all ≥ 0x80, so the structural ASCII bytes
 * (`{ } [ ] " \`) are recognised without decoding; inside a string only `\` and `"` matter.
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
   * Reads the next bytes of the response.
   *
   * @throws SyntaxError when an item is not JSON (the caller abandons the list); whatever
   *   `onItem` throws.
   */
  write(chunk: Buffer): void {
    let itemStart = this.inItem ? 0 : -1;
    let restStart = this.inItems ? -1 : 0;
    let keyStart = this.readingKey ? 0 : -1;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const b = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === BACKSLASH) this.escaped = true;
        else if (b === QUOTE) {
          this.inString = false;
          if (this.readingKey) {
            this.closeKey(chunk.subarray(keyStart, i));
            keyStart = -1;
          }
        }
        continue;
      }
      if (this.inItems && this.depth === 2) {
        if (this.inItem) {
          // A scalar or string element ends at the first byte after it.
          if (b === COMMA || b === CLOSE_BRACKET || isSpace(b)) {
            this.itemParts.push(chunk.subarray(itemStart, i));
            itemStart = -1;
            this.emitItem();
          }
          if (b !== CLOSE_BRACKET) continue;
        } else if (b !== COMMA && b !== CLOSE_BRACKET && !isSpace(b)) {
          this.inItem = true;
          itemStart = i;
          if (b === QUOTE) {
            this.inString = true;
            continue;
          }
          if (b !== OPEN_BRACE && b !== OPEN_BRACKET) continue;
        }
      }
      if (b === QUOTE) {
        this.inString = true;
        if (this.depth === 1) {
          this.readingKey = true;
          keyStart = i + 1;
        }
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        this.depth++;
        if (!this.inItems && this.depth === 2 && b === OPEN_BRACKET && this.key === 'items') {
          // The rest keeps the `[` and, later, the `]`: `items: []`.
          this.pushRest(chunk.subarray(restStart, i + 1));
          restStart = -1;
          this.inItems = true;
        }
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        this.depth--;
        if (this.inItems && this.depth === 2) {
          this.itemParts.push(chunk.subarray(itemStart, i + 1));
          itemStart = -1;
          this.emitItem();
        } else if (this.inItems && this.depth === 1) {
          this.inItems = false;
          restStart = i;
        }
      }
    }
    if (this.inItem && itemStart >= 0) this.itemParts.push(chunk.subarray(itemStart));
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
    this.inItem = false;
    this.onItem(JSON.parse(text));
  }
}
