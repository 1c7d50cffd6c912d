/**
 * A memo bounded in bytes, not entries: hostile reviews each carrying a distinct list of
 * 243 KiB took RSS past 512 MiB in a memo of 1 024 lists. Keys and values are weighed as
 * V8 holds them (2 bytes a UTF-16 unit, a pointer and a header per value string); the least
 * recently used entries leave first.
 */

/** The most bytes the memo holds, keys and values together. */
export const MEMO_MAX_BYTES = 2 * 1024 * 1024;

/** An entry over this share of the bound is not remembered: it would push out many smaller ones. */
const ENTRY_MAX_SHARE = 1 / 16;

/** What one more entry costs besides its key and value: the Map slot and the record. */
const ENTRY_OVERHEAD_BYTES = 96;

/** A string held by a remembered value: its characters, a pointer to it and its header. */
export const stringBytes = (text: string): number => 2 * text.length + 24;

export class ByteBoundedMemo<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;

  constructor(private readonly maxBytes = MEMO_MAX_BYTES) {}

  /** Bytes held now, keys, values and overhead (never over the bound). */
  get bytes(): number {
    return this.total;
  }

  /** The value for `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Remembers `value` of `valueBytes` under `key` unless the entry is over its own bound. */
  set(key: string, value: V, valueBytes: number): void {
    const bytes = stringBytes(key) + valueBytes + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes * ENTRY_MAX_SHARE || this.entries.has(key)) return;
    for (const [oldest, entry] of this.entries) {
      if (this.total + bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
    this.entries.set(key, { value, bytes });
    this.total += bytes;
  }
}
