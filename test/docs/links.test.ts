/**
 * The docs an operator reads link to files and headings that exist: every relative link of
 * README.md, docs/, the bench's history and the folder READMEs resolves to a file and, into a
 * Markdown file, to one of its headings' anchors.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { anchors, brokenLink, markdownFiles, relativeLinks, slug } from './markdown-links.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILES = [
  'README.md',
  'deploy/components/README.md',
  'test/kube/README.md',
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

describe('docs/cli.md', () => {
  it('names every flag of the command line (src/cli/main.ts)', () => {
    const source = readFileSync(path.join(ROOT, 'src/cli/main.ts'), 'utf8');
    const flags = [...new Set([...source.matchAll(/['(](?:-[a-z], )?(--[a-z][a-z-]*)[ ',)]/g)].map((m) => m[1]!))];
    expect(flags.length).toBeGreaterThan(30);
    const doc = readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8');
    expect(flags.filter((flag) => !doc.includes(flag))).toEqual([]);
  });
});
