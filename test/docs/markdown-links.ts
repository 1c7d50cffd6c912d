/**
 * Relative links of Markdown files and the anchors their headings make, as GitHub renders them
 * (github-slugger: lower case, punctuation dropped, spaces as `-`, repeats numbered `-1`, `-2`).
 * Fenced code is skipped and inline code counts as text, so a link shown as code is not read.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** A link of `file` to `target` (a path relative to it, possibly empty) and its `#anchor`. */
export interface MarkdownLink {
  file: string;
  line: number;
  target: string;
  anchor: string | undefined;
}

const FENCE = /^\s*(```|~~~)/;

/** `text` with fenced blocks blanked (lines kept, so line numbers stay right). */
function withoutFences(text: string): string[] {
  let inFence = false;
  return text.split('\n').map((line) => {
    if (FENCE.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  });
}

/** GitHub's anchor for a heading's text. */
export function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings, repeats numbered as GitHub numbers them. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of withoutFences(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The relative links of `text` (not http(s), mailto or protocol-relative). */
export function relativeLinks(file: string, text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  withoutFences(text).forEach((raw, index) => {
    const line = raw.replace(/`[^`]*`/g, 'x');
    for (const m of line.matchAll(/\]\(([^)\s]*)(?:\s+"[^"]*")?\)/g)) {
      const href = m[1]!;
      if (/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(href)) continue;
      const hash = href.indexOf('#');
      links.push({ file, line: index + 1, target: hash < 0 ? href : href.slice(0, hash), anchor: hash < 0 ? undefined : href.slice(hash + 1) });
    }
  });
  return links;
}

/**
 * What is wrong with `link`, read from the files under `root`: a target that does not exist,
 * or an anchor its Markdown target has no heading for; `undefined` when it resolves.
 */
export function brokenLink(root: string, link: MarkdownLink): string | undefined {
  const from = path.join(root, link.file);
  const target = link.target === '' ? from : path.resolve(path.dirname(from), decodeURIComponent(link.target));
  const where = `${link.file}:${link.line}: (${link.target}${link.anchor === undefined ? '' : `#${link.anchor}`})`;
  if (!existsSync(target)) return `${where} names a file that does not exist`;
  if (link.anchor === undefined || !target.endsWith('.md') || statSync(target).isDirectory()) return undefined;
  if (anchors(readFileSync(target, 'utf8')).has(link.anchor)) return undefined;
  return `${where} names an anchor that no heading of ${path.relative(root, target)} makes`;
}

/** The Markdown files under `dir` (relative to `root`), recursively. */
export function markdownFiles(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** A mention of a section by its title, as comments and docs write it: `docs/x.md, "Title"`. */
export interface SectionMention {
  file: string;
  target: string;
  title: string;
}

/**
 * The `FILE.md, "Title"` and `README, "Title"` mentions of `text` (comment markers and line
 * breaks inside one are read as spaces, so a mention wrapped over two comment lines counts).
 */
export function sectionMentions(file: string, text: string): SectionMention[] {
  const flat = text.replace(/\\"/g, '"').replace(/\s*\n\s*(?:#|\/\/|\*|--)?\s*/g, ' ');
  return [...flat.matchAll(/(?<![\w/.-])((?:[\w.-]+\/)*[\w.-]+\.md|README),? "([^"]{1,80})"/g)].map((m) => ({
    file,
    target: m[1] === 'README' ? 'README.md' : m[1]!,
    title: m[2]!,
  }));
}

/** The titles of a Markdown text's headings, as read (code marks and link targets dropped). */
function headingTitles(text: string): string[] {
  return withoutFences(text).flatMap((line) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    return heading === null ? [] : [heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '')];
  });
}

/**
 * What is wrong with `mention`: a file that exists neither beside its writer nor from `root`,
 * or no heading of it that begins with the title; `undefined` when it resolves.
 */
export function brokenMention(root: string, mention: SectionMention): string | undefined {
  const where = `${mention.file}: ${mention.target}, "${mention.title}"`;
  const target = [path.join(root, path.dirname(mention.file), mention.target), path.join(root, mention.target)].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
  if (target === undefined) return `${where} names a file that does not exist`;
  if (headingTitles(readFileSync(target, 'utf8')).some((title) => title.startsWith(mention.title))) return undefined;
  return `${where}: no heading of ${path.relative(root, target)} begins with that title`;
}
