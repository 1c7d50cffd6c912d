/**
 * Differential tests against Go itself (the oracle in test/e2e/oracle, see oracle.ts):
 *
 * - parseGoDuration / formatGoDuration against time.ParseDuration / Duration.String,
 *   on 100 000 random strings and 50 000 random int64 per run;
 * - readConfYml against gopkg.in/yaml.v2 (Spiderpool's controller) and gopkg.in/yaml.v3
 *   (its agent), on a hand-written corpus of tricky documents and on generated ones.
 *
 * The seed (seed.ts: the commit's under CI, else new every run) is printed with every mismatch; set
 * ORACLE_SEED=<n> to replay a run.
 *
 * Corpus cases marked `stricter` are deliberate: readConfYml refuses what Go reads, on the
 * safe side (this webhook's limits against hostile input, LS/PS outside quoted values).
 * Every other case must read as Go does.
 */
import fc from 'fast-check';
import { providerSettings, readConfYml, type ConfYmlReading } from '../../src/spiderpool/conf-yml.js';
import type { GoStruct } from '../../src/yaml-go/go-types.js';
import { formatGoDuration } from '../../src/go/duration-format.js';
import { parseGoDuration } from '../../src/go/duration-parse.js';
import { askConfYml, askDurations, askFormats, buildOracle, disposeOracle, type ConfYmlAnswer, type Decoding, type DurationAnswer } from './oracle.js';
import { documentArb, FEATURES, P } from './go-oracle-documents.js';
import { differentialSeed } from './seed.js';

const SEED = differentialSeed('ORACLE_SEED');
const MIN_INT64 = -(1n << 63n);
const MAX_INT64 = (1n << 63n) - 1n;

/** Throws one readable error listing the first mismatches, with the seed to replay them. */
function assertNoMismatches(what: string, total: number, mismatches: string[]): void {
  if (mismatches.length === 0) return;
  const shown = mismatches.slice(0, 25).join('\n\n');
  throw new Error(
    `${mismatches.length} of ${total} ${what} disagree with Go (seed ${SEED}; replay with ORACLE_SEED=${SEED}):\n\n${shown}` +
      (mismatches.length > 25 ? `\n\n... and ${mismatches.length - 25} more` : ''),
  );
}

afterAll(disposeOracle);

describe('the Go oracle', () => {
  it('builds with the Go toolchain on PATH and answers', async () => {
    // Fails (does not skip) with a clear message when `go` is missing.
    await buildOracle();
    expect(await askDurations(['1m30s'])).toEqual([{ ok: true, ns: '90000000000', string: '1m30s' }]);
  });
});

// ---------------------------------------------------------------------------------------
// Durations
// ---------------------------------------------------------------------------------------

const digit = fc.constantFrom(...'0123456789');
const digits = (minLength: number, maxLength: number) => fc.string({ unit: digit, minLength, maxLength });

/** Integers at and around the largest count of each unit that fits in int64 (and 2^63, 2^64). */
const nearOverflow = fc.oneof(
  fc.constantFrom(
    '9223372036854775807', // 2^63-1 ns
    '9223372036854775808', // 2^63
    '9223372036854775809',
    '18446744073709551615', // 2^64-1
    '18446744073709551616',
    '99999999999999999999',
    '9223372036854775', // µs
    '9223372036854776',
    '9223372036854', // ms
    '9223372036855',
    '9223372036', // s
    '9223372037',
    '153722867', // m
    '153722868',
    '2562047', // h
    '2562048',
    '0000000000000000000000001',
  ),
  fc.bigInt({ min: 0n, max: 1n << 66n }).map(String),
  fc.bigInt({ min: (1n << 63n) - 1000n, max: (1n << 63n) + 1000n }).map(String),
  digits(15, 25),
);

const goUnits = ['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h'];
const otherUnits = [
  'n',
  'u',
  'µ',
  'μ',
  'd',
  'w',
  'y',
  'H',
  'S',
  'M',
  'NS',
  'Ms',
  'mS',
  'sm',
  'mss',
  'hs',
  'nsm',
  'µm',
  'uS',
  'sec',
  'min',
  'e',
  'E',
  'x',
  '_',
  'µ\u0301s',
  'ｓ',
  'ſ',
];
const unit = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...goUnits) }, { weight: 1, arbitrary: fc.constantFrom(...otherUnits) });
const space = fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u3000', '\u2028');
const nonAscii = fc.constantFrom('é', '\u00b5', '\u03bc', '\u0000', '\u007f', '\u0085', '\ufffd', '\ufeff', '😀', '１', '٣', '\ud800', '\udc00', '\u0660');
const junk = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.string({ unit: 'binary', maxLength: 3 }),
  fc.constantFrom('"', '\\', "'", '%', 'e', 'E', '_', ',', 'x', '0x', '1e3', 'Inf', 'NaN'),
);

const token = fc.oneof(
  { weight: 6, arbitrary: digits(1, 4) },
  { weight: 1, arbitrary: nearOverflow },
  { weight: 2, arbitrary: fc.constant('.') },
  { weight: 1, arbitrary: fc.constantFrom('-', '+') },
  { weight: 6, arbitrary: unit },
  { weight: 1, arbitrary: space },
  { weight: 1, arbitrary: nonAscii },
  { weight: 1, arbitrary: junk },
);

/** Mostly well-formed durations: `[-+]?(int(.frac)?unit)+`, long fractions included. */
const wellFormed = fc
  .tuple(
    fc.constantFrom('', '', '', '-', '+'),
    fc.array(
      fc.tuple(
        fc.oneof({ weight: 5, arbitrary: digits(0, 4) }, { weight: 1, arbitrary: nearOverflow }),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant('') },
          { weight: 3, arbitrary: digits(0, 4).map((f) => `.${f}`) },
          { weight: 1, arbitrary: digits(10, 40).map((f) => `.${f}`) },
        ),
        unit,
      ),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([sign, parts]) => sign + parts.map((p) => p.join('')).join(''));

/**
 * Sums that reach 2^63 and 2^64: Go adds components in a uint64, so two components of
 * 2^63 ns wrap the sum to 0 (`9223372036854775808ns9223372036854775808ns1h` is 1h).
 */
const TWO_POW_63 = 1n << 63n;
const bigComponent = fc.oneof(
  fc.constantFrom('9223372036854775808ns', '9223372036854775807ns', '9223372036854775809ns', '18446744073709551616ns', '18446744073709551615ns'),
  fc.constantFrom('9223372036854775.808us', '9223372036854.775808ms', '9223372036.854775808s', '9223372036854775µs', '2562047h47m16.854775808s'),
  fc.bigInt({ min: TWO_POW_63 - 3n, max: TWO_POW_63 }).map((n) => `${n}ns`),
  fc.constantFrom('1ns', '1h', '0s', '1.5s', '0.000000001s'),
);
const wrapping = fc
  .tuple(fc.constantFrom('', '', '-', '+'), fc.array(bigComponent, { minLength: 2, maxLength: 4 }))
  .map(([sign, parts]) => sign + parts.join(''));

const durationText = fc.oneof(
  { weight: 4, arbitrary: fc.array(token, { maxLength: 8 }).map((t) => t.join('')) },
  { weight: 1, arbitrary: wrapping },
  { weight: 5, arbitrary: wellFormed },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '0', '-0', '+0', '00', '0.', '.0', '.', '-', '+', '-.s', '1', '1.', '.s', 's') },
);

/** What the TypeScript side says, in the oracle's shape. */
function tsDuration(s: string): DurationAnswer {
  let ns: bigint;
  try {
    ns = parseGoDuration(s);
  } catch (e) {
    return e instanceof Error ? { ok: false, error: e.message } : { ok: false, error: `non-Error thrown: ${String(e)}` };
  }
  let string: string;
  try {
    string = formatGoDuration(ns);
  } catch (e) {
    string = `formatGoDuration threw: ${String(e)}`;
  }
  return { ok: true, ns: ns.toString(), string };
}

function normalized(a: DurationAnswer): DurationAnswer {
  return a.ok ? { ok: true, ns: a.ns, string: a.string } : { ok: false, error: a.error };
}

describe('parseGoDuration and formatGoDuration agree with Go', () => {
  it('on 100 000 random strings: the same value and String(), or the same error text', async () => {
    const inputs = [
      ...fc.sample(durationText, { numRuns: 100_000, seed: SEED }),
      // A few that must always be there.
      '2562047h47m16.854775807s',
      '-2562047h47m16.854775808s',
      '2562047h47m16.854775808s',
      '9223372036854775807ns',
      '-9223372036854775808ns',
      '9223372036854775808ns',
      '0.000000000000000000001h',
      '1.00000000000000000000000000000001h',
      '0.9999999999999999999h',
      '1.5µs',
      '1.5μs',
      '9223372036854775808ns9223372036854775808ns1h',
      '-9223372036854775808ns9223372036854775808ns',
      '9223372036854775808ns9223372036854775808ns9223372036854775808ns',
    ];
    const answers = await askDurations(inputs);
    const mismatches: string[] = [];
    inputs.forEach((input, i) => {
      const go = normalized(answers[i]!);
      const ts = tsDuration(input);
      if (JSON.stringify(go) !== JSON.stringify(ts)) {
        mismatches.push(`input ${JSON.stringify(input)}\n  Go: ${JSON.stringify(go)}\n  TS: ${JSON.stringify(ts)}`);
      }
    });
    assertNoMismatches('duration strings', inputs.length, mismatches);
    const kinds = { ok: 0, invalid: 0, missingUnit: 0, unknownUnit: 0 };
    for (const a of answers as DurationAnswer[]) {
      if (a.ok) kinds.ok++;
      else if (a.error!.startsWith('time: invalid duration')) kinds.invalid++;
      else if (a.error!.startsWith('time: missing unit')) kinds.missingUnit++;
      else if (a.error!.startsWith('time: unknown unit')) kinds.unknownUnit++;
    }
    // The generator must keep reaching every outcome, or the comparison proves little.
    expect(kinds.ok).toBeGreaterThan(inputs.length * 0.15);
    expect(Math.min(kinds.invalid, kinds.missingUnit, kinds.unknownUnit)).toBeGreaterThan(inputs.length * 0.02);
  });

  it('on 50 000 random int64: formatGoDuration(d) === time.Duration(d).String()', async () => {
    const int64 = fc.oneof(
      fc.bigInt({ min: MIN_INT64, max: MAX_INT64 }),
      fc.bigInt({ min: -(10n ** 13n), max: 10n ** 13n }),
      fc.bigInt({ min: -2_000_000n, max: 2_000_000n }),
      fc
        .tuple(
          fc.constantFrom(1n, 1_000n, 1_000_000n, 1_000_000_000n, 60_000_000_000n, 3_600_000_000_000n),
          fc.integer({ min: -3, max: 3 }),
          fc.bigInt({ min: -100n, max: 100n }),
        )
        .map(([u, d, k]) => k * u + BigInt(d)),
    );
    const values = [...fc.sample(int64, { numRuns: 50_000, seed: SEED }), MIN_INT64, MAX_INT64, 0n, -1n, 1n];
    const answers = await askFormats(values);
    const mismatches: string[] = [];
    values.forEach((d, i) => {
      const go = answers[i]!.string;
      let ts: string;
      try {
        ts = formatGoDuration(d);
      } catch (e) {
        ts = `threw ${String(e)}`;
      }
      if (go !== ts) mismatches.push(`ns ${d}\n  Go: ${JSON.stringify(go)}\n  TS: ${JSON.stringify(ts)}`);
    });
    assertNoMismatches('int64 durations', values.length, mismatches);
  });
});

