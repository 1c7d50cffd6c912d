/**
 * The folder layering of src/ (docs/development.md, "Layers"): every relative import goes
 * to the same folder or to a lower layer, and the folder graph has no cycle. The table is
 * read from the document, so the rule and its statement cannot drift apart.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const SRC = path.join(ROOT, 'src');

/** `folder/` or a top-level `file.ts` → its layer, from the fenced table under "## Layers". */
function layerTable(markdown: string): Map<string, number> {
  const section = markdown.split(/^## Layers$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = section.split('```text')[1]?.split('```')[0] ?? '';
  const table = new Map<string, number>();
  for (const line of block.split('\n')) {
    const match = /^(\d+)\s+(.*)$/.exec(line.trim());
    if (!match) continue;
    for (const unit of match[2]!.split(/\s+/)) {
      if (!/^[a-z0-9-]+(\/|\.ts)$/.test(unit)) break; // the description follows the folders
      table.set(unit.replace(/\/$/, ''), Number(match[1]));
    }
  }
  return table;
}

/** The unit of a path under src/: its top folder, or the file itself at the top. */
const unitOf = (file: string): string => path.relative(SRC, file).split(path.sep)[0]!;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** Relative imports of a file (static, `export … from`, dynamic `import()`), as files under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.\.?\/[^'"]+)['"]/gm)].map((m) =>
    path.normalize(path.join(path.dirname(file), m[1]!.replace(/\.js$/, '.ts'))),
  );
}

interface Edge {
  from: string;
  to: string;
  /** `src/a/x.ts → src/b/y.ts`, for the failure message. */
  where: string;
}

/** What breaks the layering: units without a layer, imports upward or sideways, cycles between units. */
function layeringProblems(edges: readonly Edge[], units: readonly string[], table: ReadonlyMap<string, number>): string[] {
  const problems = units.filter((u) => !table.has(u)).map((u) => `src/${u} has no layer in docs/development.md`);
  for (const { from, to, where } of edges) {
    const [a, b] = [table.get(from), table.get(to)];
    if (a !== undefined && b !== undefined && b >= a) problems.push(`${where}: layer ${a} imports layer ${b} (only lower layers may be imported)`);
  }
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) (next.get(from) ?? next.set(from, new Set()).get(from)!).add(to);
  const state = new Map<string, 'open' | 'done'>();
  const visit = (unit: string, trail: string[]): void => {
    if (state.get(unit) === 'done') return;
    if (state.get(unit) === 'open') {
      problems.push(`folder cycle: ${[...trail.slice(trail.indexOf(unit)), unit].join(' → ')}`);
      return;
    }
    state.set(unit, 'open');
    for (const to of next.get(unit) ?? []) visit(to, [...trail, unit]);
    state.set(unit, 'done');
  };
  for (const unit of next.keys()) visit(unit, []);
  return problems;
}

const table = layerTable(readFileSync(path.join(ROOT, 'docs/development.md'), 'utf8'));
const files = sourceFiles(SRC);
const edges: Edge[] = files.flatMap((file) =>
  importsOf(file)
    .filter((target) => unitOf(target) !== unitOf(file))
    .map((target) => ({ from: unitOf(file), to: unitOf(target), where: `${path.relative(ROOT, file)} → ${path.relative(ROOT, target)}` })),
);

describe('folder layering of src/', () => {
  it('docs/development.md states a layer for every folder and top-level file of src/', () => {
    expect(table.size).toBeGreaterThan(10);
    expect(new Set(table.values()).size).toBeLessThanOrEqual(8);
    expect([...new Set(files.map(unitOf))].filter((u) => !table.has(u))).toEqual([]);
  });

  it('every import goes to the same folder or a lower layer, and no folders import each other in a cycle', () => {
    expect(edges.length).toBeGreaterThan(50);
    expect(layeringProblems(edges, [...new Set(files.map(unitOf))], table)).toEqual([]);
  });

  it('the check reports an upward import, a sideways one, a cycle and a folder without a layer', () => {
    const small = new Map([
      ['field', 1],
      ['kubernetes', 1],
      ['rules', 5],
      ['admission', 6],
    ]);
    const edge = (from: string, to: string): Edge => ({ from, to, where: `src/${from}/x.ts → src/${to}/y.ts` });
    expect(layeringProblems([edge('rules', 'field'), edge('admission', 'rules')], ['field', 'rules', 'admission'], small)).toEqual([]);
    expect(layeringProblems([edge('rules', 'admission')], ['rules', 'admission'], small)).toEqual([
      'src/rules/x.ts → src/admission/y.ts: layer 5 imports layer 6 (only lower layers may be imported)',
    ]);
    expect(layeringProblems([edge('field', 'kubernetes')], ['field', 'kubernetes'], small)).toEqual([
      'src/field/x.ts → src/kubernetes/y.ts: layer 1 imports layer 1 (only lower layers may be imported)',
    ]);
    expect(layeringProblems([edge('rules', 'admission'), edge('admission', 'rules')], [], small)).toContain('folder cycle: rules → admission → rules');
    expect(layeringProblems([], ['server'], small)).toEqual(['src/server has no layer in docs/development.md']);
  });

  it('reads dynamic and re-exporting imports too', () => {
    // cli/cluster-state.ts reaches cluster/list-state.ts only through `await import(…)`.
    expect(importsOf(path.join(SRC, 'cli/cluster-state.ts'))).toContain(path.join(SRC, 'cluster/list-state.ts'));
    expect(edges.some((e) => e.from === 'index.ts' && e.to === 'rules')).toBe(true); // `export … from`
  });
});
