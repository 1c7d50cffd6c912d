/**
 * The overlays README "Install", docs/operations.md and docs/install.md tell an operator to write, taken from
 * those files themselves, so that what they show is what the tests render: every ```yaml
 * block whose first line is `# my-overlay/kustomization.yaml…`, written beside a copy of
 * deploy/ as they say.
 */
import { cp, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DEPLOY_DIR = path.join(REPO_ROOT, 'deploy');

export interface ReadmeOverlay {
  /** The block's first line, after `# my-overlay/kustomization.yaml`. */
  title: string;
  text: string;
}

/** The my-overlay blocks of README.md, docs/operations.md, then docs/install.md, each file's in order. */
export async function readmeOverlays(): Promise<ReadmeOverlay[]> {
  const readme = (await Promise.all(['README.md', 'docs/operations.md', 'docs/install.md'].map((file) => readFile(path.join(REPO_ROOT, file), 'utf8')))).join(
    '\n',
  );
  return [...readme.matchAll(/^```yaml\n(# my-overlay\/kustomization\.yaml(.*)\n[\s\S]*?)^```$/gm)].map((m) => ({ title: m[2]!.trim(), text: m[1]! }));
}

/**
 * A temporary directory holding a copy of deploy/ (without deploy/tls/ unless `withTls`
 * files are written by the caller) and `my-overlay/kustomization.yaml` = `overlay`.
 *
 * @returns the directory and the overlay's path.
 */
export async function writeOverlayBesideDeploy(overlay: string): Promise<{ dir: string; overlayDir: string; deployDir: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'readme-overlay-'));
  const deployDir = path.join(dir, 'deploy');
  await cp(DEPLOY_DIR, deployDir, { recursive: true, filter: (source) => path.basename(source) !== 'tls' });
  const overlayDir = path.join(dir, 'my-overlay');
  await mkdir(overlayDir);
  await writeFile(path.join(overlayDir, 'kustomization.yaml'), overlay);
  return { dir, overlayDir, deployDir };
}