// ---------------------------------------------------------------------------------------
// conf.yml
// ---------------------------------------------------------------------------------------

const utf8Hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/**
 * Compares readConfYml with Go, decoder by decoder: each decodes the document exactly when
 * Go's decoder does, and then reads the same provider strings (byte for byte; where Go
 * read bytes that are not UTF-8, as Go's JSON shows them).
 * @returns a description of the disagreement, or undefined.
 */
function confMismatch(doc: string, go: ConfYmlAnswer): string | undefined {
  let ts: ConfYmlReading;
  try {
    ts = readConfYml(doc);
  } catch (e) {
    return describe_(doc, go, `threw ${String(e)}`);
  }
  const same = (d: Decoding, ours: GoStruct | undefined) => {
    if (!d.ok || ours === undefined) return !d.ok && ours === undefined;
    const { serverUrl, httpRequestTimeout } = providerSettings(ours);
    return d.utf8
      ? utf8Hex(serverUrl) === d.serverUrlHex && utf8Hex(httpRequestTimeout) === d.httpRequestTimeoutHex
      : serverUrl === d.serverUrl && httpRequestTimeout === d.httpRequestTimeout;
  };
  if (same(go.v3, ts.agent) && same(go.v2, ts.controller)) return undefined;
  const read = (ours: GoStruct | undefined) =>
    ours ? JSON.stringify(providerSettings(ours), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) : 'refuses';
  const tsText = `agent ${read(ts.agent)}, controller ${read(ts.controller)}${ts.ok ? '' : `: ${ts.errors.map((e) => JSON.stringify(e)).join('; ')}`}`;
  return describe_(doc, go, tsText);
}

function decodingText(d: Decoding): string {
  const value = { serverUrl: d.serverUrl, httpRequestTimeout: d.httpRequestTimeout };
  const bytes = d.utf8 ? '' : ` (bytes: serverUrl ${d.serverUrlHex}, httpRequestTimeout ${d.httpRequestTimeoutHex})`;
  return d.ok ? `ok ${JSON.stringify(value)}${bytes}` : `error ${JSON.stringify(d.error)}`;
}

function describe_(doc: string, go: ConfYmlAnswer, ts: string): string {
  return `document ${JSON.stringify(doc.length > 600 ? `${doc.slice(0, 600)}…` : doc)}\n  yaml.v2: ${decodingText(go.v2)}\n  yaml.v3: ${decodingText(go.v3)}\n  readConfYml: ${ts}`;
}

interface Case {
  name: string;
  doc: string;
  /**
   * A deliberate refusal of what Go accepts (limits against hostile input, readings the
   * parser here cannot reproduce): asserted as "Go reads it, readConfYml refuses it".
   */
  stricter?: string;
}

const comment = (n: number) => `# ${'x'.repeat(n)}\n`;
const mergeChain = (n: number) => {
  const lines = ['a0: &a0 {httpRequestTimeout: 7s}'];
  for (let i = 1; i <= n; i++) lines.push(`a${i}: &a${i} {<<: *a${i - 1}}`);
  return `${lines.join('\n')}\n`;
};
const fanout = (leaf: string, levels: number, width: number) => {
  const lines = [`l0: &l0 ${leaf}`];
  for (let i = 1; i <= levels; i++)
    lines.push(
      `l${i}: &l${i} {<<: [${Array(width)
        .fill(`*l${i - 1}`)
        .join(', ')}]}`,
    );
  return `${lines.join('\n')}\n`;
};

/** A padding comment, `before`, then `bom` at byte `byte` (libyaml-bom.ts: 509 ends the reader's first 512-byte chunk, 512 starts the next), then `after`. */
function atByte(byte: number, before: string, bom: string, after: string): string {
  return `#${'x'.repeat(byte - Buffer.byteLength(before) - 2)}\n${before}${bom}${after}`;
}

/** A conf.yml whose `bom` ends the reader's first 512-byte chunk inside a quoted key; a top-level key follows. */
const atFirstChunkEnd = (bom: string) => atByte(509, `a: 1\n${P}:\n  "xxxx`, bom, `y": 1\n  httpRequestTimeout: 5s\nb: 2\n`);

const F_BREAKS = 'line breaks: LS (U+2028) and PS (U+2029) are read only inside a quoted value between two other characters; elsewhere refused';
const F_LIMITS =
  "this webhook's limits against hostile input: conf.yml over 64 KiB, flow nesting over 100, over 100 block collections on one line, merges over 64 deep, over 100 000 decoded values; Go has no such limits";

