/**
 * A block scalar's final line break as libyaml reads it. libyaml (scannerc.go
 * `yaml_parser_scan_block_scalar`) appends after the last content line only the line
 * breaks it read there: the line's own break (clip `|` `>`, keep `|+` `>+`) and the
 * breaks of the blank lines after it (keep). The `yaml` package ends every clipped or kept
 * scalar with `\n`, also when its last line ends the text without a break
 * (`httpRequestTimeout: |` then `    30s` as the last bytes: libyaml "30s", `yaml` "30s\n").
 */
import { CST, visit, type Document } from 'yaml';

/** A CST token as a plain object (the `yaml` package's `CST.BlockScalar` fields read here). */
type Token = { type?: string; offset?: number; source?: string; indent?: unknown; props?: unknown };

/**
 * Drops, in place, the final `\n` of each block scalar of `doc` for which the `yaml`
 * package added one that libyaml does not: its text (after the header) ends without a line
 * break, on a content line (a non-space character, or more spaces than the scalar's
 * indentation, `resolveBlockScalar`'s rule, libyaml's too) or, for keep, on its first and
 * only line. `tokens`: every CST token of the parse (block scalars among them); a scalar
 * is found by its offset (the header's), its node's `range[0]`.
 */
export function dropUnreadBreaks(doc: Document.Parsed, tokens: readonly Token[]): void {
  const unread = new Set(tokens.filter(endsUnbroken).map((t) => t.offset));
  if (unread.size === 0) return;
  visit(doc, {
    Scalar(_key, node) {
      if (
        (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') &&
        unread.has(node.range?.[0]) &&
        typeof node.value === 'string' &&
        node.value.endsWith('\n')
      ) {
        node.value = node.value.slice(0, -1);
      }
    },
  });
}

/** Whether a clipped or kept block scalar's text ends with no line break after its last content line. */
function endsUnbroken(token: Token): boolean {
  const { source } = token;
  const header = Array.isArray(token.props) ? (token.props[0] as Token | undefined)?.source : undefined;
  if (token.type !== 'block-scalar' || typeof source !== 'string' || header === undefined || header.includes('-')) return false;
  if (source === '' || source.endsWith('\n')) return false;
  const lines = source.split('\n');
  // One line after the header, not ended: no break read at all.
  if (lines.length === 1) return true;
  const last = lines[lines.length - 1]!;
  if (hasContent(last)) return true;
  // Spaces only: a content line when more indented than the scalar.
  const indicator = Number(/[1-9]/.exec(header)?.[0] ?? 0);
  const first = lines.find(hasContent);
  if (first === undefined) return false;
  const indent = indicator > 0 ? Number(token.indent) + indicator : /^ */.exec(first)![0].length;
  return last.length > indent;
}

/** A line with more than its indentation spaces (a CRLF's CR aside), as `splitLines` of `resolveBlockScalar` tells them. */
const hasContent = (line: string): boolean => !/^ *\r?$/.test(line);

/** A CST block mapping's item, as the `yaml` package's `CST.BlockMap` holds it. */
type MapItem = { start?: Token[]; key?: Token | null; sep?: Token[]; value?: Token | null };

/**
 * Whether libyaml reaches `item`'s value through its `:` (parserc.go
 * `yaml_parser_parse_block_mapping_value`): a `:` on the key's own line, or after a `?` key
 * a `:` at the mapping's column (`indent`). A `:` on a later line at another column is one
 * Go refuses ("could not find expected ':'", "did not find expected key"): no header is
 * padded after it, so the `yaml` package's refusal stands.
 */
function colonReadByLibyaml(item: MapItem, text: string, indent: unknown): boolean {
  const sep = item.sep ?? [];
  const colon = sep.findIndex((t) => t.type === 'map-value-ind');
  if (colon < 0) return false;
  if (!sep.slice(0, colon).some((t) => t.type === 'newline')) return true;
  const explicit = (item.start ?? []).some((t) => t.type === 'explicit-key-ind');
  const at = sep[colon]!.offset;
  return explicit && typeof at === 'number' && column(text, at) === indent;
}

/** The column of `offset` in `text` (0 first), counted from the last LF before it. */
const column = (text: string, offset: number): number => offset - (text.lastIndexOf('\n', offset - 1) + 1);

/**
 * The header offsets (`|` or `>`) of block scalars that stand at their block mapping's
 * indentation on the line after a key whose `:` has no value yet (`  key:` then `  |`):
 * libyaml reads such a scalar as that key's value (scannerc.go saves no simple key for a
 * block scalar, so nothing needs a `:` after it, and parserc.go
 * `yaml_parser_parse_block_mapping_value` takes the next node whatever its column); the
 * `yaml` package reads it as the next key ("Implicit keys need to be on a single line").
 * A space put before each header makes the `yaml` package read it as libyaml does: the
 * scalar's indentation is its mapping's either way. `tokens`: the CST's top-level tokens of `text`.
 */
export function headersAtKeyIndent(tokens: readonly unknown[], text: string): number[] {
  const out: number[] = [];
  const stack: unknown[] = [...tokens];
  while (stack.length > 0) {
    const node = stack.pop() as (Token & { items?: MapItem[]; value?: unknown }) | null | undefined;
    if (node === null || typeof node !== 'object') continue;
    if (node.type === 'document') stack.push(node.value);
    if (!Array.isArray(node.items)) continue;
    node.items.forEach((item, i) => {
      stack.push(item.key, item.value);
      const before = node.items![i - 1];
      if (node.type !== 'block-map' || before === undefined || item.key?.type !== 'block-scalar') return;
      // Only the header on its line: properties before it (`&a |`) save a simple key, which libyaml then refuses without its ":".
      const alone = (item.start ?? []).every((t) => t.type === 'space' || t.type === 'newline' || t.type === 'comment');
      const awaitsValue = colonReadByLibyaml(before, text, node.indent) && (before.value === undefined || before.value === null);
      const at = item.key.offset;
      if (alone && awaitsValue && typeof at === 'number' && column(text, at) === node.indent) out.push(at);
    });
  }
  return out.sort((a, b) => a - b);
}

/**
 * Where each block scalar of a text stands: [start, end) offsets from its header to the
 * end of its last line, ascending, as the `yaml` package's CST of it (`tokens`, the
 * parser's top-level tokens) has them (a block scalar ends at the first non-empty line
 * less indented than its text, libyaml's rule too: scannerc.go `yaml_parser_scan_block_scalar`).
 */
export function blockScalarSpans(tokens: Iterable<unknown>): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const stack: unknown[] = [...tokens];
  while (stack.length > 0) {
    const token = stack.pop() as { type?: string; offset?: number; key?: unknown; value?: unknown; items?: unknown[] } | null | undefined;
    if (token === null || typeof token !== 'object') continue;
    if (token.type === 'block-scalar') spans.push([token.offset!, token.offset! + CST.stringify(token as CST.BlockScalar).length]);
    stack.push(token.key, token.value, ...(token.items ?? []));
  }
  return spans.sort((a, b) => a[0] - b[0]);
}
