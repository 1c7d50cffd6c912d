/**
 * Properties (anchors, tags) right before the `:` of a block mapping's first pair with an
 * empty key (`  &a : x`, `  !!str : x`): libyaml (scannerc.go `yaml_parser_fetch_value`)
 * inserts the KEY token before the saved simple key, the first property, so the properties
 * belong to the key, an empty scalar, and the mapping has none (Go reads the pair `"": x`).
 * The `yaml` package gives them to the mapping when they stand on a line after its parent's
 * `:` or `-`; this moves them to the first pair's key in the CST, before it is composed.
 */

/** A CST token as a plain object (the `yaml` package's `CST.Token` shapes). */
type Token = { type?: string; [key: string]: unknown };
type Item = { start?: Token[]; key?: Token | null; sep?: Token[]; value?: Token | null };

/** Anchors and tags: a node's properties. */
const isProperty = (t: Token) => t.type === 'anchor' || t.type === 'tag';

/**
 * Moves, throughout the block nodes of `document` (a CST document token, changed in
 * place), each run of properties that ends the tokens before a block mapping on the line
 * of its first pair's `:` (an empty key without properties of its own) to that pair's
 * start, where the `yaml` package composes them into the key. Walked without recursion.
 */
export function givePropertiesToEmptyKeys(document: Token): void {
  const stack: Token[] = [document];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'document') visit(node['start'] as Token[] | undefined, node['value'] as Token | undefined, stack);
    if (node.type !== 'block-map' && node.type !== 'block-seq') continue;
    for (const item of node['items'] as Item[]) {
      visit(item.start, item.key ?? undefined, stack);
      visit(item.sep, item.value ?? undefined, stack);
    }
  }
}

/** Moves the properties of `before` that stand on `node`'s line when `node` is such a mapping; queues `node`. */
function visit(before: Token[] | undefined, node: Token | undefined, stack: Token[]): void {
  if (node === undefined || node === null) return;
  stack.push(node);
  if (before === undefined || node.type !== 'block-map') return;
  const first = (node['items'] as Item[])[0];
  if (first === undefined || (first.key !== null && first.key !== undefined) || first.sep?.[0]?.type !== 'map-value-ind') return;
  if ((first.start ?? []).some((t) => isProperty(t) || t.type === 'explicit-key-ind')) return;
  // Only blanks and properties after the last line break before the mapping (so on the line of its `:`).
  const lineStart = before.findLastIndex((t) => t.type === 'newline') + 1;
  const from = before.findIndex((t, i) => i >= lineStart && isProperty(t));
  if (lineStart === 0 || from < 0 || before.slice(lineStart).some((t) => t.type !== 'space' && !isProperty(t))) return;
  first.start = [...before.splice(from), ...(first.start ?? [])];
}
