// Exact ordering of npm versions (x.y.z[-pre][+build]) as SemVer 2.0.0 §11 orders them, for
// the pinned advisory list's ranges. No ranges syntax (^, ~, ||): the list states bounds.

const VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * `{ core: [major, minor, patch] as bigint, pre: string[] }` for a version string, or
 * undefined for anything else (a tag, a git URL, a range): such a version cannot be judged.
 */
export function parseVersion(text) {
  const match = VERSION.exec(text);
  if (match === null) return undefined;
  const [, major, minor, patch, pre] = match;
  return { core: [BigInt(major), BigInt(minor), BigInt(patch)], pre: pre === undefined ? [] : pre.split('.') };
}

/** SemVer §11.4: numeric identifiers compare as numbers and sort before alphanumeric ones. */
function compareIdentifiers(a, b) {
  const aNumeric = /^\d+$/.test(a);
  const bNumeric = /^\d+$/.test(b);
  if (aNumeric && bNumeric) return Math.sign(Number(BigInt(a) - BigInt(b)));
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SemVer §11.3-4: a prerelease sorts before its release; then identifier by identifier, the shorter list first. */
function comparePrereleases(a, b) {
  if (a.length === 0 || b.length === 0) return Math.sign(b.length - a.length);
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const order = compareIdentifiers(a[i], b[i]);
    if (order !== 0) return order;
  }
  return Math.sign(a.length - b.length);
}

/** -1, 0 or 1 as parsed version `a` sorts before, with or after `b` (build metadata ignored, §10). */
export function compareVersions(a, b) {
  for (let i = 0; i < 3; i += 1) {
    if (a.core[i] !== b.core[i]) return a.core[i] < b.core[i] ? -1 : 1;
  }
  return comparePrereleases(a.pre, b.pre);
}

/**
 * Whether a parsed version lies in an OSV-style range `{ introduced, fixed?, lastAffected? }`
 * (strings; introduced "0" means every earlier version): introduced <= v, and v < fixed or
 * v <= lastAffected; neither bound means every later version. Throws on a bound that does not parse.
 */
export function inRange(version, { introduced, fixed, lastAffected }) {
  const bound = (text) => parseVersion(text) ?? fail(text);
  if (introduced !== '0' && compareVersions(version, bound(introduced)) < 0) return false;
  if (fixed !== undefined) return compareVersions(version, bound(fixed)) < 0;
  if (lastAffected !== undefined) return compareVersions(version, bound(lastAffected)) <= 0;
  return true;
}

function fail(text) {
  throw new Error(`"${text}" is not a version of the form x.y.z[-pre][+build]`);
}
