/**
 * The pinned advisory list's pieces, pure: SemVer ordering (SemVer 2.0.0 §11), OSV-style
 * ranges (introduced inclusive, fixed exclusive, lastAffected inclusive, "0" from the
 * start), the judgement of locked packages, and the shape of `.ci/advisories.json` itself.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The .ci modules are plain ESM outside the TypeScript project: imported by URL, untyped. */
const load = (file: string) => import(pathToFileURL(path.join(REPO, '.ci', file)).href);
const { parseVersion, compareVersions, inRange } = await load('semver.mjs');
const { advisoryListSchema, affected, hitLine, schemaProblem } = await load('advisory-list.mjs');

const v = (text: string) => {
  const parsed = parseVersion(text);
  if (parsed === undefined) throw new Error(`test version ${text} does not parse`);
  return parsed;
};

describe('SemVer ordering', () => {
  it('orders the specification example and numeric prerelease identifiers as numbers', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '2.0.0-5',
      '2.0.0-10',
      '2.0.0',
      '2.0.1',
      '2.1.0',
      '10.0.0',
    ];
    for (let i = 0; i + 1 < ordered.length; i += 1) {
      expect([ordered[i], compareVersions(v(ordered[i]!), v(ordered[i + 1]!))]).toEqual([ordered[i], -1]);
      expect(compareVersions(v(ordered[i + 1]!), v(ordered[i]!))).toBe(1);
    }
  });

  it('ignores build metadata and reads numbers past 2^53 exactly', () => {
    expect(compareVersions(v('1.2.3+build.7'), v('1.2.3'))).toBe(0);
    expect(compareVersions(v('9007199254740993.0.0'), v('9007199254740992.0.0'))).toBe(1);
  });

  it('does not parse what is not x.y.z[-pre][+build]', () => {
    for (const text of ['1.2', '01.2.3', '1.2.3-', '^1.2.3', 'latest', 'git+https://x/y.git', '1.2.3-a..b']) expect(parseVersion(text)).toBeUndefined();
  });
});

describe('ranges', () => {
  const range = { introduced: '2.0.0-5', fixed: '2.2.2' };

  it('include introduced, exclude fixed, and hold the prereleases before fixed', () => {
    expect(['2.0.0-4', '2.0.0-5', '2.0.0', '2.2.1', '2.2.2-rc.1', '2.2.2', '2.2.3'].map((t) => inRange(v(t), range))).toEqual([
      false,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it('read introduced "0" as every earlier version, lastAffected as inclusive, and no bound as no fix', () => {
    expect(inRange(v('0.0.0-0'), { introduced: '0', fixed: '0.1.12' })).toBe(true);
    expect(['4.0.5', '4.0.6', '4.0.7-0'].map((t) => inRange(v(t), { introduced: '4.0.0', lastAffected: '4.0.6' }))).toEqual([true, true, false]);
    expect(inRange(v('99.0.0'), { introduced: '8.0.0' })).toBe(true);
  });
});

describe('judging locked packages', () => {
  const list = {
    advisories: [
      {
        id: 'GHSA-aaaa-bbbb-cccc',
        package: 'ws',
        severity: 'high',
        ranges: [
          { introduced: '7.0.0', fixed: '7.5.10' },
          { introduced: '8.0.0', fixed: '8.17.1' },
        ],
      },
      { id: 'GHSA-dddd-eeee-ffff', package: 'qs', severity: 'critical', ranges: [{ introduced: '0', lastAffected: '6.2.0' }] },
    ],
  };

  it('names each package version inside a range, with the range that holds it', () => {
    const hits = affected(list, [
      { name: 'ws', version: '8.17.0' },
      { name: 'ws', version: '8.17.1' },
      { name: 'qs', version: '6.2.0' },
      { name: 'express', version: '5.0.0' },
    ]);
    expect(hits.map(hitLine)).toEqual([
      'ws@8.17.0: GHSA-aaaa-bbbb-cccc (high), fixed in 8.17.1',
      'qs@6.2.0: GHSA-dddd-eeee-ffff (critical), no fixed version after 6.2.0',
    ]);
  });

  it('leaves a version it cannot parse unjudged rather than failing', () => {
    expect(affected(list, [{ name: 'ws', version: 'github:websockets/ws#8.0.0' }])).toEqual([]);
  });
});

describe('.ci/advisories.json', () => {
  const real = async () => JSON.parse(await readFile(path.join(REPO, '.ci/advisories.json'), 'utf8'));

  it('is a valid list: every entry has an id, package, ranges, severity and an https source', async () => {
    const parsed = advisoryListSchema.safeParse(await real());
    expect(parsed.success ? 'valid' : schemaProblem(parsed.error)).toBe('valid');
    expect(parsed.data.advisories.length).toBeGreaterThan(10);
    expect(new Set(parsed.data.advisories.map((a: { id: string }) => a.id)).size).toBe(parsed.data.advisories.length);
  });

  it('refuses an entry without a source, a bound that is no version, or bounds in the wrong order, naming the field', async () => {
    const list = await real();
    const broken = (edit: (entry: Record<string, unknown>) => void) => {
      const copy = structuredClone(list);
      edit(copy.advisories[2]);
      return schemaProblem(advisoryListSchema.safeParse(copy).error);
    };
    expect(broken((e) => delete e.source)).toMatch(/^advisories\[2\]\.source: /);
    expect(broken((e) => (e.ranges = [{ introduced: '0', fixed: '4.x' }]))).toBe(
      'advisories[2].ranges[0].fixed: not a version of the form x.y.z[-pre][+build]',
    );
    expect(broken((e) => (e.ranges = [{ introduced: '4.0.4', fixed: '4.0.0' }]))).toBe('advisories[2].ranges[0]: the upper bound must be above introduced');
    expect(broken((e) => (e.severity = 'low'))).toMatch(/^advisories\[2\]\.severity: /);
  });
});
