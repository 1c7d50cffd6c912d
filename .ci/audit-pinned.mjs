// The lock's production packages checked against the pinned advisory list
// (.ci/advisories.json), for when npm audit gets no report and no matching record of a
// past audit exists. docs/adr/0007-pinned-advisory-list.md says why and how it is kept.
//
//   node .ci/audit-pinned.mjs check  → one line; exit 0 when no locked production package
//                                      is in a listed range; else 1, and one line per hit
import { existsSync, readFileSync } from 'node:fs';
import { advisoryListSchema, affected, hitLine, schemaProblem } from './advisory-list.mjs';
import { productionPackages } from './lock-packages.mjs';

const LIST = '.ci/advisories.json';
/** A list older than this is still used, with a warning: advisories published since are not in it. */
const MAX_AGE_DAYS = 180;
const DAY_MS = 86_400_000;

/** The parsed list, or a one-line reason it cannot be used. */
function readList() {
  if (!existsSync(LIST)) return { problem: `no ${LIST}: no pinned advisory list to check the lock against; restore it from git` };
  let json;
  try {
    json = JSON.parse(readFileSync(LIST, 'utf8'));
  } catch (error) {
    return { problem: `${LIST} is not JSON (${error.message}); fix the file` };
  }
  const parsed = advisoryListSchema.safeParse(json);
  return parsed.success ? { list: parsed.data } : { problem: `${LIST} is not a valid advisory list: ${schemaProblem(parsed.error)}; fix the file` };
}

/** `; warning: …` when the list is older than MAX_AGE_DAYS, else nothing. */
function ageWarning(madeOn) {
  const ageDays = Math.floor((Date.now() - Date.parse(`${madeOn}T00:00:00Z`)) / DAY_MS);
  return ageDays > MAX_AGE_DAYS ? `; warning: the list is ${ageDays} days old (over ${MAX_AGE_DAYS}): advisories published since are not in it, refresh it` : '';
}

if (process.argv[2] !== 'check') {
  console.log('usage: node .ci/audit-pinned.mjs check');
  process.exit(2);
}
const { list, problem } = readList();
if (problem !== undefined) {
  console.log(problem);
  process.exit(1);
}
const packages = productionPackages();
const hits = affected(list, packages);
const checked = `checked ${packages.length} production packages against ${list.advisories.length} pinned advisories of ${LIST} (made ${list.madeOn})`;
console.log(`${checked}: ${hits.length === 0 ? 'none affected' : `${hits.length} affected`}${ageWarning(list.madeOn)}`);
for (const hit of hits) console.log(hitLine(hit));
process.exit(hits.length === 0 ? 0 : 1);
