/**
 * The port of Go's `path/filepath.Match` (src/go/filepath-match.ts), step by step and
 * compiled, against Go's own on generated patterns and names that lean on the syntax
 * (stars, classes, ranges, negation, escapes, separators, multi-byte characters). Needs Go.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { BAD_PATTERN, compileGoPattern, goMatch } from '../../src/go/filepath-match.js';

const ORACLE_DIR = fileURLToPath(new URL('match-oracle', import.meta.url));
let dir: string;
let binary: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'match-oracle-'));
  binary = join(dir, 'match-oracle');
  execFileSync('go', ['build', '-o', binary, '.'], { cwd: ORACLE_DIR, stdio: 'inherit', env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' } });
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function askGo(cases: readonly { pattern: string; name: string }[]): (boolean | typeof BAD_PATTERN)[] {
  const out = execFileSync(binary, [], { input: `${cases.map((c) => JSON.stringify(c)).join('\n')}\n`, maxBuffer: 64 * 1024 * 1024 });
  return out
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const a = JSON.parse(line) as { matched: boolean; error?: string };
      if (a.error !== undefined && a.error !== BAD_PATTERN) throw new Error(a.error);
      return a.error === BAD_PATTERN ? BAD_PATTERN : a.matched;
    });
}

const piece = fc.constantFrom('a', 'b', 'z', '-', '/', '*', '?', '[', ']', '^', '\\', 'é', '☺', '𝄞', '0', '9');
const nameChar = fc.constantFrom('a', 'b', 'z', '-', '/', ']', '^', '\\', '*', 'é', '☺', '𝄞', '0', '5');

test('agrees with Go on 50 000 generated patterns and names', () => {
  const cases = fc.sample(
    fc.record({ pattern: fc.array(piece, { maxLength: 10 }).map((p) => p.join('')), name: fc.array(nameChar, { maxLength: 8 }).map((n) => n.join('')) }),
    50_000,
  );
  const go = askGo(cases);
  const differ = cases
    .map((c, i) => ({ ...c, go: go[i], port: goMatch(c.pattern, c.name), compiled: compileGoPattern(c.pattern).match(c.name) }))
    .filter((c) => c.go !== c.port || c.go !== c.compiled);
  expect(differ.slice(0, 5)).toEqual([]);
});

test('agrees with Go on pool-like names and patterns', () => {
  const poolName = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,20}[a-z0-9])?$/);
  const poolPattern = fc.stringMatching(/^[-a-z0-9.*?[\]^\\]{0,16}$/);
  const cases = fc.sample(fc.record({ pattern: poolPattern, name: poolName }), 20_000);
  const go = askGo(cases);
  const differ = cases.map((c, i) => ({ ...c, go: go[i], compiled: compileGoPattern(c.pattern).match(c.name) })).filter((c) => c.go !== c.compiled);
  expect(differ.slice(0, 5)).toEqual([]);
});
