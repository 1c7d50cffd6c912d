/**
 * The version the CLI reports (`--version`): package.json's `version`, read at run time
 * from the package root (two levels above both `src/cli/` and `dist/cli/`; the image
 * ships package.json beside `dist/`), so it cannot drift from what was released.
 */
import { readFileSync } from 'node:fs';

/** @throws Error when package.json cannot be read or has no version string. */
export function packageVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const version = (pkg as { version?: unknown } | null)?.version;
  if (typeof version !== 'string') throw new Error('package.json has no version');
  return version;
}
