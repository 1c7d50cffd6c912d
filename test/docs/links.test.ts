/**
 * The docs an operator reads link to files and headings that exist: every relative link of
 * README.md, CHANGELOG.md, docs/, deploy/, the bench's history and the folder READMEs resolves
 * to a file and, into a Markdown file, to one of its headings' anchors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { anchors, brokenLink, brokenMention, markdownFiles, relativeLinks, sectionMentions, slug } from './markdown-links.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILES = [
  'README.md',
  'CHANGELOG.md',
  'src/yaml-go/README.md',
  'test/kube/README.md',
  ...markdownFiles(ROOT, 'deploy'),
  ...markdownFiles(ROOT, 'docs'),
  ...markdownFiles(ROOT, 'bench/results/history'),
];

describe('links between the docs', () => {
  it('makes the anchors GitHub makes', () => {
    expect(slug("The API server's client certificate (`--client-ca-file`)")).toBe('the-api-servers-client-certificate---client-ca-file');
    expect(slug("`auto` (the chart's default, and `deploy/`)")).toBe('auto-the-charts-default-and-deploy');
    expect([...anchors('# A\n## A\n```\n# Not a heading\n```\n## [Linked](x.md) b\n')]).toEqual(['a', 'a-1', 'linked-b']);
  });

  it('reports a missing file and a missing anchor, and reads no link in code', () => {
    const links = relativeLinks(
      'README.md',
      '[a](docs/none.md) [b](docs/rules.md#no-such-rule) `[c](nowhere.md)`\n```\n[d](nowhere.md)\n```\n[e](https://example.com)',
    );
    expect(links.map((link) => brokenLink(ROOT, link))).toEqual([
      'README.md:1: (docs/none.md) names a file that does not exist',
      'README.md:1: (docs/rules.md#no-such-rule) names an anchor that no heading of docs/rules.md makes',
    ]);
  });

  it.each(FILES)('every relative link of %s resolves', (file) => {
    const links = relativeLinks(file, readFileSync(path.join(ROOT, file), 'utf8'));
    expect(links.map((link) => brokenLink(ROOT, link)).filter((problem) => problem !== undefined)).toEqual([]);
  });
});

/** The files whose comments and texts name sections of the docs (fixtures, generated copies and these examples left out). */
const MENTIONING = ['README.md', 'docs', 'deploy', 'src', 'scripts', 'bench', 'test', 'image']
  .flatMap((dir) =>
    dir.endsWith('.md')
      ? [dir]
      : readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile() && /\.(ts|md|ya?ml|json|txt|tpl|sh)$/.test(entry.name))
          .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name))),
  )
  .filter((file) => !/(^|\/)(fixtures|results|node_modules|files)\//.test(file) && !file.startsWith('test/docs/'))
  .sort();

describe('sections the docs and comments name', () => {
  it('reads a mention wrapped over comment lines, and reports a missing file or title', () => {
    const mentions = sectionMentions('deploy/x.yaml', '# see docs/install.md, "Network\n# policy" and README, \\"Gone\\" and docs/none.md, "A"');
    expect(mentions.map((m) => `${m.target} ${m.title}`)).toEqual(['docs/install.md Network policy', 'README.md Gone', 'docs/none.md A']);
    expect(mentions.map((m) => brokenMention(ROOT, m))).toEqual([
      undefined,
      'deploy/x.yaml: README.md, "Gone": no heading of README.md begins with that title',
      'deploy/x.yaml: docs/none.md, "A" names a file that does not exist',
    ]);
  });

  it('resolves a mention beside its writer first, and a title by its beginning', () => {
    const [mention] = sectionMentions('docs/cli.md', 'operations.md, "Rolling out"');
    expect(brokenMention(ROOT, mention!)).toBeUndefined();
  });

  it('finds the files it reads', () => {
    expect(MENTIONING).toEqual(expect.arrayContaining(['deploy/base/deployment.yaml', 'src/cli/main.ts', 'docs/cli.md']));
  });

  it.each(MENTIONING)('every section %s names exists', (file) => {
    const mentions = sectionMentions(file, readFileSync(path.join(ROOT, file), 'utf8'));
    expect(mentions.map((mention) => brokenMention(ROOT, mention)).filter((problem) => problem !== undefined)).toEqual([]);
  });
});

describe('docs/cli.md', () => {
  it('names every flag of the command line (src/cli/main.ts)', () => {
    const source = readFileSync(path.join(ROOT, 'src/cli/main.ts'), 'utf8');
    const flags = [...new Set([...source.matchAll(/['(](?:-[a-z], )?(--[a-z][a-z-]*)[ ',)]/g)].map((m) => m[1]!))];
    expect(flags.length).toBeGreaterThan(30);
    const doc = readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8');
    expect(flags.filter((flag) => !doc.includes(flag))).toEqual([]);
  });
});
