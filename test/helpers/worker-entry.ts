/**
 * The warn-only worker module (src/server/warn-only-worker.ts) runnable under jest: a
 * worker thread loads JavaScript, not ts-jest's in-memory output, so every module of `src/`
 * is transpiled (TypeScript's `transpileModule`, no type check; ~1 s) into a temporary
 * directory beside a link to the repository's `node_modules`.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sources(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') ? [join(dir, e.name)] : []))),
  );
  return nested.flat();
}

export interface BuiltWorker {
  /** The worker module to hand to `isolateWarnOnly.entry`. */
  entry: URL;
  /** Removes the directory. */
  remove(): Promise<void>;
}

/** `src/` transpiled into a temporary directory; its warn-only worker module. */
export async function buildWorkerEntry(): Promise<BuiltWorker> {
  const dir = await mkdtemp(join(tmpdir(), 'webhook-worker-'));
  await writeFile(join(dir, 'package.json'), '{"type":"module"}');
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const file of await sources(join(ROOT, 'src'))) {
    const out = join(dir, relative(ROOT, file)).replace(/\.ts$/, '.js');
    const { outputText } = ts.transpileModule(await readFile(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, outputText);
  }
  return { entry: pathToFileURL(join(dir, 'src', 'server', 'warn-only-worker.js')), remove: () => rm(dir, { recursive: true, force: true }) };
}
