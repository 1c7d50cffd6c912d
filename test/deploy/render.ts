/**
 * Renders `deploy/` with the real kustomize (`kubectl kustomize`), for e2e tests, and reads
 * it without kustomize for the Node-only tests.
 *
 * `deploy/tls/` is gitignored and only exists after `spiderpool-iaas-webhook certs`
 * has run, so the directory is copied to a temporary one and stand-in certificate files
 * are written there when absent; kustomize only base64-encodes them, it never parses
 * them. Set KUBECTL to use another kubectl binary.
 */
import { execFile } from 'node:child_process';
import { access, cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';

const execFileAsync = promisify(execFile);

/** Files `spiderpool-iaas-webhook certs --out deploy/tls` writes. */
export const TLS_FILE_NAMES = ['tls.crt', 'tls.key', 'ca.crt', 'ca.key'] as const;

/** PEM-shaped stand-in text for one of TLS_FILE_NAMES; not a usable certificate or key. */
export function standInPem(fileName: string): string {
  const label = fileName.endsWith('.key') ? 'PRIVATE KEY' : 'CERTIFICATE';
  const body = Buffer.from(`stand-in ${fileName} for rendering deploy/ in tests`).toString('base64');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** Writes stand-ins for the files of TLS_FILE_NAMES that `tlsDir` lacks. */
export async function writeStandInTls(tlsDir: string): Promise<void> {
  await mkdir(tlsDir, { recursive: true });
  for (const name of TLS_FILE_NAMES) {
    const file = path.join(tlsDir, name);
    const exists = await access(file).then(
      () => true,
      () => false,
    );
    if (!exists) await writeFile(file, standInPem(name), { mode: 0o600 });
  }
}

/** Parses multi-document YAML into plain objects, dropping empty documents. */
export function parseManifests(text: string): Record<string, unknown>[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    return typeof value === 'object' && value !== null ? [value as Record<string, unknown>] : [];
  });
}

/** `kubectl kustomize` of a copy of `deployDir` (with stand-in TLS files), parsed. */
export async function renderWithKubectl(deployDir: string): Promise<Record<string, unknown>[]> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'spiderpool-iaas-webhook-deploy-'));
  try {
    const copy = path.join(workDir, 'deploy');
    await cp(deployDir, copy, { recursive: true });
    await writeStandInTls(path.join(copy, 'tls'));
    const { stdout } = await execFileAsync(process.env['KUBECTL'] ?? 'kubectl', ['kustomize', copy], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return parseManifests(stdout);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * The objects of the kustomization in `dir` as its files hold them: every document of each
 * file of `resources:` (a directory: its kustomization, recursively) and of each
 * `components:` entry's, in that order, with no kustomize transformation applied. For
 * deploy/ as committed the transformations (namespace, images, replacements) change
 * nothing; test/e2e/deploy.test.ts checks that `kubectl kustomize deploy` renders the same.
 */
export async function readKustomization(dir: string): Promise<Record<string, unknown>[]> {
  const kustomization = KustomizationSchema.parse(parse(await readFile(path.join(dir, 'kustomization.yaml'), 'utf8')));
  const objects: Record<string, unknown>[] = [];
  for (const entry of [...kustomization.resources, ...kustomization.components]) {
    const at = path.join(dir, entry);
    objects.push(...((await stat(at)).isDirectory() ? await readKustomization(at) : parseManifests(await readFile(at, 'utf8'))));
  }
  return objects;
}

const KustomizationSchema = z.looseObject({ resources: z.array(z.string()).default([]), components: z.array(z.string()).default([]) });
