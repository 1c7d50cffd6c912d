// The record of the last successful advisory check (.ci/audit-record.json): the production
// dependencies of package-lock.json (name@version, as `npm audit --omit=dev` audits them)
// and when they were audited. `write` refreshes it after an audit that found nothing high
// or critical; `check` compares the lock with it when the advisory endpoint cannot be asked.
//
//   node .ci/audit-record.mjs write   → one line; exit 0
//   node .ci/audit-record.mjs check   → one line; exit 0 when the lock's production
//                                       dependencies are the audited ones, else 1
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { productionPackages } from './lock-packages.mjs';

const RECORD = '.ci/audit-record.json';
/** How many changed packages the failure line names before "and N more". */
const SHOWN_CHANGES = 5;

/** The changes from `before` to `after`, as `+added`, `-removed`, the first few named. */
function changes(before, after) {
  const was = new Set(before);
  const is = new Set(after);
  const diff = [...after.filter((p) => !was.has(p)).map((p) => `+${p}`), ...before.filter((p) => !is.has(p)).map((p) => `-${p}`)];
  const more = diff.length > SHOWN_CHANGES ? ` and ${diff.length - SHOWN_CHANGES} more` : '';
  return `${diff.slice(0, SHOWN_CHANGES).join(', ')}${more}`;
}

const command = process.argv[2];
const current = productionPackages().map(({ name, version }) => `${name}@${version}`);
if (command === 'write') {
  writeFileSync(RECORD, `${JSON.stringify({ auditedAt: new Date().toISOString().slice(0, 10), production: current }, null, 2)}\n`);
  console.log(`${RECORD} refreshed: ${current.length} production dependencies audited today (commit it when it changed)`);
} else if (command === 'check') {
  if (!existsSync(RECORD)) {
    console.log(`no ${RECORD}: no successful audit is on record to compare with; run .ci/audit where the advisory endpoint answers and commit the record`);
    process.exit(1);
  }
  const record = JSON.parse(readFileSync(RECORD, 'utf8'));
  const changed = changes(record.production, current);
  if (changed === '') {
    console.log(`checked against ${RECORD}: the ${current.length} production dependencies are those audited on ${record.auditedAt}, with no high or critical advisory then`);
  } else {
    console.log(`production dependencies changed since the audit of ${record.auditedAt} (${changed}) and could not be checked for advisories; run .ci/audit where the endpoint answers and commit the record`);
    process.exit(1);
  }
} else {
  console.log('usage: node .ci/audit-record.mjs write|check');
  process.exit(2);
}
