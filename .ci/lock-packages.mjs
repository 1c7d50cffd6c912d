// The production dependencies of package-lock.json as `npm audit --omit=dev` audits them:
// every package entry that is not dev-only and has a version (lockfileVersion 2/3 "packages").
import { readFileSync } from 'node:fs';

const LOCK = 'package-lock.json';

/**
 * `{ name, version }` of every production package in the lock, once each, sorted by
 * `name@version`. A package locked at two versions appears twice. Throws when the lock is
 * missing or not JSON (the callers run after `npm ci`, which needs both).
 */
export function productionPackages() {
  const { packages = {} } = JSON.parse(readFileSync(LOCK, 'utf8'));
  const byKey = new Map();
  for (const [path, entry] of Object.entries(packages)) {
    if (path === '' || entry.dev === true || entry.version === undefined) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    byKey.set(`${name}@${entry.version}`, { name, version: entry.version });
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p);
}
