/**
 * Differential test of the whole conf.yml check against Spiderpool's start-up as the Go
 * oracle runs it (test/e2e/oracle: yaml.v3 for the agent, yaml.v2 for the controller,
 * into main's struct shapes, then ValidateConfig of the IaaS client when serverUrl is
 * set, the agent's socket path, and the networkResourcePlugin checks; Go 1.25 defaults),
 * on documents from a generator of the YAML features where the `yaml` package and libyaml
 * part ways. Per component, the webhook's verdict (starts or stops) must be Go's, and
 * where both decoders decode, the provider settings each reads must be Go's.
 *
 * The seed (seed.ts: the commit's under CI, else new every run) is printed; ORACLE_SEED=<n> replays a run.
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { providerSettings } from '../../src/spiderpool/conf-yml.js';
import { validateConfYml } from '../../src/spiderpool/conf-validate.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';
import { SPIDERPOOL_GO_NAME } from '../../src/go/version.js';
import { askConfYml, disposeOracle, ORACLE_DIR, type ConfYmlAnswer, type Decoding } from './oracle.js';
import { differentialSeed } from './seed.js';

const SEED = differentialSeed('ORACLE_SEED');
const RUNS = process.env.ORACLE_RUNS !== undefined ? Number(process.env.ORACLE_RUNS) : 6_000;

afterAll(disposeOracle);

/** The generator's features, each a marker the generated text carries when it is used. */
const FEATURES = {
  'tag on a scalar': /![!a-z]*[a-z]+ [^\n]/,
  'tag on a collection': /!![a-z]+ [[{]|!!(map|null)\n/,
  'tag right before "," or "}"': /!{1,2}[a-z]*[,}]/,
  '!!binary': /!!binary/,
  '!!merge': /!!merge/,
  '!!null on a mapping': /!!null\n|!!null \{/,
  'flow inside block': /: [[{]/,
  'flow continuation at column 0': /,\n[^ \n]/,
  'quoted continuation at column 0': /"[^"\n]*\n[^ \n][^"\n]*"/,
  'anchor on a key': /&k\d [a-zA-Z]/,
  'alias as a key': /\*k\d :/,
  'alias as a value': /: \*[a-z]\d/,
  'merge key': /<<: \*/,
  'merge list': /<<: \[\*/,
  'document start ---': /^---|\n---/,
  'document end ...': /\.\.\./,
  'tab line': /\n\t+\n|^\t/,
  CRLF: /\r\n/,
  'lone CR': /\r(?!\n)/,
  BOM: /^\uFEFF/,
  'U+0085': /\u0085/,
  'U+2028 or U+2029': /[\u2028\u2029]/,
  'comment right after a token': /["\]}]#/,
  '"-" before a flow indicator': /\[-[\],]/,
  'properties before an alias': /&a\d \*/,
  'serverUrl host forms': /serverUrl: "?https?:\/\/[^\n]*:/,
  'long ipamUnixSocketPath': /ipamUnixSocketPath: \/a{100}/,
  'tag on a key': /(^|\n)!{1,2}[a-z]+ [^\n]*:/,
  '!!bool on a YAML 1.1 word': /!!bool (yes|on|y)\b/,
  'token error right after the first document': /(---|\.\.\.)(\n(# c\n)?\t\n| @|\n"b\n|\n%FOO|\n&\n|\n!<|\n"a\\qb"| \|\n\t)/,
  'tokens right after the first document that stop nobody': /(---|\.\.\.)( \]\]|\nb: 1\n\t|\nb\n\t)/,
  'control character after the first document': /\u0001/,
} as const;

const P = 'iaasNetworkProvider';
const URLS = [
  '"http://p:80"',
  'http://:80',
  '"https://:"',
  '"http://u@:80"',
  '"http://h:80:80"',
  '"http://h:80:x"',
  '"ftp://h"',
  '"http://"',
  '"http://[fd00::1]:80"',
];
const TIMEOUTS = [
  '!!bool yes',
  '!!bool on',
  '!!int 5',
  '!!float 5',
  '5s',
  '50s',
  '600s',
  '"0s"',
  'x',
  '""',
  '!!str 50s',
  '!!binary NTBz',
  '!!binary NTB',
  '!!merge 6s',
  '!!null',
  '! 5s',
  '"5\ns"',
  "'5\n s'",
  '"5\u2028s"',
  '"5\u0085s"',
  '5s # c',
  '"5s"#c',
];
const SOCKETS = ['/var/run/spidernet/spiderpool.sock', `/${'a'.repeat(106)}`, `/${'a'.repeat(107)}`, `/${'a'.repeat(150)}`, '""'];

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);

/** A provider block in one of several YAML shapes. */
const providerBlock = fc
  .record({ url: pick(URLS), timeout: pick(TIMEOUTS), shape: fc.integer({ min: 0, max: 9 }), other: pick(['5s', '6s', '600s']) })
  .map(({ url, timeout, shape, other }) => {
    const plain = timeout.includes('\n') ? '5s' : timeout;
    switch (shape) {
      case 0:
        return `${P}:\n  serverUrl: ${url}\n  httpRequestTimeout: ${timeout}`;
      case 1:
        return `${P}: {serverUrl: ${url}, httpRequestTimeout: ${plain}}`;
      case 2:
        return `${P}: {serverUrl: ${url},\nhttpRequestTimeout: ${plain}}`;
      case 3:
        return `${P}: {serverUrl: ${url}, httpRequestTimeout: ${other}, <<: {httpRequestTimeout: 6s}}`;
      case 4:
        return `m1: &m1 {httpRequestTimeout: ${other}}\n${P}:\n  httpRequestTimeout: 5s\n  serverUrl: ${url}\n  <<: *m1`;
      case 5:
        return `${P}: !!null\n  serverUrl: ${url}`;
      case 6:
        return `${P}: !!map {serverUrl: ${url}, !!merge <<: [{httpRequestTimeout: ${other}}, {serverUrl: x}]}`;
      case 7:
        return `!!binary aWFhc05ldHdvcmtQcm92aWRlcg==:\n  serverUrl: ${url}`;
      case 8:
        return `${P}: {serverUrl: ${url}, httpRequestTimeout: !}`;
      default:
        return `${P}: {serverUrl: ${url}, httpRequestTimeout: !!null, x: 1}`;
    }
  });

/** Other top-level entries: tags, anchors and aliases as keys and values, YAML the two parsers part on. */
const otherEntry = pick([
  'enableIPv4: true',
  'enableIPv4: !!bool true',
  'enableIPv4: !!merge true',
  'enableIPv4: !!binary dHJ1ZQ==',
  'podResourceInject: !!null\n  enabled: true',
  'podResourceInject: {namespacesExclude: [-, a]}',
  'podResourceInject: {namespacesExclude: [a,\nb]}',
  'podResourceInject: {namespacesExclude: !!seq [a], enabled: !!str,}',
  'podResourceInject:\n  namespacesExclude: [!!binary YQ==, "b\nc"]',
  'agent: {networkResourcePlugin: {devicePluginAffinity: {nodeSelector: {matchlabels: !!null {a: b}}}}}',
  'agent: {networkResourcePlugin: {devicePluginAffinity: {nodeSelector: {matchlabels: {"-a": b}}}}}',
  '&k1 foo: 1\n*k1 : 2',
  '&k2 enableIPv6: true\n*k2 : false',
  '&k3 foo: 1\n*k3 : 2\n*k3 : 3',
  'a1: &a1 {enableIPv4: true}\n<<: *a1',
  'a2: &a2 {enableIPv4: true}\nenableIPv4: false\n<<: [*a2]',
  'foo: ""#c',
  'foo: [b]#c',
  'foo: !!str,',
  'foo: &a1 *a1',
  'foo: !x#c',
  'foo: &ä 1',
  'foo: "a\u2028b"',
  'foo: a\u2028b',
  '# c\u2029d',
  'foo: "x\u0085y"',
  'foo: b\tc',
  'foo: |\n  a\n  [b',
  `foo: # ${'{'.repeat(120)}`,
  `foo: "${'['.repeat(120)}"`,
  `ipamUnixSocketPath: ${'/a'.repeat(1)}${'a'.repeat(100)}`,
  '!!int 1: x',
  '!!bool yes: 1',
  '!foo bar: x',
  '!!str enableIPv4: true',
  '!!timestamp 2001-12-14: x',
  '!!null a: x',
  'enableIPv4: !!bool on',
  'enableIPv6: !!bool y',
  'podResourceInject: {namespacesExclude: [!!bool y, !!int 1, !!float 1]}',
]);

/** Text after the first document: what yaml.v3's two tokens of lookahead meet, and control characters (512-byte reads). */
const AFTER = (pad: number) => [
  '---\n\t\n',
  '...\n\t\n',
  '---\n# c\n\t\n',
  '--- @\n',
  '---\n"b\n',
  '---\n%FOO\n',
  '---\n&\n',
  '---\n!<\n',
  '---\n"a\\qb"\n',
  '--- |\n\t\n',
  '---\nb: 1\n\t\n',
  '---\nb\n\t\n',
  '--- ]]\n',
  '---\n\u0001\n',
  `---\n# ${'x'.repeat(pad)}\n\u0001\n`,
  `---\nb: c\n# ${'x'.repeat(pad)}\n\u0001\n`,
  `...\n# ${'x'.repeat(pad)}\n\u0001\n`,
];

const documentArb = fc
  .record({
    socket: fc.option(pick(SOCKETS), { freq: 3 }),
    provider: fc.option(providerBlock, { freq: 6 }),
    others: fc.array(otherEntry, { maxLength: 3 }),
    head: pick(['', '', '', '---\n', '--- !!null\n', '--- !!map\n', '...\n', '# c\n...\n', '\t\n', '#c\n\t\n', '&a1 *a1\n']),
    tail: fc.oneof(
      { weight: 3, arbitrary: pick(['', '', '', '...\n', '...\n...\n', '---\nenableIPv4: "x"\n', '\t\n', 'x: 1\n\t\n']) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 1200 }).chain((pad) => pick(AFTER(pad))) },
    ),
    nl: pick(['\n', '\n', '\n', '\r\n', '\r', '\u0085']),
    bom: fc.boolean(),
  })
  .map(({ socket, provider, others, head, tail, nl, bom }) => {
    const body = [...(socket === null ? [] : [`ipamUnixSocketPath: ${socket}`]), ...(provider === null ? [] : [provider]), ...others];
    // `&a1 *a1` as the whole document leaves nothing after it for Go to read.
    const text = head === '&a1 *a1\n' ? head : head + (body.length > 0 ? `${body.join('\n')}\n` : '') + tail;
    return (bom ? '\uFEFF' : '') + text.replace(/\n/g, nl);
  });

const goStarts = (d: Decoding, agent: boolean) => d.ok && !d.startError && !(agent && d.agentStartError);
const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** How the webhook disagrees with Go on one document: `[]` when it agrees. */
function disagreement(doc: string, go: ConfYmlAnswer): string[] {
  const findings = validateConfYml(doc);
  const reading = readConfYml(doc);
  const problems: string[] = [];
  if (findings.stops.agent === goStarts(go.v3, true) || findings.stops.controller === goStarts(go.v2, false)) problems.push('verdict');
  for (const [decoding, ours] of [
    [go.v3, reading.agent],
    [go.v2, reading.controller],
  ] as const) {
    if (!decoding.ok || ours === undefined || !decoding.utf8) continue;
    const settings = providerSettings(ours);
    if (hex(settings.serverUrl) !== decoding.serverUrlHex || hex(settings.httpRequestTimeout) !== decoding.httpRequestTimeoutHex)
      problems.push('provider settings');
  }
  return problems;
}

function describeDisagreement(doc: string, go: ConfYmlAnswer, problems: string[]): string {
  const findings = validateConfYml(doc);
  const agent = goStarts(go.v3, true);
  const controller = goStarts(go.v2, false);
  return (
    `document ${JSON.stringify(doc)} (${problems.join(', ')})\n` +
    `  Go: agent ${agent ? 'starts' : 'stops'} (${go.v3.ok ? `reads ${JSON.stringify([go.v3.serverUrl, go.v3.httpRequestTimeout])}` : go.v3.error}${go.v3.startError ? `; ${go.v3.startError}` : ''}${go.v3.agentStartError ? `; ${go.v3.agentStartError}` : ''}), ` +
    `controller ${controller ? 'starts' : 'stops'} (${go.v2.ok ? `reads ${JSON.stringify([go.v2.serverUrl, go.v2.httpRequestTimeout])}` : go.v2.error}${go.v2.startError ? `; ${go.v2.startError}` : ''})\n` +
    `  webhook: agent ${findings.stops.agent ? 'stops' : 'starts'}, controller ${findings.stops.controller ? 'stops' : 'starts'}\n    ${findings.errors.map(fieldErrorString).join('\n    ')}`
  );
}

/** Documents minimized at most (each costs an oracle run per reduction step). */
const MINIMIZED = 3;

/**
 * The smallest document found that still disagrees the same way: lines, then characters,
 * removed one at a time while the disagreement stays (each step asks Go every candidate at once).
 */
async function minimize(doc: string, problems: string[]): Promise<{ doc: string; go: ConfYmlAnswer }> {
  let best = doc;
  let bestGo = (await askConfYml([doc]))[0]!;
  for (let step = 0; step < 200; step++) {
    const lines = best.split('\n');
    const candidates = new Set<string>();
    lines.forEach((_, i) => candidates.add([...lines.slice(0, i), ...lines.slice(i + 1)].join('\n')));
    for (let i = 0; i < best.length && best.length <= 400; i++) candidates.add(best.slice(0, i) + best.slice(i + 1));
    candidates.delete(best);
    const list = [...candidates];
    const answers = await askConfYml(list);
    const smaller = list.findIndex((c, i) => JSON.stringify(disagreement(c, answers[i]!)) === JSON.stringify(problems));
    if (smaller < 0) break;
    best = list[smaller]!;
    bestGo = answers[smaller]!;
  }
  return { doc: best, go: bestGo };
}

describe('the whole conf.yml against Spiderpool start-up as Go runs it (libyaml features)', () => {
  const docs = fc.sample(documentArb, { numRuns: RUNS, seed: SEED });

  it(`covers every feature of the generator: ${Object.keys(FEATURES).join('; ')}`, () => {
    const counts = Object.fromEntries(Object.entries(FEATURES).map(([name, marker]) => [name, docs.filter((d) => marker.test(d)).length]));
    console.log(`libyaml-features differential: seed ${SEED}, ${docs.length} documents; documents per feature: ${JSON.stringify(counts)}`);
    for (const [name, count] of Object.entries(counts)) expect([name, count > RUNS * 0.005]).toEqual([name, true]);
  });

  it(`agrees per component on every one of ${RUNS} documents (seed printed; ORACLE_SEED replays; ORACLE_RUNS sets the count)`, async () => {
    const answers = await askConfYml(docs);
    const mismatches: Array<{ doc: string; go: ConfYmlAnswer; problems: string[] }> = [];
    const outcomes = { bothStart: 0, agentOnly: 0, controllerOnly: 0, neither: 0, readDifferently: 0 };
    docs.forEach((doc, i) => {
      const go = answers[i]!;
      const agent = goStarts(go.v3, true);
      const controller = goStarts(go.v2, false);
      outcomes[agent && controller ? 'bothStart' : agent ? 'agentOnly' : controller ? 'controllerOnly' : 'neither']++;
      if (go.v2.ok && go.v3.ok && go.v2.httpRequestTimeoutHex !== go.v3.httpRequestTimeoutHex) outcomes.readDifferently++;
      const problems = disagreement(doc, go);
      if (problems.length > 0) mismatches.push({ doc, go, problems });
    });
    console.log(`outcomes: ${JSON.stringify(outcomes)}; agreement ${docs.length - mismatches.length}/${docs.length}`);
    if (mismatches.length > 0) {
      const shown: string[] = [];
      for (const [i, m] of mismatches.slice(0, 12).entries()) {
        const minimal = i < MINIMIZED ? await minimize(m.doc, m.problems) : undefined;
        shown.push(
          describeDisagreement(m.doc, m.go, m.problems) + (minimal ? `\n  minimal: ${describeDisagreement(minimal.doc, minimal.go, m.problems)}` : ''),
        );
      }
      throw new Error(
        `${mismatches.length} of ${docs.length} documents disagree with Go (seed ${SEED}; replay with ORACLE_SEED=${SEED}):\n\n${shown.join('\n\n')}`,
      );
    }
    // Every outcome must keep being reached, or the comparison proves little.
    expect(outcomes.bothStart).toBeGreaterThan(RUNS * 0.05);
    expect(outcomes.neither).toBeGreaterThan(RUNS * 0.05);
    expect(outcomes.agentOnly + outcomes.controllerOnly).toBeGreaterThan(RUNS * 0.01);
    expect(outcomes.readDifferently).toBeGreaterThan(RUNS * 0.005);
  });
});

describe('the Go release the oracle follows', () => {
  it('is the release of src/go/version.ts (godebug default in the oracle go.mod)', () => {
    const mod = readFileSync(join(ORACLE_DIR, 'go.mod'), 'utf8');
    expect(/^godebug default=(go\d+\.\d+)$/m.exec(mod)?.[1]).toBe(SPIDERPOOL_GO_NAME);
  });
});
