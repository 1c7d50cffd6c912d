/**
 * `.ci/audit` when the advisory endpoint cannot be reached (npm pointed at a closed port on
 * loopback): it checks the lock against the record of the last successful audit when that
 * matches, else against the pinned advisory list, saying in one line which it used; it
 * fails naming each locked package in a listed range, and never passes with no check.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Port 9 (discard) on loopback: nothing listens, so npm's request is refused at once. */
const UNREACHABLE_REGISTRY = 'http://127.0.0.1:9';
const RECORD = '.ci/audit-record.json';
const LIST = '.ci/advisories.json';
const CI_FILES = ['.ci/audit', '.ci/audit-record.mjs', '.ci/audit-pinned.mjs', '.ci/advisory-list.mjs', '.ci/semver.mjs', '.ci/lock-packages.mjs', LIST];

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ci-audit-'));
  await mkdir(path.join(dir, '.ci'));
  for (const file of [...CI_FILES, 'package.json', 'package-lock.json']) await cp(path.join(REPO, file), path.join(dir, file));
  // The list's schema is zod's, a production dependency: resolved as after `npm ci`.
  await symlink(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
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

/** Rewrites the copy's pinned list through `edit`. */
async function editList(edit: (list: { madeOn: string; advisories: unknown[] }) => void): Promise<void> {
  const list = JSON.parse(await readFile(path.join(dir, LIST), 'utf8'));
  edit(list);
  await writeFile(path.join(dir, LIST), JSON.stringify(list));
}

/** The version of `name` in the lock's production packages (its top-level copy). */
async function locked(name: string): Promise<string> {
  const lock = JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8'));
  return lock.packages[`node_modules/${name}`].version;
}

const advisory = (id: string, pkg: string, range: Record<string, string>) => ({
  id,
  package: pkg,
  severity: 'high',
  ranges: [range],
  source: `https://example.invalid/${id}`,
});

const UNREACHABLE = /^npm audit could not get a report \(request to http:\/\/127\.0\.0\.1:9\/.* failed, reason: connect ECONNREFUSED 127\.0\.0\.1:9\); /;

describe('.ci/audit with the advisory endpoint unreachable', () => {
  it('passes when the production dependencies are those on record, saying in one line that it used the record', async () => {
    await recordAudit();
    const { code, stdout } = audit();
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `${UNREACHABLE.source}checked against \\.ci/audit-record\\.json: the \\d+ production dependencies are those audited on \\d{4}-\\d{2}-\\d{2}, with no high or critical advisory then\\n$`,
      ),
    );
  });

  it('passes against the pinned list when the record no longer matches the lock, naming the list, its date and counts', async () => {
    await recordAudit((production) => production.map((p) => (p.startsWith('express@') ? 'express@5.0.0' : p)));
    const { code, stdout } = audit();
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `${UNREACHABLE.source}checked \\d+ production packages against \\d+ pinned advisories of \\.ci/advisories\\.json \\(made \\d{4}-\\d{2}-\\d{2}\\): none affected\\n$`,
      ),
    );
  });

  it('passes the real lock against the pinned list when no audit is on record', () => {
    const { code, stdout, stderr } = audit();
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toMatch(
      new RegExp(
        `${UNREACHABLE.source}checked \\d+ production packages against \\d+ pinned advisories of \\.ci/advisories\\.json \\(made 2026-12-07\\): none affected`,
      ),
    );
    expect(stdout.trim().split('\n')).toHaveLength(1);
  });

  it('fails on a listed advisory covering a locked version, one line per hit with its fix', async () => {
    const express = await locked('express');
    const [major, minor, patch] = express.split('.').map(Number);
    const next = `${major}.${minor}.${patch! + 1}`;
    const ws = await locked('ws');
    await editList((list) =>
      list.advisories.push(
        advisory('GHSA-xxxx-0001-test', 'express', { introduced: '0', fixed: next }),
        advisory('GHSA-xxxx-0002-test', 'ws', { introduced: ws, lastAffected: ws }),
      ),
    );
    const { code, stderr } = audit();
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`${UNREACHABLE.source}checked \\d+ production packages against \\d+ pinned advisories .*: 2 affected$`));
    expect(lines.slice(1).sort()).toEqual([
      `express@${express}: GHSA-xxxx-0001-test (high), fixed in ${next}`,
      `ws@${ws}: GHSA-xxxx-0002-test (high), no fixed version after ${ws}`,
    ]);
  });

  it('passes when the locked version is the fixed one (fixed is exclusive)', async () => {
    const ws = await locked('ws');
    await editList((list) => list.advisories.push(advisory('GHSA-xxxx-0003-test', 'ws', { introduced: '0', fixed: ws })));
    expect(audit().code).toBe(0);
  });

  it('warns, and still passes, when the list is older than 180 days', async () => {
    await editList((list) => (list.madeOn = '2020-01-01'));
    const { code, stdout } = audit();
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /\(made 2020-01-01\): none affected; warning: the list is \d+ days old \(over 180\): advisories published since are not in it, refresh it\n$/,
    );
  });

  it('fails in one line when neither a matching record nor a valid list is there', async () => {
    await editList((list) => delete (list.advisories[0] as Record<string, unknown>).source);
    const invalid = audit();
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(
      new RegExp(`${UNREACHABLE.source}\\.ci/advisories\\.json is not a valid advisory list: advisories\\[0\\]\\.source: .*; fix the file\\n$`),
    );
    await rm(path.join(dir, LIST));
    const missing = audit();
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      new RegExp(`${UNREACHABLE.source}no \\.ci/advisories\\.json: no pinned advisory list to check the lock against; restore it from git\\n$`),
    );
  });

  it('fails with CI_REQUIRE_AUDIT=true even when the record matches', async () => {
    await recordAudit();
    const { code, stderr } = audit({ CI_REQUIRE_AUDIT: 'true' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/and CI_REQUIRE_AUDIT=true: failing\n$/);
  });
});
