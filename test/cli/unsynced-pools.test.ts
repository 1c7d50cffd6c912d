/** `serve --unsynced-pools`: what an IaaS pool write gets while the SpiderIPPool cache has not synced. */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { parseUnsyncedPools } from '../../src/cli/arguments.js';

describe('--unsynced-pools', () => {
  it.each([
    ['Refuse', 'Refuse'],
    ['refuse', 'Refuse'],
    ['WARN', 'Warn'],
    ['warn', 'Warn'],
  ])('reads %s as %s (any case, as kubectl users type values)', (typed, setting) => {
    expect(parseUnsyncedPools(typed)).toBe(setting);
  });

  it.each(['', 'Deny', 'refuse ', 'true'])('refuses %j in one line that names both settings', (typed) => {
    expect(() => parseUnsyncedPools(typed)).toThrow(InvalidArgumentError);
    expect(() => parseUnsyncedPools(typed)).toThrow(
      /^must be Refuse \(refuse IaaS pool writes while the pool cache has not synced\) or Warn \(let them through with a warning\)$/,
    );
  });

  it("is serve's flag, Refuse by default (the pair rules are refusals)", async () => {
    const main = await readFile(new URL('../../src/cli/main.ts', import.meta.url), 'utf8');
    expect(main).toMatch(/new Option\(\s*'--unsynced-pools <setting>',[\s\S]*?\)\s*\.argParser\(parseUnsyncedPools\)\s*\.default\('Refuse'\)/);
  });
});
