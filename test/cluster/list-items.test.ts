/**
 * The streaming list reader: every element of `items` and the rest of the list, whatever
 * the chunk boundaries (split inside strings, escapes, multi-byte characters and keys).
 */
import fc from 'fast-check';
import { ListItemReader } from '../../src/cluster/list-items.js';

function read(chunks: Buffer[]): { items: unknown[]; rest: Record<string, unknown> } {
  const items: unknown[] = [];
  const reader = new ListItemReader((item) => items.push(item));
  for (const chunk of chunks) reader.write(chunk);
  return { items, rest: reader.end() };
}

/** `bytes` cut at `cuts` (positions, any order). */
function cut(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    chunks.push(bytes.subarray(from, c));
    from = c;
  }
  return chunks;
}

const pool = (name: string) => ({
  metadata: { name, annotations: { 'ipam.spidernet.io/pair-pool': `${name}-v6 "quoted" \\ back` } },
  spec: { ips: ['10.0.0.1-10.0.0.9'], nodeName: ['节点-ü'] },
  status: { allocatedIPs: JSON.stringify({ '10.0.0.1': { pod: 'ns/p', podUid: 'u' } }), items: [{ nested: '[' }] },
});

describe('ListItemReader', () => {
  it('hands over each item and keeps the rest of the list with items: [], whatever the chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (names, cuts, spaced) => {
        const list = {
          apiVersion: 'v1',
          kind: 'SpiderIPPoolList',
          metadata: { resourceVersion: '42', continue: 'tok"en' },
          items: names.map(pool),
          after: { items: [1] },
        };
        const bytes = Buffer.from(spaced ? JSON.stringify(list, null, 2) : JSON.stringify(list));
        const { items, rest } = read(cut(bytes, cuts));
        expect(items).toEqual(list.items);
        expect(rest).toEqual({ ...list, items: [] });
      }),
    );
  });

  it('reads strings made of backslashes and quotes, whatever the chunks (an escaped quote never ends a string)', () => {
    const text = fc.array(fc.constantFrom('\\', '"', 'a', 'ü', '}', ']', ','), { maxLength: 12 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.array(text, { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 16 }), (texts, cuts) => {
        const list = {
          metadata: { continue: texts.join('') },
          items: texts.map((t) => ({ metadata: { name: t }, status: { allocatedIPs: JSON.stringify({ [t]: t }) } })),
        };
        const { items, rest } = read(cut(Buffer.from(JSON.stringify(list)), cuts));
        expect(items).toEqual(list.items);
        expect(rest).toEqual({ ...list, items: [] });
      }),
      { numRuns: 300 },
    );
  });

  it('hands over elements that are not objects as JSON.parse reads them', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 8 }), (cuts) => {
        const items = [null, 5, 'x, ]', { metadata: { name: 'a' } }, [1, [2]], true, -1.5e3];
        const { items: got } = read(cut(Buffer.from(JSON.stringify({ items, kind: 'List' })), cuts));
        expect(got).toEqual(items);
      }),
    );
  });

  it('reads a list whose key order differs, and one whose items are null', () => {
    expect(read([Buffer.from('{"items":[{"a":1}],"metadata":{"resourceVersion":"1"}}')])).toEqual({
      items: [{ a: 1 }],
      rest: { items: [], metadata: { resourceVersion: '1' } },
    });
    expect(read([Buffer.from('{"items":null,"metadata":{}}')])).toEqual({ items: [], rest: { items: null, metadata: {} } });
  });

  it('does not take a nested "items" key, or a long key ending in items, for the list\'s items', () => {
    const { items, rest } = read([Buffer.from('{"metadata":{"items":[1]},"xxxxxxxxxxxxxxxxxxxxitems":[2],"items":[3]}')]);
    expect(items).toEqual([3]);
    expect(rest).toEqual({ metadata: { items: [1] }, xxxxxxxxxxxxxxxxxxxxitems: [2], items: [] });
  });

  it.each([
    ['a truncated response', '{"items":[{"a":1},{"b":'],
    ['a malformed item', '{"items":[{"a":}]}'],
    ['a response that is not an object', '[1,2]'],
    ['an empty response', ''],
  ])('throws a SyntaxError for %s', (_what, text) => {
    expect(() => read([Buffer.from(text)])).toThrow(SyntaxError);
  });
});
