// The pinned advisory list (.ci/advisories.json): its shape, and which locked packages it
// names as affected. Pure: callers read the files and print.
import { z } from 'zod';
import { compareVersions, inRange, parseVersion } from './semver.mjs';

const bound = z.string().refine((text) => parseVersion(text) !== undefined, 'not a version of the form x.y.z[-pre][+build]');

/** One affected range as OSV states it: introduced ("0": from the first version), then fixed or lastAffected, or neither (no fix). */
const rangeSchema = z
  .object({ introduced: z.union([z.literal('0'), bound]), fixed: bound.optional(), lastAffected: bound.optional() })
  .strict()
  .refine((range) => range.fixed === undefined || range.lastAffected === undefined, 'give fixed or lastAffected, not both')
  .refine((range) => ordered(range), 'the upper bound must be above introduced');

function ordered({ introduced, fixed, lastAffected }) {
  const upper = fixed ?? lastAffected;
  if (introduced === '0' || upper === undefined) return true;
  const order = compareVersions(parseVersion(introduced), parseVersion(upper));
  return fixed === undefined ? order <= 0 : order < 0;
}

export const advisorySchema = z
  .object({
    id: z.string().regex(/^GHSA(-[0-9a-z]{4}){3}$/, 'a GHSA id, GHSA-xxxx-xxxx-xxxx'),
    aliases: z.array(z.string().regex(/^CVE-\d{4}-\d{4,}$/, 'a CVE id')).optional(),
    package: z.string().min(1),
    severity: z.enum(['moderate', 'high', 'critical']),
    ranges: z.array(rangeSchema).min(1),
    source: z.url().startsWith('https://'),
    note: z.string().optional(),
  })
  .strict();

export const advisoryListSchema = z
  .object({
    _comment: z.string().min(1),
    madeOn: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date, YYYY-MM-DD'),
    covers: z.string().min(1),
    advisories: z.array(advisorySchema).min(1),
  })
  .strict();

/**
 * The hits of a parsed list on `packages` (`{ name, version }[]`): one `{ name, version, id,
 * severity, range }` per package version inside one of an advisory's ranges. A version that
 * does not parse (a tag, a URL) is not judged: the list is of advisories, not of packages.
 */
export function affected(list, packages) {
  const hits = [];
  for (const { name, version } of packages) {
    const parsed = parseVersion(version);
    if (parsed === undefined) continue;
    for (const advisory of list.advisories.filter((a) => a.package === name)) {
      const range = advisory.ranges.find((r) => inRange(parsed, r));
      if (range !== undefined) hits.push({ name, version, id: advisory.id, severity: advisory.severity, range });
    }
  }
  return hits;
}

/** One line for a hit: `name@version: GHSA-… (severity), fixed in x.y.z` (or why there is no fix). */
export function hitLine({ name, version, id, severity, range }) {
  const fix = range.fixed !== undefined ? `fixed in ${range.fixed}` : range.lastAffected !== undefined ? `no fixed version after ${range.lastAffected}` : 'no fixed version';
  return `${name}@${version}: ${id} (${severity}), ${fix}`;
}

/** The first schema problem as one line: `advisories[3].ranges[0].fixed: <what is wrong>` (and how many more). */
export function schemaProblem(error) {
  const [first] = error.issues;
  const where = first.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('').replace(/^\./, '');
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${where || '(top level)'}: ${first.message}${more}`;
}
