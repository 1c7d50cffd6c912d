/**
 * What Spiderpool's Go YAML decoders (`gopkg.in/yaml.v2` and `yaml.v3`, both built on
 * libyaml's YAML 1.1 scanner) refuse although the `yaml` package, a YAML 1.2 parser,
 * accepts it. Each check was found by the differential test against the real decoders
 * (`test/e2e/go-oracle.test.ts`); each returns why the text is refused, or `undefined`.
 */
import { isAlias, isCollection, isNode, isScalar, visit, type Alias, type Document, type LineCounter } from 'yaml';
import { quoteShown } from '../field/quote.js';

/**
 * Nesting refused before the YAML parser sees the text: the parser recurses per level and
 * a few thousand levels overflow the stack (and can abort V8). Spiderpool's configuration
 * nests three levels; Go's own limit is 10 000, so this is stricter than Go on purpose.
 */
const MAX_FLOW_DEPTH = 100;
const MAX_LINE_PREFIX = 400;
/**
 * Spiderpool's conf.yml is a few KiB. Parsing is linear, but the parser builds an error
 * object per bad token: a hostile 256 KiB document held the event loop for seconds and
 * took hundreds of MiB, and every review waits behind it.
 */
const MAX_TEXT_CHARS = 32 * 1024;

/**
 * Characters libyaml refuses anywhere in the stream ("control characters are not
 * allowed"), and the YAML 1.1 line breaks NEL, LS and PS, which it reads as line breaks
 * where a YAML 1.2 parser reads them as text.
 */
const FORBIDDEN_CHARACTER = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]/;

/**
 * Limits of this webhook, not of Go: text it refuses to parse to stay responsive under
 * hostile input. Real configurations are far inside them.
 */
export function limitProblem(text: string): string | undefined {
  if (text.length > MAX_TEXT_CHARS) return `is ${text.length} characters long, more than ${MAX_TEXT_CHARS}`;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_FLOW_DEPTH) return `nests flow collections ([ or {) more than ${MAX_FLOW_DEPTH} deep`;
    } else if ((c === 0x5d || c === 0x7d) && depth > 0) depth--;
  }
  const prefix = /^(?:[ \t]|[-?:](?=[ \t]|$))*/;
  for (const line of text.split('\n')) {
    if (prefix.exec(line)![0].length > MAX_LINE_PREFIX) {
      return `nests block collections deeper than ${MAX_LINE_PREFIX} columns of indentation`;
    }
  }
  return undefined;
}

/** What libyaml refuses that is visible in the text itself: forbidden characters, directives. */
export function textProblem(text: string): string | undefined {
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    const bad = FORBIDDEN_CHARACTER.exec(line);
    if (bad) {
      const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      return `line ${index + 1}, column ${bad.index + 1}: contains U+${code}, a control character or YAML 1.1 line break`;
    }
  }
  return directiveProblem(lines);
}

/** libyaml accepts one `%YAML 1.1` and `%TAG` directives; any other directive is an error. */
function directiveProblem(lines: readonly string[]): string | undefined {
  let yamlDirectives = 0;
  for (const [index, line] of lines.entries()) {
    if (!line.startsWith('%')) {
      if (/^\s*(#|$)/.test(line)) continue;
      return undefined; // directives stand only before the document begins
    }
    const [name, version] = line.slice(1).trim().split(/[ \t]+/);
    if (name === 'TAG') continue;
    if (name === 'YAML' && version === '1.1' && ++yamlDirectives === 1) continue;
    return `line ${index + 1}: directive ${quoteShown(line.trim())} is not supported (only one %YAML 1.1 and %TAG)`;
  }
  return undefined;
}

/** Where a node starts, as `line L, column C: `, or "" when it has no position. */
export function at(node: unknown, lines: LineCounter): string {
  const start = (node as { range?: [number, number, number] } | null)?.range?.[0];
  if (start === undefined) return '';
  const { line, col } = lines.linePos(start);
  return `line ${line}, column ${col}: `;
}

/**
 * One pass over the parsed document: resolves every alias to the nearest anchor of that
 * name before it (as YAML and both Go decoders do; resolving each alias by searching the
 * document would be quadratic), and finds what libyaml refuses in it:
 * - an alias to an anchor not seen before ("unknown anchor"), wherever it stands;
 * - a double-quoted escape YAML 1.1 lacks: `\/`, or `\u` of a UTF-16 surrogate;
 * - a `?` inside a plain value in a flow collection (`{serverUrl: http://h/x?y=1}`):
 *   libyaml ends the value there and then fails.
 *
 * @returns the resolved aliases, or why the document is refused.
 */
export function inspectDocument(
  doc: Document.Parsed,
  text: string,
  lines: LineCounter,
): { aliases: Map<Alias, unknown> } | { problem: string } {
  const anchors = new Map<string, unknown>();
  const aliases = new Map<Alias, unknown>();
  let problem: string | undefined;
  visit(doc, (_key, node, path) => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) problem = `${at(node, lines)}refers to unknown anchor ${quoteShown(node.source)}`;
      else aliases.set(node, target);
    } else if (isScalar(node)) {
      const source = node.range ? text.slice(node.range[0], node.range[1]) : '';
      if (node.type === 'QUOTE_DOUBLE' && hasYaml12OnlyEscape(source)) {
        problem = `${at(node, lines)}uses an escape that YAML 1.1 lacks (\\/ or a \\u surrogate); write the character itself`;
      } else if (node.type === 'PLAIN' && source.includes('?') && path.some((p) => isCollection(p) && p.flow)) {
        problem = `${at(node, lines)}has "?" in an unquoted value inside { } or [ ]; quote the value`;
      }
    }
    if (problem !== undefined) return visit.BREAK;
    if (isNode(node) && node.anchor) anchors.set(node.anchor, node);
    return undefined;
  });
  return problem === undefined ? { aliases } : { problem };
}

/** Whether double-quoted source text uses `\/` or a `\u` escape of a surrogate. */
function hasYaml12OnlyEscape(source: string): boolean {
  for (const match of source.matchAll(/\\(u[0-9a-fA-F]{4}|.)/gs)) {
    const escape = match[1]!;
    if (escape === '/' || /^u[dD][89a-fA-F]/.test(escape)) return true;
  }
  return false;
}
