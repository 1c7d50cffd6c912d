/**
 * The repository's files as generators see them: paths relative to the repository root,
 * `/`-separated, whatever the working directory or whether the code runs from `scripts/`
 * (ts-jest) or from its build under `dist-scripts/` (`npm run generate`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest directory above this file holding package.json: the repository root. */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

export const REPO_ROOT = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The text of `file` (relative to the root), or undefined when there is none. */
export function readRepoFile(file: string): string | undefined {
  const absolute = path.join(REPO_ROOT, file);
  return existsSync(absolute) ? readFileSync(absolute, 'utf8') : undefined;
}

/** Every regular file under `dir` (relative to the root), recursively, sorted; symbolic links are not followed. */
export function listRepoFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(REPO_ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}