const corpus: Case[] = [
  // Quoting styles and block scalars
  { name: 'plain block', doc: `${P}:\n  serverUrl: http://p.example:80\n  httpRequestTimeout: 50s\n` },
  { name: 'double-quoted values', doc: `${P}:\n  serverUrl: "http://p.example:80"\n  httpRequestTimeout: "50s"\n` },
  { name: 'single-quoted values', doc: `${P}:\n  serverUrl: 'http://p.example:80'\n  httpRequestTimeout: '1m30s'\n` },
  { name: 'double-quoted escapes', doc: `${P}:\n  httpRequestTimeout: "5\\x30s\\u00b5"\n` },
  { name: 'double-quoted \\a \\0 \\N \\_ \\L \\P escapes', doc: `${P}:\n  httpRequestTimeout: "50s\\a\\0\\N\\_\\L\\P"\n` },
  { name: 'single-quoted doubled quote', doc: `${P}:\n  httpRequestTimeout: 'it''s'\n` },
  { name: 'literal block |', doc: `${P}:\n  httpRequestTimeout: |\n    50s\n` },
  { name: 'literal block |-', doc: `${P}:\n  httpRequestTimeout: |-\n    50s\n` },
  { name: 'literal block |+', doc: `${P}:\n  httpRequestTimeout: |+\n    50s\n\n` },
  { name: 'folded block >', doc: `${P}:\n  httpRequestTimeout: >\n    50s\n    60s\n` },
  { name: 'folded block >-', doc: `${P}:\n  httpRequestTimeout: >-\n    50s\n` },
  { name: 'block with indentation indicator |2-', doc: `${P}:\n  httpRequestTimeout: |2-\n     50s\n` },
  // A block scalar header on the line after `key:`, at the key's indentation: libyaml reads the scalar as the key's value.
  { name: "block scalar header at the key's indentation", doc: `${P}:\n  httpRequestTimeout:\n  |\n    3s\n` },
  // A block scalar's text is no flow collection to libyaml, and a quote in it opens no quoted scalar.
  { name: 'block scalar holding a flow "-"', doc: `${P}:\n  httpRequestTimeout: >\n    1m [-, x]\n` },
  { name: 'block scalar holding flow ":" and "?"', doc: `${P}:\n  serverUrl: |\n    a: [a::, b] {?x: 1}\n` },
  { name: 'block scalar holding a quote, then a flow "-"', doc: `${P}:\n  serverUrl: |\n    it 's\n  httpRequestTimeout: 3s\nother: [-]\n` },
  { name: 'block scalar holding 150 "[" (no flow nesting)', doc: `${P}:\n  serverUrl: |\n    ${'['.repeat(150)}\n  httpRequestTimeout: 3s\n` },
  {
    name: 'empty block scalar after an alias key ended by ":", then a flow "-"',
    doc: `k: &kt httpRequestTimeout\n${P}:\n  serverUrl: 'a'\n  *kt: |\n  other: [-]\n`,
  },
  { name: "folded header at the key's indentation, then a key", doc: `${P}:\n  httpRequestTimeout:\n  >-\n   3s\n   4s\n  serverUrl: x\n` },
  { name: "header with an indicator at the key's indentation", doc: `${P}:\n  httpRequestTimeout:\n  |2\n     3s\n` },
  { name: "header at the key's indentation after a value", doc: `${P}:\n  httpRequestTimeout: 1\n  |\n   3s\n` },
  { name: "anchored header at the key's indentation", doc: `${P}:\n  httpRequestTimeout:\n  &a |\n    3s\n` },
  { name: "header at the key's indentation, content there too", doc: `${P}:\n  httpRequestTimeout:\n  |\n  3s\n` },
  // A block scalar ending the text: libyaml's final breaks are only those it read
  { name: 'literal block | ending the text', doc: `${P}:\n  serverUrl: http://p.example:80\n  httpRequestTimeout: |\n    3s` },
  { name: 'literal block |+ ending the text', doc: `${P}:\n  httpRequestTimeout: |+\n    3s` },
  { name: 'literal block |- ending the text', doc: `${P}:\n  httpRequestTimeout: |-\n    3s` },
  { name: 'folded block > ending the text', doc: `${P}:\n  httpRequestTimeout: >\n    3s\n    4s` },
  { name: 'folded block >+ ending the text after a blank line', doc: `${P}:\n  httpRequestTimeout: >+\n    3s\n\n    4s` },
  { name: 'block ending the text with trailing spaces', doc: `${P}:\n  httpRequestTimeout: |\n    3s   ` },
  { name: 'block ending the text with a "#"', doc: `${P}:\n  httpRequestTimeout: |\n    3s # x` },
  { name: 'block ending the text on more-indented spaces', doc: `${P}:\n  httpRequestTimeout: |\n    3s\n     ` },
  { name: 'block |2 ending the text on more-indented spaces', doc: `${P}:\n  httpRequestTimeout: |2+\n    3s\n     ` },
  { name: 'block ending the text on a tab', doc: `${P}:\n  httpRequestTimeout: |+\n    3s\n    \t` },
  { name: 'block ending the text on indentation spaces', doc: `${P}:\n  httpRequestTimeout: |+\n    3s\n    ` },
  { name: 'block ending the text on less-indented spaces', doc: `${P}:\n  httpRequestTimeout: |+\n    3s\n\n  ` },
  { name: 'empty kept block ending the text on spaces', doc: `${P}:\n  serverUrl: http://p.example:80\n  httpRequestTimeout: |+\n     ` },
  { name: 'empty kept block ending the text after a break', doc: `${P}:\n  serverUrl: http://p.example:80\n  httpRequestTimeout: |+\n\n  ` },
  { name: 'block ending the text with a CR', doc: `${P}:\n  httpRequestTimeout: |\n    3s\r` },
  { name: 'block serverUrl ending the text', doc: `${P}:\n  httpRequestTimeout: 3s\n  serverUrl: |\n    http://a:80` },
  { name: 'block key ending the text', doc: `${P}:\n  httpRequestTimeout: 3s\n  ? >\n    serverUrl` },
  { name: 'multi-line plain scalar', doc: `${P}:\n  httpRequestTimeout: 50\n    s\n` },
  { name: 'multi-line double-quoted', doc: `${P}:\n  httpRequestTimeout: "50\n    s"\n` },
  { name: 'double-quoted line continuation', doc: `${P}:\n  httpRequestTimeout: "50\\\n    s"\n` },
  { name: 'quoted leading and trailing spaces', doc: `${P}:\n  httpRequestTimeout: " 50s "\n` },
  { name: 'hash inside quotes', doc: `${P}:\n  httpRequestTimeout: "50s # x"\n` },
  // Nulls
  { name: 'null ~', doc: `${P}:\n  httpRequestTimeout: ~\n` },
  { name: 'null null', doc: `${P}:\n  httpRequestTimeout: null\n` },
  { name: 'null Null', doc: `${P}:\n  httpRequestTimeout: Null\n` },
  { name: 'null NULL', doc: `${P}:\n  httpRequestTimeout: NULL\n` },
  { name: 'nULL is text', doc: `${P}:\n  httpRequestTimeout: nULL\n` },
  { name: 'empty value', doc: `${P}:\n  httpRequestTimeout:\n  serverUrl: x\n` },
  { name: 'quoted "null" is text', doc: `${P}:\n  httpRequestTimeout: "null"\n` },
  // Tags
  { name: '!!str 50', doc: `${P}:\n  httpRequestTimeout: !!str 50\n` },
  { name: '!!str null', doc: `${P}:\n  httpRequestTimeout: !!str null\n` },
  { name: '!!str ~', doc: `${P}:\n  httpRequestTimeout: !!str ~\n` },
  { name: '!!str empty', doc: `${P}:\n  httpRequestTimeout: !!str\n  serverUrl: x\n` },
  { name: '!!null empty', doc: `${P}:\n  httpRequestTimeout: !!null\n` },
  { name: '!!null ""', doc: `${P}:\n  httpRequestTimeout: !!null ""\n` },
  { name: '!!int 50', doc: `${P}:\n  httpRequestTimeout: !!int 50\n` },
  { name: '!!binary NTBz', doc: `${P}:\n  httpRequestTimeout: !!binary NTBz\n` },
  { name: '!!binary over lines', doc: `${P}:\n  httpRequestTimeout: !!binary |\n    NT\n    Bz\n` },
  { name: 'verbatim tag', doc: `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:str> 50s\n` },
  { name: 'local tag', doc: `${P}:\n  httpRequestTimeout: !duration 50s\n` },
  { name: 'non-specific tag !', doc: `${P}:\n  httpRequestTimeout: ! 50s\n` },
  { name: '!!map on a scalar value', doc: `${P}:\n  httpRequestTimeout: !!map 50s\n` },
  { name: '%TAG handle', doc: `%TAG !e! tag:example.com,2000:\n---\n${P}:\n  httpRequestTimeout: !e!dur 50s\n` },
  // "%" escapes in tags: libyaml (yaml_parser_scan_uri_escapes) refuses bad ones and decodes the rest
  { name: 'tag %zz', doc: `${P}:\n  x: !!%zz 5\n  httpRequestTimeout: 3s\n` },
  { name: 'tag %zz in a flow mapping', doc: `${P}: {x: !!%zz 5, httpRequestTimeout: 3s}\n` },
  { name: 'verbatim tag %zz', doc: `${P}:\n  x: !<tag:%zz> 5\n  httpRequestTimeout: 3s\n` },
  { name: '%TAG prefix %zz', doc: `%TAG !e! tag:%zz\n---\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'tag %zz after the provider', doc: `${P}:\n  httpRequestTimeout: 3s\nz: !!%zz 5\n` },
  { name: 'tag %zz on an empty key', doc: `${P}:\n  !!%null : x\n  httpRequestTimeout: 3s\n` },
  { name: 'tag %C3 cut short', doc: `${P}:\n  x: !!%C3 5\n  httpRequestTimeout: 3s\n` },
  { name: 'tag %FF leading octet', doc: `${P}:\n  x: !!%FF 5\n  httpRequestTimeout: 3s\n` },
  { name: 'verbatim tag %C3%41 trailing octet', doc: `${P}:\n  x: !<%C3%41> 5\n  httpRequestTimeout: 3s\n` },
  { name: 'tag %C3%A9', doc: `${P}:\n  x: !!%C3%A9 5\n  httpRequestTimeout: 3s\n` },
  { name: 'verbatim !!null spelt %6Eull', doc: `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:%6Eull> 5s\n` },
  { name: 'verbatim !!str spelt %73tr', doc: `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:%73tr> 5s\n` },
  { name: 'verbatim %2573tr decoded once', doc: `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:%2573tr> 5s\n` },
  { name: '%TAG prefix spelling !!null with %6E', doc: `%TAG !e! tag:yaml.org,2002:%6E\n---\n${P}:\n  httpRequestTimeout: !e!ull 5s\n` },
  { name: '%TAG prefix spelling !!str with %73', doc: `%TAG !e! tag:yaml.org,2002:%73\n---\n${P}:\n  httpRequestTimeout: !e!tr 5s\n` },
  { name: '%TAG prefix %zz in the lookahead past the first document', doc: `${P}:\n  httpRequestTimeout: 3s\n...\n%TAG !e! tag:%zz\n---\n` },
  // Tags as libyaml scans them (libyaml-tags.ts): verbatim tags, handles, %TAG prefixes
  ...[
    '!<!>',
    '!<!foo>',
    '!<tag:x>',
    '!<tag:a,[b]>',
    '!*a!null',
    "!'!str",
    '!;!x',
    '!!a!b',
    '!!!',
    '!a,b',
    '!<{a}>',
    '!<a{>',
    '!<>',
    '!<a#b>',
    '!<!>x',
    '!!',
    '!a!',
    '!a!b!c',
    '!a-b!x',
  ].flatMap((t) => [
    { name: `tag ${t} on a value`, doc: `${P}:\n  httpRequestTimeout: ${t} 5s\n` },
    { name: `tag ${t} on a quoted value`, doc: `${P}:\n  httpRequestTimeout: ${t} '5s'\n` },
    { name: `tag ${t} on an empty value`, doc: `${P}:\n  httpRequestTimeout: ${t}\n  serverUrl: x\n` },
    { name: `tag ${t} on a key`, doc: `${P}:\n  ${t} httpRequestTimeout: 5s\n` },
    { name: `tag ${t} in a flow mapping`, doc: `${P}: {httpRequestTimeout: ${t} 5s}\n` },
    { name: `tag ${t} on a mapping`, doc: `${P}: ${t} {httpRequestTimeout: 5s}\n` },
    { name: `tag ${t} on a bool`, doc: `enableIPv4: ${t} true\n${P}:\n  httpRequestTimeout: 5s\n` },
  ]),
  { name: '!<!> on null', doc: `${P}:\n  httpRequestTimeout: !<!> null\n` },
  { name: '!<!> on a block scalar', doc: `${P}:\n  httpRequestTimeout: !<!> |\n    5s\n` },
  ...[...'{}<>#"|^\\`', ',[]'].flatMap((c) => [
    { name: `%TAG prefix with ${JSON.stringify(c)}`, doc: `%TAG !e! a${c}b\n---\n${P}:\n  httpRequestTimeout: !e!x 5s\n` },
    { name: `%TAG ! prefix with ${JSON.stringify(c)}`, doc: `%TAG ! a${c}b\n---\n${P}:\n  httpRequestTimeout: !x 5s\n` },
  ]),
  ...['!e', 'e!', '!e!e!', '!*!'].map((h) => ({ name: `%TAG handle ${h}`, doc: `%TAG ${h} tag:x,\n---\n${P}:\n  httpRequestTimeout: 5s\n` })),
  { name: '%TAG prefix missing', doc: `%TAG !e!\n---\n${P}:\n  httpRequestTimeout: 5s\n` },
  { name: '%TAG prefix followed by more', doc: `%TAG !e! a b\n---\n${P}:\n  httpRequestTimeout: 5s\n` },
  { name: '%TAG with a comment', doc: `%TAG !e! tag:x, # c\n---\n${P}:\n  httpRequestTimeout: !e!a 5s\n` },
  { name: '%TAG handle declared twice', doc: `%TAG !e! tag:x,\n%TAG !e! tag:y,\n---\n${P}:\n  httpRequestTimeout: !e!a 5s\n` },
  { name: '%TAG ! replacing the local prefix', doc: `%TAG ! tag:yaml.org,2002:\n---\n${P}:\n  httpRequestTimeout: !int 5s\n` },
  { name: '%TAG !! replaced', doc: `%TAG !! tag:x,\n---\n${P}:\n  httpRequestTimeout: !!int 5s\n` },
  {
    name: 'shorthand %25 spelling a verbatim tag elsewhere',
    doc: `%TAG !t! tag:yaml.org,2002:\n---\nclusterSubnetAutoPoolDefaultRedundantIPNumber: !<tag:yaml.org,2002:%69nt> 1\n${P}:\n  httpRequestTimeout: !t!%2569nt 5s\n`,
  },
  {
    name: '%TAG prefix decoded only for its own handle',
    doc: `%TAG !a! tag:yaml.org,2002:%69\n%TAG !b! tag:yaml.org,2002:\n---\n${P}:\n  httpRequestTimeout: !b!%2569nt 5s\n`,
  },
  { name: 'tag !! without a suffix in the lookahead', doc: `${P}:\n  httpRequestTimeout: 3s\n...\n!! x\n` },
  // Tags spelt "!!x" (yaml.v3 reads them as tag:yaml.org,2002:x, yaml.v2 as tags of their own) and merge keys by tag and style
  ...['!<!!int>', '!<!!str>', '!<!!null>', '!<!!bool>', '!<!!binary>', '!<!!float>', '!<!!timestamp>', '!<!!>'].flatMap((t) =>
    ['5s', "'5'", 'true', '~', 'NTBz'].flatMap((v) => [
      { name: `tag ${t} on ${v}`, doc: `${P}:\n  httpRequestTimeout: ${t} ${v}\n` },
      { name: `tag ${t} on ${v} into an int`, doc: `clusterSubnetAutoPoolDefaultRedundantIPNumber: ${t} ${v}\n${P}:\n  httpRequestTimeout: 5s\n` },
    ]),
  ),
  { name: '%TAG prefix !! spelling !!int', doc: `%TAG !e! !!\n---\n${P}:\n  httpRequestTimeout: !e!int 5s\n` },
  ...['!!str', '!e!x', '!<!>', '!!'].map((t) => ({
    name: `tag ${t} taken back into a repadded quoted value`,
    doc: `${P}:\n  httpRequestTimeout: 3s\n  serverUrl: 'a\n  ${t}   b'\n`,
  })),
  ...["! '<<'", '! "<<"', "!!merge '<<'", '!<!> <<', '!<!!merge> <<', "!<!!merge> '<<'", "'<<'"].flatMap((k) => [
    { name: `merge key ${k}`, doc: `a: &a {httpRequestTimeout: 5s}\n${P}:\n  ${k}: *a\n` },
    { name: `merge key ${k} in a flow mapping`, doc: `a: &a {httpRequestTimeout: 5s}\n${P}: {${k}: *a, serverUrl: x}\n` },
  ]),
  { name: 'provider tagged !!map', doc: `${P}: !!map\n  httpRequestTimeout: 50s\n` },
  { name: 'provider tagged !!str', doc: `${P}: !!str\n  httpRequestTimeout: 50s\n` },
  { name: 'provider tagged !!seq', doc: `${P}: !!seq\n  httpRequestTimeout: 50s\n` },
  { name: '!!set and !!omap elsewhere', doc: `foo: !!set {a, b}\nbar: !!omap [a: 1]\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: '!!null 50s', doc: `${P}:\n  httpRequestTimeout: !!null 50s\n` },
  { name: '!!null 5 as the provider', doc: `${P}: !!null 5\n` },
  { name: '!!null on the provider mapping (v2 reads it, v3 fails)', doc: `${P}: !!null\n  httpRequestTimeout: 10s\n` },
  { name: '!!int 50s', doc: `${P}:\n  httpRequestTimeout: !!int 50s\n` },
  { name: '!!float 50s', doc: `${P}:\n  httpRequestTimeout: !!float 50s\n` },
  { name: '!!bool yes (v2 reads it, v3 fails)', doc: `${P}:\n  httpRequestTimeout: !!bool yes\n` },
  { name: '!!timestamp 2001-12-14', doc: `${P}:\n  httpRequestTimeout: !!timestamp 2001-12-14\n` },
  { name: '!!binary of invalid base64', doc: `${P}:\n  httpRequestTimeout: !!binary "%%%"\n` },
  { name: '!!binary of bytes that are not UTF-8', doc: `${P}:\n  httpRequestTimeout: !!binary /w==\n` },
  // Numbers, booleans and other YAML 1.1 scalars are read as text
  { name: 'unquoted 50', doc: `${P}:\n  httpRequestTimeout: 50\n` },
  { name: 'unquoted 1e3', doc: `${P}:\n  httpRequestTimeout: 1e3\n` },
  { name: 'unquoted 0x10', doc: `${P}:\n  httpRequestTimeout: 0x10\n` },
  { name: 'unquoted 0o17', doc: `${P}:\n  httpRequestTimeout: 0o17\n` },
  { name: 'unquoted 017', doc: `${P}:\n  httpRequestTimeout: 017\n` },
  { name: 'unquoted 1_000', doc: `${P}:\n  httpRequestTimeout: 1_000\n` },
  { name: 'unquoted .inf', doc: `${P}:\n  httpRequestTimeout: .inf\n` },
  { name: 'unquoted -.5', doc: `${P}:\n  httpRequestTimeout: -.5\n` },
  { name: 'unquoted 50.0', doc: `${P}:\n  httpRequestTimeout: 50.0\n` },
  { name: 'sexagesimal 1:30', doc: `${P}:\n  httpRequestTimeout: 1:30\n` },
  { name: 'YAML 1.1 boolean yes', doc: `${P}:\n  httpRequestTimeout: yes\n` },
  { name: 'YAML 1.1 boolean on', doc: `${P}:\n  httpRequestTimeout: on\n` },
  { name: 'YAML 1.1 boolean Off', doc: `${P}:\n  httpRequestTimeout: Off\n` },
  { name: 'boolean true', doc: `${P}:\n  httpRequestTimeout: true\n` },
  { name: 'timestamp', doc: `${P}:\n  httpRequestTimeout: 2001-12-14\n` },
  { name: 'non-ASCII value', doc: `${P}:\n  httpRequestTimeout: 50µs\n` },
  { name: 'emoji value', doc: `${P}:\n  httpRequestTimeout: 😀\n` },
  { name: 'escaped non-BMP', doc: `${P}:\n  httpRequestTimeout: "\\U0001F600"\n` },
  { name: 'NBSP and ideographic space in a value', doc: `${P}:\n  httpRequestTimeout: 50s\u00a0\n  serverUrl: x\u3000\n` },
  { name: 'NBSP before "#" in a flow value, then `:,`', doc: `${P}: {httpRequestTimeout: 3s\u00a0#x:, serverUrl: y}\n` },
  { name: 'em space before "#" in a flow value, then `:,`', doc: `${P}: {httpRequestTimeout: 3s\u2003#x:, serverUrl: y}\n` },
  { name: 'ideographic space before "-," in a flow value', doc: `${P}: {httpRequestTimeout: \u3000-, serverUrl: y}\n` },
  { name: 'LS in quotes between ideographic spaces', doc: `${P}:\n  httpRequestTimeout: "3s\u3000\u2028\u3000x"\n` },
  { name: 'LS in quotes after a NBSP', doc: `${P}:\n  httpRequestTimeout: "3s\u00a0\u2028x"\n` },
  { name: 'LS in quotes after U+FEFF', doc: `${P}:\n  httpRequestTimeout: "3s\ufeff\u2028x"\n` },
  { name: '"<<" after a NBSP in a block mapping', doc: `a: &a {httpRequestTimeout: 5s}\n${P}:\n  \u00a0<<: *a\n  serverUrl: x\n` },
  { name: '"<<" after a NBSP in a flow mapping', doc: `a: &a {httpRequestTimeout: 5s}\n${P}: {\u00a0<<: *a, serverUrl: x}\n` },
  { name: '"<<" after a tab and a tag', doc: `a: &a {httpRequestTimeout: 5s}\n${P}:\n  !!merge\t<<: *a\n` },
  { name: '%YAML directive followed by a NBSP', doc: `%YAML 1.1\u00a0\n---\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: '%YAML directive followed by a space and a tab', doc: `%YAML 1.1 \t\n---\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'a quoted U+E000 escape beside a flow "-"', doc: `${P}:\n  x: [-]\n  serverUrl: "http://a\\uE000b"\n` },
  { name: 'a quoted U+E000 escape beside a flow `x:,`', doc: `${P}: {serverUrl: x:, httpRequestTimeout: "3s\\uE000"}\n` },
  { name: 'flow key, a NBSP and `:,`', doc: `${P}: {httpRequestTimeout\u00a0:, serverUrl: y}\n` },
  { name: 'quoted bool with a NBSP', doc: `enableSpiderSubnet: "true\u00a0"\n${P}:\n  httpRequestTimeout: 3s\n` },
  // Anchors and aliases
  { name: 'alias to a scalar', doc: `t: &t 50s\n${P}:\n  httpRequestTimeout: *t\n` },
  { name: 'alias to a null', doc: `t: &t\n${P}:\n  httpRequestTimeout: *t\n  serverUrl: x\n` },
  { name: 'alias to a mapping as the timeout', doc: `t: &t {a: 1}\n${P}:\n  httpRequestTimeout: *t\n` },
  { name: 'alias of the whole block', doc: `base: &b\n  serverUrl: http://a\n  httpRequestTimeout: 40s\n${P}: *b\n` },
  { name: 'anchor on the provider, used elsewhere', doc: `${P}: &p\n  httpRequestTimeout: 50s\nother: *p\n` },
  { name: 'anchor on a key', doc: `&k ${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'anchored null provider', doc: `${P}: &x ~\n` },
  { name: 'redefined anchor: the later one wins', doc: `a: &a 10s\nb: &a 20s\n${P}:\n  httpRequestTimeout: *a\n` },
  { name: 'unknown anchor', doc: `${P}:\n  httpRequestTimeout: *nope\n` },
  { name: 'unknown anchor in an unrelated key', doc: `foo: *nope\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'alias before its anchor', doc: `foo: *a\nbar: &a 1\n` },
  { name: 'self-referencing anchor, unused', doc: `a: &a\n  b: *a\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'self-referencing merge, unused', doc: `a: &a\n  <<: *a\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'self-referencing provider', doc: `${P}: &a\n  <<: *a\n  httpRequestTimeout: 10s\n` },
  { name: 'self-referencing sequence, unused', doc: `a: &a [*a]\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'alias as a key', doc: `k: &k ${P}\n*k :\n  httpRequestTimeout: 50s\n` },
  { name: 'alias as a setting key', doc: `t: &t httpRequestTimeout\n${P}:\n  *t : 10s\n` },
  { name: 'non-ASCII anchor name', doc: `a: &ä 10s\n${P}:\n  httpRequestTimeout: *ä\n` },
  { name: 'anchor name ending in a colon', doc: `a: &a: 1\n` },
  { name: 'anchored empty key written `&b:`', doc: `${P}:\n  &b: 7s\n  httpRequestTimeout: *b\n` },
  { name: 'alias key written `*t:`', doc: `t: &t httpRequestTimeout\n${P}:\n  *t: 7s\n` },
  { name: 'alias key written `*t:` in a flow mapping', doc: `t: &t httpRequestTimeout\n${P}: {*t: 7s}\n` },
  { name: '`&b:7s` in a flow mapping', doc: `${P}: {&b:7s, httpRequestTimeout: *b}\n` },
  { name: '`&b:x` as a value', doc: `${P}:\n  httpRequestTimeout: &b:x\n` },
  { name: '`&b?x` as a value', doc: `${P}:\n  httpRequestTimeout: &b?x\n` },
  { name: '`&b? x: 1` as a key in a mapping no decoder reads', doc: `foo:\n  &b? x: 1\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: '`&b?x` in a flow mapping', doc: `${P}: {httpRequestTimeout: &b?x}\n` },
  { name: '`&b@x` as a value', doc: `${P}:\n  httpRequestTimeout: &b@x\n` },
  { name: '`&b%x` as a value', doc: `${P}:\n  httpRequestTimeout: &b%x\n` },
  { name: '`*b:` as a value', doc: `a: &b x\n${P}:\n  httpRequestTimeout: *b:\n` },
  { name: '`&a:` at the top', doc: `&a: x\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'anchored empty key first in the provider', doc: `${P}:\n  &a : x\n  httpRequestTimeout: 3s\n` },
  { name: 'tagged empty key first in the provider', doc: `${P}:\n  !!str : x\n  httpRequestTimeout: 3s\n` },
  { name: 'empty key with an anchor and a tag after a comment', doc: `${P}: # c\n  &a !!null : x\n  httpRequestTimeout: 3s\n` },
  { name: 'anchored empty key aliased as a value', doc: `${P}:\n  &a : 7s\n  httpRequestTimeout: *a\n` },
  { name: 'anchored empty key in an anchored provider', doc: `${P}: &m\n  &a : x\n  httpRequestTimeout: 3s\nb: *m\n` },
  { name: 'two anchored empty keys (v3 refuses)', doc: `${P}:\n  &a : 7s\n  &b : 8s\n  httpRequestTimeout: 3s\n` },
  { name: 'anchored empty key in a merged item after its "-"', doc: `${P}:\n  <<:\n    -\n      &a : x\n      httpRequestTimeout: 3s\n` },
  { name: 'anchor alone on the line before an empty key', doc: `${P}:\n  &a\n  : 7s\n  httpRequestTimeout: 3s\n` },
  { name: 'empty key in a mapping no decoder reads', doc: `foo:\n  : x\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'empty key after a key in a mapping no decoder reads', doc: `foo:\n  a: 1\n  : x\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'empty key in a sequence item no decoder reads', doc: `foo:\n- : x\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'empty key in a flow mapping no decoder reads', doc: `foo: {: x}\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'explicit empty key in a mapping no decoder reads', doc: `foo:\n  ? \n  : x\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'empty key in a second document', doc: `${P}:\n  httpRequestTimeout: 3s\n---\nfoo:\n  : x\n` },
  { name: 'tagged empty key less indented than the keys before it', doc: `${P}:\n   httpRequestTimeout: 5s\n  !!null : ~\n` },
  { name: 'anchored empty key less indented than the keys before it', doc: `${P}:\n   httpRequestTimeout: 5s\n  &a : ~\n` },
  { name: 'tagged empty key, then an empty key below it', doc: `${P}: &pp\n   !!map : \n     : {<<: *m}\n` },
  // Merge keys
  { name: 'merge, then explicit', doc: `base: &b\n  serverUrl: http://a\n  httpRequestTimeout: 40s\n${P}:\n  <<: *b\n  httpRequestTimeout: 55s\n` },
  {
    name: 'explicit, then merge (v2 and v3 disagree)',
    doc: `base: &b\n  serverUrl: http://a\n  httpRequestTimeout: 40s\n${P}:\n  httpRequestTimeout: 55s\n  <<: *b\n`,
  },
  { name: 'merge list [*a, *b]', doc: `a: &a {httpRequestTimeout: 10s}\nb: &b {httpRequestTimeout: 20s, serverUrl: http://b}\n${P}:\n  <<: [*a, *b]\n` },
  { name: 'merge list [*b, *a]', doc: `a: &a {httpRequestTimeout: 10s}\nb: &b {httpRequestTimeout: 20s, serverUrl: http://b}\n${P}:\n  <<: [*b, *a]\n` },
  {
    name: 'merge list, then explicit',
    doc: `a: &a {httpRequestTimeout: 10s}\nb: &b {httpRequestTimeout: 20s}\n${P}:\n  <<: [*a, *b]\n  httpRequestTimeout: 30s\n`,
  },
  {
    name: 'explicit, then merge list',
    doc: `a: &a {httpRequestTimeout: 10s}\nb: &b {httpRequestTimeout: 20s}\n${P}:\n  httpRequestTimeout: 30s\n  <<: [*a, *b]\n`,
  },
  { name: 'two merge keys (v3: duplicate key)', doc: `a: &a {httpRequestTimeout: 10s}\nb: &b {httpRequestTimeout: 20s}\n${P}:\n  <<: *a\n  <<: *b\n` },
  { name: 'nested merges', doc: `a: &a {httpRequestTimeout: 10s, serverUrl: http://a}\nb: &b\n  <<: *a\n  httpRequestTimeout: 20s\n${P}:\n  <<: *b\n` },
  {
    name: 'nested merges, explicit before',
    doc: `a: &a {httpRequestTimeout: 10s, serverUrl: http://a}\nb: &b\n  httpRequestTimeout: 20s\n  <<: *a\n${P}:\n  <<: *b\n`,
  },
  { name: 'merge providing the whole block', doc: `base: &base\n  ${P}:\n    serverUrl: http://a\n    httpRequestTimeout: 40s\n<<: *base\n` },
  {
    name: 'merged block, then explicit block',
    doc: `base: &base\n  ${P}:\n    serverUrl: http://a\n    httpRequestTimeout: 40s\n<<: *base\n${P}:\n  httpRequestTimeout: 55s\n`,
  },
  {
    name: 'explicit block, then merged block',
    doc: `base: &base\n  ${P}:\n    serverUrl: http://a\n    httpRequestTimeout: 40s\n${P}:\n  httpRequestTimeout: 55s\n<<: *base\n`,
  },
  { name: 'explicit null block, then merged block', doc: `base: &base\n  ${P}:\n    serverUrl: http://a\n${P}:\n<<: *base\n` },
  { name: 'merged block, then explicit null', doc: `base: &base\n  ${P}:\n    serverUrl: http://a\n<<: *base\n${P}: ~\n` },
  { name: 'top-level merge list of provider blocks', doc: `a: &a {${P}: {httpRequestTimeout: 1s}}\nb: &b {${P}: {serverUrl: http://b}}\n<<: [*a, *b]\n` },
  {
    name: 'top-level merge list of provider blocks, reversed',
    doc: `a: &a {${P}: {httpRequestTimeout: 1s}}\nb: &b {${P}: {serverUrl: http://b}}\n<<: [*b, *a]\n`,
  },
  { name: 'top-level merge of a null provider after a block', doc: `a: &a {${P}: ~}\n${P}: {httpRequestTimeout: 1s}\n<<: *a\n` },
  { name: 'top-level merge of a null provider before a block', doc: `a: &a {${P}: ~}\n<<: *a\n${P}: {httpRequestTimeout: 1s}\n` },
  { name: 'top-level merge list [null, block]', doc: `a: &a {${P}: ~}\nb: &b {${P}: {serverUrl: http://b}}\n<<: [*a, *b]\n` },
  { name: 'top-level merge list [block, null]', doc: `a: &a {${P}: ~}\nb: &b {${P}: {serverUrl: http://b}}\n<<: [*b, *a]\n` },
  { name: 'merged provider of the wrong type, overridden', doc: `a: &a {${P}: 5}\n<<: *a\n${P}: {httpRequestTimeout: 1s}\n` },
  { name: 'merged timeout of the wrong type, overridden after', doc: `a: &a {httpRequestTimeout: [1]}\n${P}:\n  <<: *a\n  httpRequestTimeout: 1s\n` },
  { name: 'merged timeout of the wrong type, overridden before', doc: `a: &a {httpRequestTimeout: [1]}\n${P}:\n  httpRequestTimeout: 1s\n  <<: *a\n` },
  { name: 'merge of a scalar', doc: `s: &s 50s\n${P}:\n  <<: *s\n` },
  { name: 'merge of a list of scalars', doc: `s: &s 50s\n${P}:\n  <<: [*s]\n` },
  { name: 'merge of null', doc: `${P}:\n  <<: ~\n  httpRequestTimeout: 10s\n` },
  { name: 'merge of an empty list', doc: `${P}:\n  <<: []\n  httpRequestTimeout: 10s\n` },
  { name: 'merge of an inline mapping', doc: `${P}:\n  <<: {httpRequestTimeout: 10s}\n  serverUrl: x\n` },
  { name: 'merge of an inline list of mappings', doc: `${P}:\n  <<: [{httpRequestTimeout: 10s}, {httpRequestTimeout: 20s}]\n` },
  { name: 'merge in a flow mapping', doc: `a: &a {httpRequestTimeout: 10s}\n${P}: {<<: *a, serverUrl: x}\n` },
  { name: 'merge in a flow mapping, after', doc: `a: &a {httpRequestTimeout: 10s}\n${P}: {httpRequestTimeout: 5s, <<: *a}\n` },
  { name: 'quoted "<<" is an ordinary key', doc: `a: &a {httpRequestTimeout: 10s}\n${P}:\n  "<<": *a\n` },
  { name: "single-quoted '<<' is an ordinary key", doc: `a: &a {httpRequestTimeout: 10s}\n${P}:\n  '<<': *a\n` },
  { name: '!!str << is an ordinary key', doc: `a: &a {httpRequestTimeout: 10s}\n${P}:\n  !!str <<: *a\n` },
  { name: 'duplicate key inside a merged mapping', doc: `a: &a {httpRequestTimeout: 1s, httpRequestTimeout: 2s}\n${P}:\n  <<: *a\n` },
  { name: 'unrelated duplicate key inside a merged mapping', doc: `a: &a {x: 1, x: 2}\n${P}:\n  <<: *a\n` },
  { name: 'small merge fan-out (8×8)', doc: `${fanout('{x: 1, y: 2}', 2, 8)}${P}:\n  <<: *l2\n  httpRequestTimeout: 50s\n` },
  {
    name: 'large sequence aliasing, unused',
    doc: `a: &a [1,2,3,4,5,6,7,8,9]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n${P}:\n  httpRequestTimeout: 50s\n`,
  },
  { name: '!!merge <<', doc: `a: &a {httpRequestTimeout: 10s}\n${P}:\n  !!merge <<: *a\n` },
  { name: '! <<', doc: `a: &a {httpRequestTimeout: 10s}\n${P}:\n  ! <<: *a\n` },
  { name: 'merge fan-out 8×8×8 of two keys', doc: `${fanout('{x: 1, y: 2}', 3, 8)}${P}:\n  <<: *l3\n  httpRequestTimeout: 50s\n` },
  { name: 'merge fan-out 8×8×8 of one key', doc: `${fanout('{x: 1}', 3, 8)}${P}:\n  <<: *l3\n` },
  { name: 'merge fan-out 8^4 into the provider', doc: `${fanout('{httpRequestTimeout: 1s, y: 2}', 4, 8)}${P}:\n  <<: *l4\n` },
  { name: 'merge chain 60 deep', doc: `${mergeChain(60)}${P}:\n  <<: *a60\n` },
  { name: 'merge chain 70 deep', doc: `${mergeChain(70)}${P}:\n  <<: *a70\n`, stricter: F_LIMITS },
  // Duplicate keys
  { name: 'duplicate httpRequestTimeout', doc: `${P}:\n  httpRequestTimeout: 10s\n  httpRequestTimeout: 20s\n` },
  { name: 'duplicate serverUrl', doc: `${P}:\n  serverUrl: http://a\n  serverUrl: http://b\n` },
  { name: 'duplicate provider block', doc: `${P}:\n  httpRequestTimeout: 10s\n${P}:\n  serverUrl: http://b\n` },
  { name: 'duplicate unrelated top-level key', doc: `foo: 1\nfoo: 2\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'duplicate unrelated key in the provider', doc: `${P}:\n  x: 1\n  x: 2\n  httpRequestTimeout: 3s\n` },
  { name: 'duplicate key, quoted and plain', doc: `${P}:\n  httpRequestTimeout: 1s\n  "httpRequestTimeout": 3s\n` },
  { name: 'duplicate after a merge', doc: `a: &a {httpRequestTimeout: 1s}\n${P}:\n  <<: *a\n  httpRequestTimeout: 2s\n  httpRequestTimeout: 3s\n` },
  { name: 'duplicate key inside an unrelated mapping', doc: `foo:\n  a: 1\n  a: 2\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'duplicate key inside an unused anchor', doc: `a: &a {x: 1, x: 2}\n${P}:\n  httpRequestTimeout: 1s\n` },
  { name: 'duplicate key inside a sequence', doc: `foo: [{a: 1, a: 2}]\n${P}:\n  httpRequestTimeout: 3s\n` },
  // Whitespace, tabs, indentation
  { name: 'tab indentation', doc: `${P}:\n\thttpRequestTimeout: 10s\n` },
  { name: 'tab after the colon', doc: `${P}:\n  httpRequestTimeout:\t10s\n` },
  { name: 'tab inside a value', doc: `${P}:\n  httpRequestTimeout: 10s\tx\n` },
  { name: 'trailing tab', doc: `${P}:\n  httpRequestTimeout: 10s\t\n` },
  { name: 'tab before the colon', doc: `${P}\t:\n  httpRequestTimeout: 3s\n` },
  { name: 'tab in a flow mapping', doc: `${P}: {httpRequestTimeout:\t3s}\n` },
  { name: 'no space after the colon', doc: `${P}:\n  httpRequestTimeout:3s\n` },
  { name: 'indentation of one space', doc: `${P}:\n httpRequestTimeout: 50s\n serverUrl: x\n` },
  { name: 'settings not indented', doc: `${P}:\nhttpRequestTimeout: 50s\n` },
  { name: 'inconsistent indentation', doc: `${P}:\n    serverUrl: http://a\n  httpRequestTimeout: 50s\n` },
  { name: 'sequence not indented under its key', doc: `foo:\n- a\n- b\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'tab in block scalar indentation', doc: `${P}:\n  httpRequestTimeout: |\n   \t3s\n` },
  // Documents
  { name: 'multiple documents: the first counts', doc: `${P}:\n  httpRequestTimeout: 10s\n---\n${P}:\n  httpRequestTimeout: 20s\n` },
  // An indented top-level collection ends at the first less indented line: Go reads only the lines before it.
  { name: 'indented first key, then less indented keys', doc: `  a: 1\nb: 2\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'indented provider block, then a key at column 0', doc: `  ${P}:\n    httpRequestTimeout: 3s\nb: 2\n` },
  {
    name: 'indented provider block, comments, a key at a lower column, ---',
    doc: `   ${P}:\n     httpRequestTimeout: bad\n# c\n\n   # d\n  b: 2\n---\nc: 3\n`,
  },
  { name: 'indented quoted first key, CRLF, ...', doc: `---\r\n  "${P}":\r\n    httpRequestTimeout: "3s\r\n  x"\r\nb: "x\r\n...\r\n` },
  { name: 'indented top-level sequence, then a key', doc: `  - a\n  - b\nc: 1\n` },
  { name: 'indented first key, then a line Go refuses', doc: `  ${P}:\n    httpRequestTimeout: 3s\n\tb: 2\n` },
  { name: 'indented first key, then an unterminated quote', doc: `  ${P}:\n    httpRequestTimeout: 3s\n"b\n` },
  { name: 'indented first key, then a plain scalar and a quote', doc: `  ${P}:\n    httpRequestTimeout: 3s\nb #c\n"x\n` },
  { name: 'indented first key, then a control character', doc: `  ${P}:\n    httpRequestTimeout: 3s\nb\u0001: 2\n` },
  { name: 'indented first key, then lone CRs', doc: `  ${P}:\r    httpRequestTimeout: 3s\rb: 2\r` },
  { name: 'indented first key, then a sequence item', doc: `  ${P}:\n    httpRequestTimeout: 3s\n- b\n` },
  { name: 'indented first key, then a tag', doc: `  ${P}:\n    httpRequestTimeout: 3s\n!x\n` },
  { name: 'indented first key, then a quoted scalar', doc: `  ${P}:\n    httpRequestTimeout: 3s\n"b"\n` },
  { name: 'indented first key, then an item with an unterminated quote (v3 fails)', doc: `  ${P}:\n    httpRequestTimeout: 3s\n- "b\n` },
  { name: 'indented first key, then an anchor and a quote on the next line', doc: `  ${P}:\n    httpRequestTimeout: 3s\n&a\n"b\n` },
  { name: 'indented first key, then an unclosed flow sequence', doc: `  ${P}:\n    httpRequestTimeout: 3s\n[a, "b\n` },
  { name: 'indented first key, then ": a"', doc: `  ${P}:\n    httpRequestTimeout: 3s\n: a\n` },
  { name: 'indented first key, then a directive', doc: `  ${P}:\n    httpRequestTimeout: 3s\n%YAML 1.1\n---\n` },
  { name: 'indented first key, then a block scalar with a tab', doc: `  ${P}:\n    httpRequestTimeout: 3s\n|\n\tx\n` },
  // A root flow collection is the whole first document: Go reads on only to end it.
  { name: 'flow root, then a key', doc: `{${P}: {httpRequestTimeout: 3s}}\nb: 1\n` },
  { name: 'flow root, then a key and an unterminated quote', doc: `{${P}: {httpRequestTimeout: 3s}}\nb: "x\n` },
  { name: 'flow root, then an unterminated quote', doc: `{${P}: {httpRequestTimeout: 3s}}\n"x\n` },
  { name: 'flow root, then an unterminated quote on its line', doc: `{${P}: {httpRequestTimeout: 3s}} "x\n` },
  { name: 'flow root, then a stray "}"', doc: `{${P}: {httpRequestTimeout: 3s}}}\n` },
  { name: 'flow root, then ":" on the next line', doc: `{${P}: {httpRequestTimeout: 3s}}\n  : x\n` },
  { name: 'flow root over lines, then a sequence', doc: `{${P}: {httpRequestTimeout:\n3s}}\n- x\n` },
  { name: 'a second document Go does not parse far', doc: `${P}:\n  httpRequestTimeout: 10s\n---\n: : [\n` },
  { name: 'leading ---', doc: `---\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'empty first document', doc: `---\n---\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'empty text', doc: `` },
  { name: 'only whitespace', doc: `   \n\n` },
  { name: 'only a comment', doc: `# nothing\n` },
  { name: 'only ---', doc: `---\n` },
  { name: 'document end ...', doc: `${P}:\n  httpRequestTimeout: 50s\n...\n` },
  { name: 'document end, then another', doc: `${P}:\n  httpRequestTimeout: 50s\n...\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: '%YAML 1.1 directive', doc: `%YAML 1.1\n---\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'directive without ---', doc: `%YAML 1.1\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'only ...', doc: `...\n` },
  { name: 'a comment, then ...', doc: `# c\n...\n` },
  { name: '---, then ...', doc: `---\n...\n` },
  { name: '%YAML 1.1 and !!binary', doc: `%YAML 1.1\n---\n${P}:\n  httpRequestTimeout: !!binary NTBz\n` },
  { name: '%YAML 1.1 and !!timestamp', doc: `%YAML 1.1\n---\n${P}:\n  httpRequestTimeout: !!timestamp 2001-12-14\n` },
  { name: '%YAML 1.1 and a !!binary key', doc: `%YAML 1.1\n---\n!!binary aWFhc05ldHdvcmtQcm92aWRlcg==:\n  httpRequestTimeout: 10s\n` },
  { name: 'root tagged !!map', doc: `--- !!map\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'root tagged !!str', doc: `--- !!str\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: '%YAML 1.2 directive', doc: `%YAML 1.2\n---\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: '%YAML 2.0 directive', doc: `%YAML 2.0\n---\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: '%YAML 1.0 directive', doc: `%YAML 1.0\n---\na: 1\n` },
  { name: 'repeated %YAML directive', doc: `%YAML 1.1\n%YAML 1.1\n---\na: 1\n` },
  { name: 'unknown directive', doc: `%FOO bar\n---\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'garbage in a second document', doc: `${P}:\n  httpRequestTimeout: 3s\n--- ]]\n` },
  { name: 'garbage after ...', doc: `${P}:\n  httpRequestTimeout: 50s\n...\n]]\n` },
  // Shapes
  { name: 'top-level list', doc: `- ${P}\n- x\n` },
  { name: 'top-level scalar', doc: `hello\n` },
  { name: 'top-level number', doc: `42\n` },
  { name: 'top-level null', doc: `~\n` },
  { name: 'top-level quoted empty string', doc: `""\n` },
  { name: 'provider as a list', doc: `${P}:\n  - serverUrl: x\n` },
  { name: 'provider as a list not indented', doc: `${P}:\n- a\n` },
  { name: 'provider as a scalar', doc: `${P}: 50s\n` },
  { name: 'provider as an empty string', doc: `${P}: ""\n` },
  { name: 'provider null ~', doc: `${P}: ~\n` },
  { name: 'provider empty', doc: `${P}:\n` },
  { name: 'provider as an empty flow mapping', doc: `${P}: {}\n` },
  { name: 'timeout as a mapping', doc: `${P}:\n  httpRequestTimeout:\n    value: 50s\n` },
  { name: 'timeout as a list', doc: `${P}:\n  httpRequestTimeout: [50s]\n` },
  { name: 'timeout as an empty mapping', doc: `${P}:\n  httpRequestTimeout: {}\n` },
  { name: 'timeout as an empty list', doc: `${P}:\n  httpRequestTimeout: []\n` },
  { name: 'flow mapping', doc: `{${P}: {serverUrl: "http://a", httpRequestTimeout: 50s}}\n` },
  { name: 'flow mapping over lines', doc: `${P}: {\n  serverUrl: http://a,\n  httpRequestTimeout: 50s\n}\n` },
  { name: 'flow mapping with a trailing comma', doc: `${P}: {serverUrl: http://a, httpRequestTimeout: 50s,}\n` },
  { name: 'flow value with a colon', doc: `${P}: {serverUrl: http://a:80}\n` },
  { name: 'URL with a query in a flow mapping', doc: `${P}: {serverUrl: http://b/x?y=1}\n` },
  { name: '"?" inside a plain scalar in a flow mapping', doc: `${P}: {httpRequestTimeout: 5s?, serverUrl: x}\n` },
  { name: 'bare tag before "}" in a flow mapping', doc: `${P}: {httpRequestTimeout: !!str}\n` },
  { name: 'bare tag before "," in a flow mapping', doc: `${P}: {httpRequestTimeout: !!null, serverUrl: x}\n` },
  { name: 'bare tag and a space before "}"', doc: `${P}: {httpRequestTimeout: !!str }\n` },
  // In a flow collection libyaml's plain scalar takes a ":" not followed by a blank: `key:,` is a key "key:".
  { name: '`key:,` in a flow mapping, then the key again', doc: `${P}: {httpRequestTimeout:, httpRequestTimeout: 1m30s}\n` },
  { name: '`key:}` in a flow mapping after a merge', doc: `a: &a {httpRequestTimeout: 5s}\n${P}: {<<: *a, httpRequestTimeout:}\n` },
  { name: '`key :}` in a flow mapping after a merge', doc: `a: &a {httpRequestTimeout: 5s}\n${P}: {<<: *a, httpRequestTimeout :}\n` },
  { name: '`key  :,` then a tagged merge', doc: `${P}: {httpRequestTimeout  :, !!merge <<: {httpRequestTimeout: 9s}}\n` },
  { name: '`key` and `:,` on the next line', doc: `${P}: {httpRequestTimeout\n   :, httpRequestTimeout: 3s}\n` },
  { name: '`key :]` in a flow sequence', doc: `${P}: {serverUrl: [a :]}\n` },
  { name: '`value:,` in a flow mapping', doc: `${P}: {serverUrl: http://a:, httpRequestTimeout: 3s}\n` },
  { name: '`value::}` in a flow mapping', doc: `${P}: {serverUrl: a::}\n` },
  { name: '`key:[` in a flow mapping', doc: `${P}: {httpRequestTimeout:[1]}\n` },
  { name: '`key:{` in a flow mapping', doc: `${P}: {httpRequestTimeout:{a: 1}}\n` },
  { name: '`item:[` in a flow sequence', doc: `foo: [a:[b]]\n${P}: {httpRequestTimeout: 3s}\n` },
  { name: '`key:[` in a later document', doc: `${P}: {httpRequestTimeout: 3s}\n---\nfoo: {a:[b]}\n` },
  // An explicit key "?" with nothing after it in a flow sequence: libyaml's parser skips the token after it.
  { name: 'empty explicit key closing a flow sequence', doc: `x: [? ]\n${P}: {httpRequestTimeout: 3s}\n` },
  { name: 'empty explicit key, ":" and a value in a flow sequence', doc: `${P}: {serverUrl: [? : x]}\n` },
  { name: 'empty explicit key, "," and an item in a flow sequence', doc: `x: [?, a]\n${P}: {httpRequestTimeout: 3s}\n` },
  { name: 'empty explicit key, "," ending a flow sequence', doc: `x: [?,]\n${P}: {httpRequestTimeout: 3s}\n` },
  { name: 'empty explicit key and ":" ending a flow sequence', doc: `x: [? :, a]\n${P}: {httpRequestTimeout: 3s}\n` },
  // A flow value on the line after its key's ":", at column 0: libyaml ignores indentation inside { } and [ ].
  { name: 'flow value at column 0 after `key:`', doc: `${P}: {httpRequestTimeout:\n3s}\n` },
  { name: 'flow value at column 0 after `key: `', doc: `${P}: {httpRequestTimeout: 3s, serverUrl: \ny}\n` },
  { name: 'flow value at column 0 after `key:` and a lone CR', doc: `${P}: {httpRequestTimeout:\r3s}\n` },
  { name: 'flow value at column 0 after `key:` and CRLF', doc: `${P}: {httpRequestTimeout:\r\n3s}\r\n` },
  { name: 'flow value at column 0 after blank lines', doc: `${P}: {httpRequestTimeout:\n\n  \n3s}\n` },
  { name: 'unrelated flow value at column 0, then the provider', doc: `x: {a:\nb}\n${P}: {httpRequestTimeout: 3s}\n` },
  // A key's ":" on a later line, or over 1024 characters on, in a flow collection: libyaml drops the key.
  { name: 'flow key and its ":" on the next line', doc: `${P}: {httpRequestTimeout\n  : 3s}\n` },
  { name: 'quoted flow key and its ":" on the next line', doc: `${P}: {"httpRequestTimeout"\n  : 3s}\n` },
  { name: 'anchor, then the flow key on the next line', doc: `${P}: {&x\n  httpRequestTimeout: 3s}\n` },
  { name: 'anchor and the flow key on one line, after a break', doc: `${P}: {\n  &x httpRequestTimeout: 3s}\n` },
  { name: 'flow sequence pair and its ":" on the next line', doc: `foo: [a\n  : b]\n${P}: {httpRequestTimeout: 3s}\n` },
  { name: 'explicit flow key and its ":" on the next line', doc: `${P}: {? httpRequestTimeout\n  : 3s}\n` },
  { name: 'flow key 1024 characters before its ":"', doc: `${P}: {${'a'.repeat(1024)}: 1, httpRequestTimeout: 3s}\n` },
  { name: 'flow key 1025 characters before its ":"', doc: `${P}: {${'a'.repeat(1025)}: 1, httpRequestTimeout: 3s}\n` },
  { name: 'flow key of 1023 characters and a space before its ":"', doc: `${P}: {${'a'.repeat(1023)} : 1, httpRequestTimeout: 3s}\n` },
  { name: 'flow key of 1024 characters and a space before its ":"', doc: `${P}: {${'a'.repeat(1024)} : 1, httpRequestTimeout: 3s}\n` },
  { name: 'flow key of 1000 characters with an anchor before it', doc: `${P}: {&anchor ${'a'.repeat(1016)}: 1, httpRequestTimeout: 3s}\n` },
  { name: 'flow key of 1024 astral characters', doc: `${P}: {${'\u{1F600}'.repeat(1024)}: 1, httpRequestTimeout: 3s}\n` },
  { name: 'flow key of 1025 astral characters', doc: `${P}: {${'\u{1F600}'.repeat(1025)}: 1, httpRequestTimeout: 3s}\n` },
  { name: 'block key of 1025 characters', doc: `${P}:\n  ${'a'.repeat(1025)}: 1\n  httpRequestTimeout: 3s\n` },
  { name: 'multi-line flow key after the first document', doc: `${P}: {httpRequestTimeout: 3s}\n---\nfoo: {a\n  : b}\n` },
  // A ":" or "?" where a token starts in a flow collection is an indicator for libyaml, whatever follows.
  { name: 'alias key then `:value`', doc: `t: &t httpRequestTimeout\n${P}: {*t :3s}\n` },
  { name: '`?key` in a flow mapping', doc: `${P}: {?httpRequestTimeout: 3s}\n` },
  { name: 'anchored empty key then `:value`', doc: `${P}: {&a :3s, httpRequestTimeout: 3s}\n` },
  { name: 'anchored empty key in a flow mapping', doc: `${P}: {&a : x, httpRequestTimeout: 3s}\n` },
  { name: 'anchored empty key at the top', doc: `&a : x\n${P}: {httpRequestTimeout: 3s}\n` },
  { name: 'tagged empty key then `:value`', doc: `${P}: {!!str :3s, httpRequestTimeout: 3s}\n` },
  { name: 'anchor then `:value` as a value', doc: `${P}: {httpRequestTimeout: &a :3s}\n` },
  { name: 'alias value then `:value`', doc: `t: &t 4s\n${P}: {httpRequestTimeout: *t :x}\n` },
  { name: 'quoted key, a space, then `:value`', doc: `${P}: {"httpRequestTimeout" :3s}\n` },
  { name: '`?key` in a flow sequence', doc: `${P}: {serverUrl: [?x]}\n` },
  { name: 'empty key in a flow mapping', doc: `${P}: {: x, httpRequestTimeout: 3s}\n` },
  { name: '`key #comment` then `:,`', doc: `${P}: {httpRequestTimeout #c\n  :, serverUrl: x}\n` },
  { name: 'alias then `:,`', doc: `a: &a 4s\n${P}: {*a :, httpRequestTimeout: 3s}\n` },
  { name: 'quoted key then `:,`', doc: `${P}: {"httpRequestTimeout":, serverUrl: x}\n` },
  { name: 'plain key with a quote then `:,`', doc: `${P}: {http'RequestTimeout':, serverUrl: x}\n` },
  { name: '`key: }` in a flow mapping after a merge', doc: `a: &a {httpRequestTimeout: 5s}\n${P}: {<<: *a, httpRequestTimeout: }\n` },
  { name: '`key:}` alone in a flow mapping', doc: `${P}: {httpRequestTimeout:}\n` },
  { name: '`"key":value` in a flow mapping', doc: `${P}: {"serverUrl":http://a}\n` },
  { name: '`key:value` in a flow mapping is one scalar', doc: `${P}: {serverUrl:http://a}\n` },
  { name: 'URL with a query and fragment', doc: `${P}:\n  serverUrl: http://a:80/x?y=1#frag\n` },
  { name: 'URL, space, hash: a comment', doc: `${P}:\n  serverUrl: http://a #frag\n` },
  { name: 'sequence key at the top (v2 and v3 fail)', doc: `? [a, b]\n: 1\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'sequence key in a flow mapping', doc: `{[a]: 1, ${P}: {httpRequestTimeout: 50s}}\n` },
  { name: 'mapping key', doc: `{a: 1}: x\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'two sequence keys', doc: `? [a]\n: 1\n? [b]\n: 2\n` },
  { name: 'empty key', doc: `: x\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: '!!binary key', doc: `!!binary aWFhc05ldHdvcmtQcm92aWRlcg==:\n  httpRequestTimeout: 10s\n` },
  { name: 'null key', doc: `~: x\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'two null spellings as keys', doc: `~: x\nnull: y\n${P}:\n  httpRequestTimeout: 10s\n` },
  { name: 'int key and string key with the same text', doc: `1: x\n"1": y\n${P}:\n  httpRequestTimeout: 10s\n` },
  // Comments, keys
  { name: 'comments everywhere', doc: `# head\n${P}: # c1\n  # c2\n  serverUrl: http://a # c3\n  httpRequestTimeout: 50s#notcomment\n# tail\n` },
  { name: 'quoted keys', doc: `"${P}":\n  'serverUrl': http://a\n  "httpRequestTimeout": 50s\n` },
  { name: 'escaped key', doc: `"iaasNetwork\\x50rovider":\n  httpRequestTimeout: 50s\n` },
  { name: 'unicode escape in a key', doc: `${P}:\n  "httpRequest\\u0054imeout": 50s\n` },
  { name: 'keys with trailing spaces before the colon', doc: `${P}  :\n  httpRequestTimeout   : 50s\n` },
  { name: 'quoted key with a trailing space', doc: `"${P} ":\n  httpRequestTimeout: 50s\n` },
  { name: 'key case differs', doc: `iaasnetworkprovider:\n  httpRequestTimeout: 50s\n` },
  { name: 'setting case differs', doc: `${P}:\n  HttpRequestTimeout: 50s\n  serverURL: http://a\n` },
  { name: 'explicit key ?', doc: `? ${P}\n: httpRequestTimeout: 50s\n` },
  { name: 'explicit setting key ?', doc: `${P}:\n  ? httpRequestTimeout\n  : 50s\n` },
  { name: 'long unrelated key', doc: `${'k'.repeat(2000)}: 1\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'very long values', doc: `${P}:\n  httpRequestTimeout: ${'9'.repeat(5000)}s\n  serverUrl: http://${'a'.repeat(20000)}\n` },
  { name: 'very long line', doc: `${P}:\n  httpRequestTimeout: ${'x'.repeat(70000)}\n`, stricter: F_LIMITS },
  { name: 'a line over 32 KiB (read, with a warning)', doc: `${P}:\n  httpRequestTimeout: ${'x'.repeat(50000)}\n` },
  { name: 'flow nesting 100 deep', doc: `foo: ${'['.repeat(100)}${']'.repeat(100)}\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'flow nesting 101 deep', doc: `foo: ${'['.repeat(101)}${']'.repeat(101)}\n${P}:\n  httpRequestTimeout: 50s\n`, stricter: F_LIMITS },
  { name: 'flow nesting 200 deep', doc: `foo: ${'['.repeat(200)}${']'.repeat(200)}\n${P}:\n  httpRequestTimeout: 50s\n`, stricter: F_LIMITS },
  { name: 'mapping nesting 150 deep', doc: `foo: ${'{a: '.repeat(150)}1${'}'.repeat(150)}\n${P}:\n  httpRequestTimeout: 50s\n`, stricter: F_LIMITS },
  { name: 'brackets inside a quoted string', doc: `foo: "${'['.repeat(150)}"\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'braces inside a comment', doc: `# ${'{'.repeat(150)}\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'plain continuation indented 500 columns', doc: `foo:\n${' '.repeat(500)}bar\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'block scalar line indented 500 columns', doc: `foo: |\n${' '.repeat(500)}bar\n${P}:\n  httpRequestTimeout: 50s\n` },
  // Line endings, BOM, characters
  { name: 'CRLF line endings', doc: `${P}:\r\n  serverUrl: http://a\r\n  httpRequestTimeout: 50s\r\n` },
  { name: 'CRLF in a block scalar', doc: `${P}:\r\n  httpRequestTimeout: |\r\n    50s\r\n` },
  { name: 'BOM', doc: `\uFEFF${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'BOM before an indented mapping', doc: `\uFEFF  a: 1\n  ${P}:\n    httpRequestTimeout: 3s\n` },
  { name: 'BOM before an indented mapping, then a less indented key', doc: `\uFEFF  ${P}:\n    httpRequestTimeout: 3s\nenableIPv4: []\n` },
  { name: 'BOM before an indented CRLF mapping', doc: `\uFEFF    ${P}:\r\n      httpRequestTimeout: 50s\r\n    enableIPv4: true\r\n` },
  { name: 'BOM inside a value', doc: `${P}:\n  httpRequestTimeout: \uFEFF50s\n` },
  // libyaml's scanner skips column 0 while its buffer starts with U+FEFF (src/yaml-go/libyaml-bom.ts).
  { name: "U+FEFF as the reader's first chunk's last character, in a quoted key", doc: atFirstChunkEnd('\uFEFF') },
  { name: "the same text without the U+FEFF at the chunk's end", doc: atFirstChunkEnd('z') },
  { name: "U+FEFF starting the reader's second chunk in a comment after an empty value", doc: atByte(512, `a: 1\n${P}: # c`, '\uFEFF', `foo\n${P}: 50s\n`) },
  { name: "U+FEFF starting the reader's second chunk in a comment after a plain value", doc: atByte(512, `a: 1\n${P}: x # c`, '\uFEFF', `foo\nzz: 50s\n`) },
  { name: 'a second BOM, then a comment and a key', doc: '\uFEFF\uFEFF#c\nx: 1\n' },
  // The `]` after an alias's name starts a token: the reader refills there, not at the U+FEFF cut by the chunk end.
  { name: 'U+FEFF cut by the first chunk end after an alias closing a flow sequence, CRLF', doc: atByte(510, `${P}: &a {}\r\nb: [x, *a]\r\n`, '\uFEFF', '') },
  // Past the stream's first, a U+FEFF at a line's start before the first document is text to libyaml.
  { name: 'U+FEFF starting a line after a comment', doc: `# h\n\uFEFF&kp ${P}: {httpRequestTimeout: 5s}\n` },
  { name: 'U+FEFF before "---" after a directive', doc: `%YAML 1.1\n\uFEFF---\n${P}: {httpRequestTimeout: 5s}\n` },
  { name: 'a second BOM before an indented mapping', doc: `\uFEFF\uFEFF  a: 1\n  ${P}:\n    httpRequestTimeout: 3s\n` },
  { name: 'CR-only line endings', doc: `${P}:\r  httpRequestTimeout: 50s\r` },
  { name: 'NEL as a line break', doc: `${P}:\u0085  httpRequestTimeout: 50s\n` },
  { name: 'NEL inside double quotes', doc: `${P}:\n  httpRequestTimeout: "50\u0085s"\n` },
  { name: 'LS inside a plain value', doc: `${P}:\n  httpRequestTimeout: 50\u2028s\n` },
  { name: 'PS after a value', doc: `${P}:\n  httpRequestTimeout: 50s\u2029\n`, stricter: F_BREAKS },
  { name: 'LS after a key', doc: `${P}:\u2028  httpRequestTimeout: 5s\n`, stricter: F_BREAKS },
  { name: 'PS ending the text', doc: `${P}:\n  httpRequestTimeout: 5s\u2029`, stricter: F_BREAKS },
  { name: 'LS folded in a plain value', doc: `${P}:\n  httpRequestTimeout: 5\u2028    s\n`, stricter: F_BREAKS },
  { name: 'PS between flow entries', doc: `${P}: {httpRequestTimeout: 5s,\u2029serverUrl: x}\n`, stricter: F_BREAKS },
  { name: 'LS after a space in quotes', doc: `${P}:\n  httpRequestTimeout: '5 \u2028s'\n`, stricter: F_BREAKS },
  { name: 'LS escaped in double quotes', doc: `${P}:\n  httpRequestTimeout: "5\\\u2028s"\n`, stricter: F_BREAKS },
  { name: 'LS in a block scalar', doc: `${P}:\n  httpRequestTimeout: |\n    5\u2028    s\n`, stricter: F_BREAKS },
  { name: 'PS after an anchor name', doc: `b: &b\u2029r:\n${P}:\n  httpRequestTimeout: 5s\n`, stricter: F_BREAKS },
  { name: 'PS after an alias in a flow mapping', doc: `m: &m {r: *m\u2029}\n${P}:\n  httpRequestTimeout: 5s\n`, stricter: F_BREAKS },
  { name: 'LS after a flow collection', doc: `n: &n {}\u2028m:\n${P}:\n  httpRequestTimeout: 5s\n`, stricter: F_BREAKS },
  // After an indented first mapping, an LS or PS starting a line is a blank line to libyaml, not a less indented one.
  { name: 'PS in an indentation before a misaligned key', doc: `    a: 1\n    ${P}:\n  \u2029        serverUrl: x\n      httpRequestTimeout: 5s\n` },
  {
    name: 'PS starting a line before an aligned key',
    doc: `    a: 1\n    ${P}:\n\u2029      serverUrl: x\n      httpRequestTimeout: 5s\n`,
    stricter: F_BREAKS,
  },
  { name: 'LS in an indentation before an aligned key', doc: `    ${P}:\n  \u2028      httpRequestTimeout: 5s\n`, stricter: F_BREAKS },
  { name: 'LS inside a quoted block key', doc: `${P}:\n  'serv\u2028erUrl': x\n  httpRequestTimeout: 3s\n` },
  { name: 'PS inside a double-quoted key', doc: `"a\u2029b": 1\n${P}:\n  httpRequestTimeout: 3s\n` },
  { name: 'LS inside a quoted flow mapping key', doc: `{'a\u2028b': 1}\n` },
  { name: 'LS inside a quoted key in a flow sequence', doc: `['a\u2028b': 1]\n` },
  { name: 'LS inside a quoted explicit key', doc: `${P}:\n  ? 'a\u2028b'\n  : x\n  httpRequestTimeout: 3s\n` },
  { name: 'LS inside a quoted flow set entry', doc: `${P}: {'a\u2028b'}\n` },
  { name: 'LS inside a comment', doc: `# a\u2028b\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'raw BEL inside double quotes', doc: `${P}:\n  httpRequestTimeout: "50s\u0007"\n` },
  { name: 'raw BEL in a plain value', doc: `${P}:\n  httpRequestTimeout: 50\u0007s\n` },
  { name: 'NUL', doc: `${P}:\n  httpRequestTimeout: 50s\u0000\n` },
  { name: 'DEL', doc: `${P}:\n  httpRequestTimeout: 50s\u007f\n` },
  { name: 'C1 control', doc: `${P}:\n  httpRequestTimeout: 50s\u0090\n` },
  { name: 'U+FFFE', doc: `${P}:\n  httpRequestTimeout: 50s\uFFFE\n` },
  { name: 'control character in a comment', doc: `# \u0001\n${P}:\n  httpRequestTimeout: 50s\n` },
  { name: 'control character in a second document', doc: `${P}:\n  httpRequestTimeout: 50s\n---\n\u0001\n` },
  { name: 'control character far into a second document (v2 reads, v3 fails)', doc: `${P}:\n  httpRequestTimeout: 50s\n---\n${comment(10000)}\u0001\n` },
  // A leading BOM's 3 bytes are in the reader's first chunk: "..." at byte 502 (v2 reads), 509 (both fail).
  {
    name: 'BOM, "..." at byte 502, control character in the second chunk',
    doc: `\uFEFF${atByte(499, `${P}: {httpRequestTimeout: 5s}\n`, '', '...\n# xxxx\n\u0001\n')}`,
  },
  {
    name: 'BOM, "..." at byte 509, control character in the second chunk',
    doc: `\uFEFF${atByte(506, `${P}: {httpRequestTimeout: 5s}\n`, '', '...\n# xxxx\n\u0001\n')}`,
  },
  { name: 'escaped \\/ in double quotes', doc: `${P}:\n  httpRequestTimeout: "50s\\/"\n` },
  { name: 'surrogate pair escape', doc: `${P}:\n  httpRequestTimeout: "\\ud83d\\ude00"\n` },
  // Syntax errors
  { name: 'unclosed flow sequence', doc: `${P}:\n  httpRequestTimeout: [50s\n` },
  { name: 'unterminated quote in an unrelated key', doc: `foo: "unterminated\n${P}:\n  httpRequestTimeout: 50s\n` },
];

describe('readConfYml agrees with yaml.v2 (controller) and yaml.v3 (agent)', () => {
  let answers: Map<string, ConfYmlAnswer>;

  beforeAll(async () => {
    const docs = corpus.map((c) => c.doc);
    const got = await askConfYml(docs);
    answers = new Map(docs.map((d, i) => [d, got[i]!]));
  });

  it('has distinct corpus documents', () => {
    expect(new Set(corpus.map((c) => c.doc)).size).toBe(corpus.length);
    expect(new Set(corpus.map((c) => c.name)).size).toBe(corpus.length);
  });

  describe.each(corpus.filter((c) => c.stricter).map((c) => [c.name, c] as const))('STRICTER %s', (_name, c) => {
    it(`is refused although Go reads it (${c.stricter})`, () => {
      const answer = answers.get(c.doc)!;
      expect({ v2: answer.v2.ok, v3: answer.v3.ok }).toEqual({ v2: true, v3: true });
      expect(readConfYml(c.doc).ok).toBe(false);
    });
  });

  describe.each(corpus.filter((c) => !c.stricter).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    it('reads as Go does', () => {
      const m = confMismatch(c.doc, answers.get(c.doc)!);
      if (m) throw new Error(m);
    });
  });
});

// ---------------------------------------------------------------------------------------
// Generated conf.yml documents
// ---------------------------------------------------------------------------------------

/**
 * Disagreements the generated suites set aside, each a named class with its reason and a
 * test of its documents; every other disagreement fails. A class being fixed stays here
 * only until its fix lands.
 */
const SET_ASIDE: ReadonlyArray<{ name: string; matches: (doc: string, ts: ConfYmlReading, go: ConfYmlAnswer) => boolean }> = [
  {
    // The corpus's F_BREAKS cases: deliberate, on the safe side.
    name: 'stricter: LS or PS outside a quoted value, refused with its own message while Go reads it',
    matches: (_doc, ts, go) =>
      goReads(go) && refusedWith(ts, /contains U\+202[89] [^]*, which this webhook reads only inside a quoted value between two other characters/),
  },
  {
    // Being fixed (a false accept: libyaml skips a tab before a token only where no simple key is allowed): drop this entry when the fix lands.
    name: 'known: a tab before a token at the start of a line or after "- " / "? " (`"a:\\n  \\tb"`), accepted while Go refuses it ("found character that cannot start any token")',
    matches: (doc, ts, go) =>
      doc.includes('\t') && tsReads(ts) && [go.v2, go.v3].every((d) => !d.ok && /found character that cannot start any token/.test(d.error ?? '')),
  },
];

function goReads(go: ConfYmlAnswer): boolean {
  return go.v2.ok || go.v3.ok;
}

function tsReads(ts: ConfYmlReading): boolean {
  return ts.agent !== undefined || ts.controller !== undefined;
}

function refusedWith(ts: ConfYmlReading, detail: RegExp): boolean {
  return !ts.ok && ts.errors.some((e) => detail.test(e.detail));
}

describe('readConfYml agrees with Go on generated documents', () => {
  const run = async (harsh: boolean, numRuns: number, seed = SEED) => {
    const docs = fc.sample(documentArb(harsh), { numRuns, seed });
    const answers = await askConfYml(docs);
    const mismatches: string[] = [];
    const setAside = new Map<string, number>();
    let readable = 0;
    let disagreeing = 0;
    docs.forEach((doc, i) => {
      const go = answers[i]!;
      if (go.v2.ok && go.v3.ok) {
        if (go.v2.serverUrlHex === go.v3.serverUrlHex && go.v2.httpRequestTimeoutHex === go.v3.httpRequestTimeoutHex) readable++;
        else disagreeing++;
      }
      const m = confMismatch(doc, go);
      if (m === undefined) return;
      const known = SET_ASIDE.find((c) => c.matches(doc, readConfYml(doc), go));
      if (known) setAside.set(known.name, (setAside.get(known.name) ?? 0) + 1);
      else mismatches.push(m);
    });
    console.log(
      `generated conf.yml (${harsh ? 'harsh' : 'plain'} grammar): seed ${SEED}, ${docs.length} documents; set aside: ${JSON.stringify(Object.fromEntries(setAside))}`,
    );
    return { docs, mismatches, readable, disagreeing };
  };

  it(`reaches every class the generator is for: ${Object.keys(FEATURES).join('; ')}`, () => {
    const docs = fc.sample(documentArb(false), { numRuns: 5_000, seed: SEED }); // the plain test's documents
    const counts = Object.fromEntries(Object.entries(FEATURES).map(([name, marker]) => [name, docs.filter((d) => marker.test(d)).length]));
    console.log(`generated conf.yml: documents per class ${JSON.stringify(counts)}`);
    for (const [name, count] of Object.entries(counts)) expect([name, count >= 5]).toEqual([name, true]);
    expect(Math.max(...docs.map((d) => d.length))).toBeLessThan(4096);
  });

  it('on 5 000 documents from a grammar of quoting, nulls, tags, anchors, merges, duplicates, directives, line endings, and mutants of the fixture conf.yml', async () => {
    const { docs, mismatches, readable, disagreeing } = await run(false, 5_000);
    assertNoMismatches('generated documents', docs.length, mismatches);
    // The grammar must keep producing documents Go reads, and ones where v2 and v3 differ.
    expect(readable).toBeGreaterThan(docs.length * 0.2);
    expect(disagreeing).toBeGreaterThan(docs.length * 0.005);
  });

  // The same grammar with harsher features switched on (tags Go cannot resolve, !!bool on
  // YAML 1.1 words, !!merge / ! <<, alias keys, duplicate keys Go never decodes, CR line
  // breaks, NEL, control characters, %YAML 1.2, \/ and surrogate escapes, garbage in a later
  // document, a bare tag and `key:` before "," or "}" in flow mappings, bad "%" escapes).
  it('on 2 000 documents of the harsh grammar', async () => {
    const { docs, mismatches } = await run(true, 2_000);
    assertNoMismatches('generated documents', docs.length, mismatches);
  });
});
