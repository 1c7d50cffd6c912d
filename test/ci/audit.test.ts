/**
 * `.ci/audit` when the advisory endpoint cannot be reached (npm pointed at a closed port on
 * loopback): it checks the lock against the record of the last successful audit and passes
 * only when the production dependencies are the audited ones, saying so in one line; it
 * never passes with no check.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Port 9 (discard) on loopback: nothing listens, so npm's request is refused at once. */
const UNREACHABLE_REGISTRY = 'http://127.0.0.1:9';
const RECORD = '.ci/audit-record.json';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ci-audit-'));
  await mkdir(path.join(dir, '.ci'));
  for (const file of ['.ci/audit', '.ci/audit-record.mjs', 'package.json', 'package-lock.json']) await cp(path.join(REPO, file), path.join(dir, file));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** Runs `bash .ci/audit` in the copy, offline; bounded by a timeout. */
function audit(env: NodeJS.ProcessEnv = {}) {
  const run = spawnSync('bash', ['.ci/audit'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      CI_REQUIRE_AUDIT: 'false',
      npm_config_registry: UNREACHABLE_REGISTRY,
      npm_config_fetch_retries: '0',
      npm_config_cache: path.join(dir, 'npm-cache'),
      npm_config_update_notifier: 'false',
      ...env,
    },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Writes the record as an audit that found nothing would, then lets `edit` change it. */
async function recordAudit(edit: (production: string[]) => string[] = (p) => p): Promise<void> {
  expect(spawnSync('node', ['.ci/audit-record.mjs', 'write'], { cwd: dir, encoding: 'utf8', timeout: 30_000 }).status).toBe(0);
  const record = JSON.parse(await readFile(path.join(dir, RECORD), 'utf8'));
  await writeFile(path.join(dir, RECORD), JSON.stringify({ ...record, production: edit(record.production) }));
}

const UNREACHABLE = /^npm audit could not get a report \(request to http:\/\/127\.0\.0\.1:9\/.* failed, reason: connect ECONNREFUSED 127\.0\.0\.1:9\); /;

describe('.ci/audit with the advisory endpoint unreachable', () => {
  it('passes when the production dependencies are those on record, saying in one line that it used the record', async () => {
    await recordAudit();
    const { code, stdout } = audit();
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`${UNREACHABLE.source}checked against \\.ci/audit-record\\.json: the \\d+ production dependencies are those audited on \\d{4}-\\d{2}-\\d{2}, with no high or critical advisory then\\n$`));
  });

  it('fails when a production dependency changed since, naming the change and that it could not be checked', async () => {
    await recordAudit((production) => production.map((p) => (p.startsWith('express@') ? 'express@5.0.0' : p)));
    const { code, stderr } = audit();
    expect(code).toBe(1);
    expect(stderr).toMatch(UNREACHABLE);
    expect(stderr).toMatch(/production dependencies changed since the audit of \d{4}-\d{2}-\d{2} \(\+express@[0-9.]+, -express@5\.0\.0\) and could not be checked for advisories; /);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('fails when no audit is on record', () => {
    const { code, stderr } = audit();
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`${UNREACHABLE.source}no \\.ci/audit-record\\.json: no successful audit is on record`));
  });

  it('fails with CI_REQUIRE_AUDIT=true even when the record matches', async () => {
    await recordAudit();
    const { code, stderr } = audit({ CI_REQUIRE_AUDIT: 'true' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/and CI_REQUIRE_AUDIT=true: failing\n$/);
  });
});
