/**
 * A `helm upgrade` to a new chart or image, as the docs write it, keeps the user's values with
 * `--reset-then-reuse-values`: `--reuse-values` renders with the old chart's defaults (Helm's
 * pkg/action/upgrade.go, reuseValues), so a released chart's new image digest would be dropped.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { markdownFiles } from './markdown-links.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The `helm upgrade` commands of a Markdown text: lines of code blocks and inline code spans. */
function helmUpgrades(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const lines = text.split('\n').map((line) => line.trim());
  return [...spans, ...lines].filter((command) => command.startsWith('helm upgrade '));
}

/** Why `command` would keep the old image, or `undefined`. */
function keepsOldImage(command: string): string | undefined {
  const newChart = /\s--version\s|\s--set\s+image\.|helm upgrade \S+ deploy\//.test(command);
  return newChart && /\s--reuse-values\b/.test(command) ? command : undefined;
}

describe('helm upgrade in the docs', () => {
  it('tells a new chart or image from a value change on the installed chart', () => {
    expect(keepsOldImage('helm upgrade r oci://R/charts/c --version 0.2.0 -n ns --reuse-values')).toBeDefined();
    expect(keepsOldImage('helm upgrade r deploy/helm/c -n ns --reuse-values --set image.tag=0.1.1')).toBeDefined();
    expect(keepsOldImage('helm upgrade r oci://R/charts/c --version 0.2.0 -n ns --reset-then-reuse-values')).toBeUndefined();
    expect(keepsOldImage('helm upgrade r CHART -n ns --reuse-values --set enforcement.default=Deny')).toBeUndefined();
    expect(helmUpgrades('run `helm upgrade a b` then\n```sh\nhelm upgrade c d\n```\n')).toEqual(['helm upgrade a b', 'helm upgrade c d']);
  });

  it.each(['README.md', ...markdownFiles(ROOT, 'docs')])('%s upgrades to a new chart with --reset-then-reuse-values', (file) => {
    const commands = helmUpgrades(readFileSync(path.join(ROOT, file), 'utf8'));
    expect(commands.map(keepsOldImage).filter((problem) => problem !== undefined)).toEqual([]);
  });

  it('the README does upgrade that way', () => {
    expect(helmUpgrades(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).some((c) => c.includes('--reset-then-reuse-values'))).toBe(true);
  });
});
