/**
 * YAML text with comments from plain data: a value wrapped by {@link note} gets its comment
 * on the lines above its key (in a map) or its dash (in a list). Lists of strings are written
 * in flow style, double-quoted (`["v1"]`); strings longer than {@link FOLD_AT} characters as
 * folded blocks (`>-`), as kubectl users write CEL expressions.
 */
import { Document, type Node, Pair, parse, Scalar, YAMLMap, YAMLSeq } from 'yaml';

const FOLD_AT = 80;

/** A value with the comment written above it. */
class Note {
  constructor(
    readonly comment: string,
    readonly value: unknown,
  ) {}
}

/** `value` with `comment` (lines separated by `\n`, an empty line kept as `#`) above it. */
export function note(comment: string, value: unknown): Note {
  return new Note(comment, value);
}

/** The comment as the yaml library writes it: `# line` for each line, `#` for an empty one. */
function commentText(comment: string): string {
  return comment
    .split('\n')
    .map((line) => ` ${line}`)
    .join('\n');
}

function scalar(value: unknown, inList: boolean): Scalar {
  const node = new Scalar(value);
  if (typeof value === 'string' && inList) node.type = Scalar.QUOTE_DOUBLE;
  else if (typeof value === 'string' && value.length > FOLD_AT) node.type = Scalar.BLOCK_FOLDED;
  return node;
}

function toNode(value: unknown, inList = false): Node {
  if (value instanceof Note) {
    const node = toNode(value.value, inList);
    node.commentBefore = commentText(value.comment);
    return node;
  }
  if (Array.isArray(value)) {
    const seq = new YAMLSeq();
    seq.items = value.map((item) => toNode(item, true));
    seq.flow = value.length > 0 && value.every((item) => typeof item === 'string');
    return seq;
  }
  if (typeof value === 'object' && value !== null) {
    const map = new YAMLMap();
    map.items = Object.entries(value).map(([key, item]) => {
      const keyNode = new Scalar(key);
      if (item instanceof Note) keyNode.commentBefore = commentText(item.comment);
      return new Pair(keyNode, toNode(item instanceof Note ? item.value : item));
    });
    return map;
  }
  return scalar(value, inList);
}

/**
 * The YAML document of `value`, with `header` as its first comment lines.
 *
 * @throws Error when the text would not read back as `value` without its notes (a guard
 *   against the library's folding).
 */
export function yamlText(value: unknown, header: string): string {
  const doc = new Document();
  doc.contents = toNode(value) as typeof doc.contents;
  doc.commentBefore = commentText(header);
  const text = doc.toString({ lineWidth: 100, flowCollectionPadding: false, indentSeq: true });
  if (JSON.stringify(parse(text)) !== JSON.stringify(withoutNotes(value))) throw new Error('the YAML written does not read back as the data');
  return text;
}

function withoutNotes(value: unknown): unknown {
  if (value instanceof Note) return withoutNotes(value.value);
  if (Array.isArray(value)) return value.map(withoutNotes);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNotes(v)]));
  return value;
}
