/**
 * `serve` without a cluster connection must not load @kubernetes/client-node (about twice
 * the idle memory and start time): the CLI's static import graph stays clear of it, and
 * the modules that need it are imported dynamically. Nor express (the server):
 * `serve` imports them once its first list requests are sent.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Static `import … from`/`export … from` specifiers of a module, type-only imports left out (erased). */
function staticImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?\sfrom\s+'([^']+)'/gms)].map((m) => m[1]!);
}

/** Every package a module loads at start, following relative imports (`.js` → `.ts`). */
function packagesLoadedBy(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return packages;
}

const SRC = join(process.cwd(), 'src');

describe('what the CLI loads at start', () => {
  it('not @kubernetes/client-node', () => {
    const packages = packagesLoadedBy(join(SRC, 'cli/main.ts'));
    expect(packages).toContain('commander'); // the walk does find the CLI's packages
    expect(packages).not.toContain('@kubernetes/client-node');
  });

  it("not express before a command runs: serve's first list request goes out first", () => {
    for (const entry of ['cli/main.ts', 'cli/serve.ts']) {
      const packages = packagesLoadedBy(join(SRC, entry));
      expect(packages).toContain('pino');
      expect(packages).not.toContain('express');
    }
  });

  it('the walk sees client-node where it is imported statically', () => {
    expect(packagesLoadedBy(join(SRC, 'cluster/pool-cache.ts'))).toContain('@kubernetes/client-node');
    expect(packagesLoadedBy(join(SRC, 'server/serve.ts'))).toContain('express');
  });
});
