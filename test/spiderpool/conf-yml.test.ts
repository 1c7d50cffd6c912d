import { LineCounter } from 'yaml';
import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { parseLikeLibyaml } from '../../src/yaml-go/libyaml-parse.js';
import { validateConfYml } from '../../src/spiderpool/conf-validate.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';
import { confProvider as provider, confRefusals } from '../helpers/conf-reading.js';

/** The one refusal of `text`. */
function refusal(text: string): string {
  const refusals = confRefusals(text);
  expect(refusals).toHaveLength(1);
  return refusals[0]!;
}

/**
 * A document whose mapping `<name>0` (`first`) is merged `width` times into `<name>1`, that
 * one `width` times into `<name>2`, … up to `<name><levels>`, then the line `last`.
 */
function mergeLadder(name: string, first: string, levels: number, width: number, last: string): string {
  const lines = [`${name}0: &${name}0 ${first}`];
  for (let i = 1; i <= levels; i++) {
    const aliases = new Array<string>(width).fill(`*${name}${i - 1}`);
    lines.push(`${name}${i}: &${name}${i} {<<: [${aliases.join(', ')}]}`);
  }
  return `${[...lines, last].join('\n')}\n`;
}

describe('readConfYml reads scalars as Spiderpool’s Go decoders do', () => {
  it.each([
    ['httpRequestTimeout: 50s', '50s'],
    ['httpRequestTimeout: "50s"', '50s'],
    ["httpRequestTimeout: '1m30s'", '1m30s'],
    ['httpRequestTimeout: 50', '50'], // judged by its text, not as a number
    ['httpRequestTimeout: 1e3', '1e3'],
    ['httpRequestTimeout: yes', 'yes'],
    ['httpRequestTimeout: ~', ''],
    ['httpRequestTimeout: null', ''],
    ['httpRequestTimeout: NULL', ''],
    ['httpRequestTimeout:', ''],
    ['httpRequestTimeout: "null"', 'null'], // quoted: a string, not null
    ['httpRequestTimeout: "~"', '~'],
    ['httpRequestTimeout: !!str 50', '50'],
    ['httpRequestTimeout: !!null ""', ''],
    ['httpRequestTimeout: |\n    50s', '50s\n'], // block scalars keep their newline
    ['httpRequestTimeout: >-\n    50s', '50s'],
    ['httpRequestTimeout: 50s # the default', '50s'],
  ])('%j → %j', (line, expected) => {
    const text = `ipamUnixSocketPath: /var/run/spidernet/spiderpool.sock\niaasNetworkProvider:\n  serverUrl: http://p:80\n  ${line}\n`;
    expect(provider(text)).toEqual({ serverUrl: 'http://p:80', httpRequestTimeout: expected });
  });

  it.each([
    ['', 'an empty document'],
    ['# only a comment\n', 'a comment'],
    ['enableIPv4: true\n', 'no provider block'],
    ['iaasNetworkProvider:\n', 'a null block'],
    ['iaasNetworkProvider: ~\n', 'a null block'],
    ['~\n', 'a null document'],
  ])('reads %j (%s) as the provider turned off', (text) => {
    expect(provider(text)).toEqual({ serverUrl: '', httpRequestTimeout: '' });
  });

  it('reads only the first document of a stream, as Go’s Unmarshal does', () => {
    expect(provider('iaasNetworkProvider: {serverUrl: a}\n---\niaasNetworkProvider: {serverUrl: b}\n').serverUrl).toBe('a');
  });

  it.each([
    ['  a: 1\nb: 2\niaasNetworkProvider:\n  httpRequestTimeout: 3s\n', ''],
    ['  iaasNetworkProvider:\n    httpRequestTimeout: bad\nb: 2\n', 'bad'],
    ['   iaasNetworkProvider:\n     httpRequestTimeout: 3s\n# c\n\n  b: 2\n---\nc: 3\n', '3s'],
    ['---\n  "iaasNetworkProvider":\n    httpRequestTimeout: "3s\n  x"\r\nb: 2\r\n...\n', '3s x'],
  ])('reads only the lines before the first less indented key of an indented top-level mapping, as Go does (%j)', (text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });

  it('honours anchors, aliases and merge keys', () => {
    const text = [
      'defaults: &provider',
      '  serverUrl: http://p:80',
      '  httpRequestTimeout: 55s',
      'iaasNetworkProvider:',
      '  <<: *provider',
      '  httpRequestTimeout: 59s',
      '',
    ].join('\n');
    expect(provider(text)).toEqual({ serverUrl: 'http://p:80', httpRequestTimeout: '59s' });
  });

  it('lets the earlier mapping of a merge list win, as both decoders do', () => {
    const text = 'a: &a {httpRequestTimeout: 10s}\nb: &b {httpRequestTimeout: 20s}\niaasNetworkProvider:\n  <<: [*a, *b]\n';
    expect(provider(text).httpRequestTimeout).toBe('10s');
  });

  it('decodes a provider block that appears twice (via a merge) field by field', () => {
    const text = '<<: {iaasNetworkProvider: {serverUrl: http://p:80, httpRequestTimeout: 55s}}\n';
    expect(provider(text)).toEqual({ serverUrl: 'http://p:80', httpRequestTimeout: '55s' });
  });
});

describe('readConfYml refuses what either decoder refuses or reads differently', () => {
  it('warns about an explicit key written before a merge that redefines it: each component starts with its own value', () => {
    const text = 'base: &b {httpRequestTimeout: 100s}\niaasNetworkProvider:\n  httpRequestTimeout: 50s\n  <<: *b\n';
    const reading = readConfYml(text);
    expect(reading.ok).toBe(true);
    expect(reading.warnings.filter((w) => w.field !== 'base')).toEqual([
      {
        field: 'iaasNetworkProvider.httpRequestTimeout',
        message:
          'the agent (gopkg.in/yaml.v3) reads "50s", the controller (gopkg.in/yaml.v2) "100s": both start, each with its own value; write it once, outside merge keys (<<), without the "!" tag',
      },
    ]);
  });

  it('gives the parser’s line and column for YAML that does not parse', () => {
    expect(refusal('iaasNetworkProvider:\n  serverUrl: "http://p:80\n')).toMatch(
      /^: Invalid value: not valid YAML: line \d+, column \d+: Missing closing "quote/,
    );
  });

  it.each([
    [
      'duplicate keys (yaml.v3 refuses them)',
      'iaasNetworkProvider:\n  httpRequestTimeout: 50s\n  httpRequestTimeout: 100s\n',
      /line 3, column 3: mapping key "httpRequestTimeout" already defined at line 2, so Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start \(its controller reads it\)/,
    ],
    ['tabs as indentation', 'iaasNetworkProvider:\n\thttpRequestTimeout: 50s\n', /not valid YAML: line 2, column 1: /],
    ['an unknown anchor', 'iaasNetworkProvider: *nowhere\n', /refers to unknown anchor "nowhere"/],
    ['an anchor that contains itself', 'iaasNetworkProvider: &a {<<: *a}\n', /an anchor's value contains itself/],
    ['a merge of a scalar', 'iaasNetworkProvider: {<<: 5}\n', /a merge key \(<<\) must name a mapping or a list of mappings/],
  ])('refuses %s', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it.each([
    ['- a\n- b\n', '', /^: Invalid value: line 1, column 1: cannot unmarshal !!seq into types.SpiderpoolConfigmapConfig/],
    ['just text\n', '', /cannot unmarshal !!str `just text` into types.SpiderpoolConfigmapConfig/],
    ['iaasNetworkProvider: [a]\n', 'iaasNetworkProvider', /line 1, column 22: cannot unmarshal !!seq into types.IaaSProviderConfig/],
    [
      'iaasNetworkProvider:\n  httpRequestTimeout: {s: 50}\n',
      'iaasNetworkProvider.httpRequestTimeout',
      /line 2, column 23: cannot unmarshal !!map into string/,
    ],
    ['iaasNetworkProvider:\n  serverUrl: [http://a]\n', 'iaasNetworkProvider.serverUrl', /cannot unmarshal !!seq into string/],
  ])('refuses the wrong type in %j', (text, field, pattern) => {
    const message = refusal(text);
    expect(message.startsWith(`${field}: Invalid value: `)).toBe(true);
    expect(message).toMatch(pattern);
    expect(message).toMatch(/and controller \(gopkg.in\/yaml.v2\) refuse to start; write /);
  });

  it('stops expanding merge keys that grow exponentially, naming its own limit', () => {
    const text = mergeLadder('l', '{httpRequestTimeout: 50s, x: 1}', 12, 8, 'iaasNetworkProvider: {<<: *l12, serverUrl: http://p:80}');
    // Go's own ratio of values decoded through aliases (decode.go `allowedAliasRatio`).
    expect(refusal(text)).toMatch(/document contains excessive aliasing; Spiderpool's agent and controller cannot decode it/);
  });
});

describe('validateConfYml', () => {
  it('checks the provider block it reads', () => {
    const { errors } = validateConfYml('iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: 50\n');
    expect(errors.map(fieldErrorString)).toEqual([
      expect.stringMatching(/^iaasNetworkProvider\.httpRequestTimeout: Invalid value: "50": is not a Go duration \(time: missing unit in duration "50"\)/),
    ]);
  });

  it('refuses undecodable YAML even when the provider is off', () => {
    expect(validateConfYml('iaasNetworkProvider: [\n').errors).toHaveLength(1);
  });

  it('never throws, whatever the text', () => {
    for (const text of ['\u0000', '{{{{', ']]]', '&a *a', '? ? ?', '!!binary ZZZ', '%YAML 9.9\n---\n', '"\\uZZZZ"', 'a: b: c']) {
      expect(() => validateConfYml(text)).not.toThrow();
    }
  });
});

describe('hostile conf.yml (found by attacking the server)', () => {
  it('refuses deep flow nesting before parsing, every time (it once overflowed the stack and aborted V8)', () => {
    const deep = '['.repeat(1000) + ']'.repeat(1000);
    for (let i = 0; i < 3; i++) expect(refusal(deep)).toMatch(/nests flow collections \(\[ or \{\) more than 100 deep/);
  });

  it('refuses deep block nesting on one line before parsing, as its own limit', () => {
    expect(refusal(`${'- '.repeat(300)}x\n`)).toMatch(/opens more than 100 block collections on one line: this webhook's own limit/);
    expect(readConfYml(`${'- '.repeat(100)}x\n`).ok).toBe(false); // a list, refused by Go's decoders, not by the limit
    expect(refusal(`${'- '.repeat(100)}x\n`)).toMatch(/cannot unmarshal !!seq/);
  });

  it('counts only what libyaml reads as nesting: deep indentation, brackets in comments and quotes', () => {
    expect(readConfYml(`k:\n${' '.repeat(401)}x: 1\n`).ok).toBe(true);
    expect(readConfYml(`foo: |\n${' '.repeat(500)}bar\n`).ok).toBe(true);
    expect(readConfYml(`# ${'{'.repeat(150)}\nfoo: "${'['.repeat(150)}"\nbar: '${'['.repeat(150)}'\nbaz: a${'['.repeat(150)}\n`).ok).toBe(true);
    expect(refusal(`foo: [${'['.repeat(100)}${']'.repeat(100)}]\n`)).toMatch(/nests flow collections/);
  });

  it('counts no brackets in a block scalar, which Go reads as text; brackets after one still count', () => {
    const P = 'iaasNetworkProvider';
    expect(provider(`${P}:\n  serverUrl: |\n    ${'['.repeat(150)}\n  httpRequestTimeout: 3s\n`).httpRequestTimeout).toBe('3s');
    expect(refusal(`${P}:\n  serverUrl: |\n    x\n  httpRequestTimeout: ${'['.repeat(150)}\n`)).toMatch(/nests flow collections/);
    // In a block scalar too past 2 000: a safety net for the composer, not Go's behaviour.
    expect(provider(`${P}:\n  serverUrl: |\n    ${'['.repeat(2_000)}\n  httpRequestTimeout: 3s\n`).httpRequestTimeout).toBe('3s');
    expect(refusal(`${P}:\n  serverUrl: |\n    ${'['.repeat(2_001)}\n  httpRequestTimeout: 3s\n`)).toMatch(
      /nests \[ or \{ more than 2000 deep, counting those in block scalars/,
    );
    // An alias ended by ":" before the header (libyaml's name ends there): the brackets at the key's indentation are flow.
    expect(refusal(`k: &kt x\n${P}:\n  serverUrl: 'a'\n  *kt: |\n  other: ${'['.repeat(150)}\n`)).toMatch(/nests flow collections/);
  });

  it('ends every alias name before ":" that an earlier one hid, in one parse (a parse per name took minutes at the bound)', () => {
    const P = 'iaasNetworkProvider';
    // To the `yaml` package `*a: |` is an alias `a:` and the rest of the text one scalar, hiding the next `*a:`.
    const hiding = (repeats: number, tail = '') => `k: &a x\nm:\n${'  *a: |\n  b: [-]\n'.repeat(repeats)}${tail}`;
    let parses = 0;
    parseLikeLibyaml(hiding(200), () => (parses++, new LineCounter()));
    expect(parses).toBeLessThanOrEqual(3);
    // As Go reads them (its yaml.v2 and yaml.v3 decode both): `[-]` holds the plain scalar "-", each `|` is empty.
    expect(readConfYml(hiding(2)).ok).toBe(true);
    expect(provider(hiding(3_530, `${P}:\n  httpRequestTimeout: 3s\n`)).httpRequestTimeout).toBe('3s');
    // Brackets after a hidden alias at the key's indentation are flow (Go refuses them); in its block scalar, text.
    const hidden = (value: string) => `k: &k x\nl: &l y\n${P}:\n  *k: |\n  a: [-]\n  *l: |\n${value}\n  serverUrl: http://a\n`;
    expect(refusal(hidden(`  other: ${'['.repeat(150)}`))).toMatch(/nests flow collections/);
    expect(provider(hidden(`    ${'['.repeat(150)}`)).serverUrl).toBe('http://a');
  });

  it('accepts nesting within the limits', () => {
    expect(readConfYml(`x: ${'['.repeat(100)}${']'.repeat(100)}\n`).ok).toBe(true);
  });

  // What hostile text costs (each shape below was once quadratic) is a ratio of times, which
  // no jest timeout checks (none interrupts synchronous code): npm run bench (bench/conf-yml-cost.ts).
  it('reads a document with thousands of keys (the parser’s own duplicate check was quadratic: cost in bench/conf-yml-cost.ts)', () => {
    const keys = Array.from({ length: 3_000 }, (_, i) => `k${i}: v`).join('\n');
    expect(provider(`${keys}\niaasNetworkProvider: {serverUrl: http://a}\n`).serverUrl).toBe('http://a');
  });

  it('refuses a conf.yml over 64 KiB before parsing it, as its own limit', () => {
    expect(refusal(`# ${'x'.repeat(70_000)}\n`)).toBe(
      ": Invalid value: is 70003 characters long, more than 65536: this webhook's own limit against hostile input, not Spiderpool's (whose configuration is a few KiB, six levels deep); shorten conf.yml",
    );
    expect(readConfYml(`# ${'x'.repeat(70_000)}\n`).warnings).toEqual([]); // not also "read, but refused over 65536"
  });

  it('reads a conf.yml over 32 KiB and up to 64 KiB, with a warning naming the bound', () => {
    const large = `# ${'x'.repeat(40_000)}\niaasNetworkProvider: {serverUrl: http://a}\n`;
    const reading = readConfYml(large);
    expect(reading.ok && reading.provider.serverUrl).toBe('http://a');
    expect(reading.warnings).toEqual([
      {
        field: '',
        message: `is ${large.length} characters long, more than 32768 (Spiderpool's is a few KiB): read, but this webhook refuses one over 65536, its own limit against hostile input`,
      },
    ]);
    expect(validateConfYml(large).errors).toEqual([]);
    expect(readConfYml(`# ${'x'.repeat(30_000)}\niaasNetworkProvider: {serverUrl: http://a}\n`).warnings).toEqual([]);
  });

  it('parses hostile text only a few times, however many lines it would pad (64 parses of 32 KiB once held the event loop for 18 s)', () => {
    // 16 KiB each: the first pad, then 128 KiB of parses in all (7 more).
    for (const hostile of ["a: 'x\n".repeat(2_340), 'x: [\n1]\n'.repeat(1_820), `a:\n  b: "${'\nc'.repeat(8_190)}"\n`]) {
      let parses = 0;
      parseLikeLibyaml(hostile, () => (parses++, new LineCounter()));
      expect(parses).toBeLessThanOrEqual(10);
    }
    // A short text still gets every pad it needs: 40 flow lines at column 0, a parse each.
    const padded = `a:\n  b: [${Array.from({ length: 40 }, (_, i) => `\nq${i}`).join(',')}]\n`;
    let parses = 0;
    parseLikeLibyaml(padded, () => (parses++, new LineCounter()));
    expect(parses).toBeGreaterThan(40);
    expect(readConfYml(padded).ok).toBe(true);
  }, 60_000);

  it('reads hostile text at the bound: dashes and colons in flow collections, tags, LS inside quotes, private-use characters (cost in bench/conf-yml-cost.ts)', () => {
    // Each once cost a copy of the text or a walk of the document per occurrence: minutes at the bound.
    const fill = (unit: string) => `a: [${unit.repeat(Math.floor(60_000 / unit.length))}]\n`;
    for (const hostile of [fill('-,'), fill('a:,'), fill('!!str%2C x, '), fill('"a\u2028b", '), fill('\ue000\ue001\ue002, ')]) {
      expect(validateConfYml(hostile).errors).toEqual([]);
    }
  }, 60_000);

  it('refuses what overflows the parser’s stack instead of answering 500', () => {
    // Where the stack gives out depends on the caller's depth: either answer is a refusal.
    expect(refusal(`a: [${'b: '.repeat(10_000)}]\n`)).toMatch(/nests too deeply to read: this webhook's own limit|not valid YAML/);
    expect(refusal(`{${"'':".repeat(10_000)}}\n`)).toMatch(/nests too deeply to read|not valid YAML/);
  });

  it('recognises merge keys by their text, as Go does: a key tagged !!merge is an ordinary key', () => {
    // Found by attack: this let a fatal 500s through as a "merge".
    expect(validateConfYml('!!merge iaasNetworkProvider: {serverUrl: "http://p:80", httpRequestTimeout: "500s"}\n').errors.map((e) => e.field)).toEqual([
      'iaasNetworkProvider.httpRequestTimeout',
    ]);
    expect(provider('iaasNetworkProvider: {serverUrl: !!merge http://x}\n').serverUrl).toBe('http://x');
  });

  it('follows alias keys: a field set twice through one, or a mapping as a key, is refused', () => {
    expect(refusal('t: &t serverUrl\niaasNetworkProvider:\n  serverUrl: http://a\n  *t : http://b\n')).toMatch(
      /line 4, column 3: field serverUrl already set in type types\.IaaSProviderConfig, so Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start/,
    );
    expect(refusal('m: &m {a: 1}\niaasNetworkProvider:\n  *m : x\n')).toMatch(/has a mapping as a key/);
  });

  it('refuses keys tagged with a type Go cannot give a field name', () => {
    expect(refusal('iaasNetworkProvider:\n  !!int httpRequestTimeout: 50s\n')).toMatch(
      /cannot decode !!str `httpRequestTimeout` as a !!int, so Spiderpool's agent \(gopkg.in\/yaml.v3\) and controller/,
    );
  });

  it('counts decoded values as Go does: 10 000 plain keys are fine', () => {
    expect(
      readConfYml(
        `${Array.from({ length: 10_000 }, (_, i) => `k${i}: v`)
          .join('\n')
          .slice(0, 32_000)}\n`,
      ).ok,
    ).toBe(true);
  });

  it('checks duplicate keys only in the mappings it decodes, as yaml.v3 does', () => {
    expect(readConfYml('foo:\n  a: 1\n  a: 2\n').ok).toBe(true);
    expect(refusal('iaasNetworkProvider:\n  serverUrl: a\n  serverUrl: b\n')).toMatch(/line 3, column 3: mapping key "serverUrl" already defined at line 2/);
    expect(refusal('a: 1\na: 2\n')).toMatch(/mapping key "a" already defined at line 1/);
  });

  it('resolves thousands of aliases in one pass (each alias once searched the whole document)', () => {
    const text = `a: &a x\nb: [${Array(9_000).fill('*a').join(',')}]\niaasNetworkProvider: {serverUrl: *a}\n`;
    expect(provider(text).serverUrl).toBe('x');
  });

  it('counts empty merged mappings against the decoding limit', () => {
    expect(refusal(mergeLadder('e', '{}', 8, 10, 'iaasNetworkProvider: {<<: *e8}'))).toMatch(/document contains excessive aliasing/);
  });

  it.each([70, 1000])('refuses a chain of %i merges instead of overflowing the stack', (length) => {
    const lines = ['m0: &m0 {a: 1}'];
    for (let i = 1; i < length; i++) lines.push(`m${i}: &m${i} {<<: *m${i - 1}}`);
    lines.push(`iaasNetworkProvider: {<<: *m${length - 1}}`);
    expect(refusal(`${lines.join('\n')}\n`)).toMatch(/merge keys \(<<\) nest more than 64 deep|decoding it reads more than 100000 values/);
  });

  it('refuses terminal controls anywhere, naming the character instead of echoing it', () => {
    const message = refusal('|- \u001b[2J\u001b[1;31mpwned\u0007\rX\u2028Y\u0085');
    expect(message).toMatch(/line 1, column 4: contains U\+001B, a control character;/);
    expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
  });

  it('escapes non-printable text that the parser quotes from the document', () => {
    const message = refusal('|- \u202epwned');
    expect(message).toContain('\\u202e');
    expect(message).not.toContain('\u202e');
  });

  it('bounds the values it quotes', () => {
    const { errors } = validateConfYml(`iaasNetworkProvider: {serverUrl: http://p, httpRequestTimeout: ${'9'.repeat(20_000)}}\n`);
    const message = fieldErrorString(errors[0]!);
    expect(message.length).toBeLessThan(2_000);
    expect(message).toContain('more characters)');
  });
});

describe('what Go’s YAML 1.1 decoders refuse (found by the differential test against yaml.v2/v3)', () => {
  const block = (line: string) => `iaasNetworkProvider:\n  serverUrl: http://p:80\n  ${line}\n`;

  it.each([
    ['!!null on text that is not null', block('httpRequestTimeout: !!null 50s'), /is tagged "!!null"/],
    [
      '!!int on text that is not a number',
      block('httpRequestTimeout: !!int 50s'),
      /cannot decode !!str `50s` as a !!int, so Spiderpool's agent \(gopkg.in\/yaml.v3\) and controller/,
    ],
    [
      '!!bool on yes (yaml.v3 refuses)',
      block('httpRequestTimeout: !!bool yes'),
      /cannot decode !!str `yes` as a !!bool, so Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start \(its controller reads it\)/,
    ],
    [
      '!!binary of invalid base64',
      block('httpRequestTimeout: !!binary NTB'),
      /line 3, column 32: !!binary value contains invalid base64 data; Spiderpool's agent and controller cannot decode it/,
    ],
    ['a control character', block('httpRequestTimeout: 50s\u0007'), /line 3, column 26: contains U\+0007/],
    ['a YAML 1.1 line break', block('httpRequestTimeout: 50\u2028s'), /contains U\+2028/],
    ['%YAML 1.2', `%YAML 1.2\n---\n${block('httpRequestTimeout: 50s')}`, /directive "%YAML 1\.2" is not supported/],
    ['an unknown directive', '%FOO bar\n---\na: 1\n', /directive "%FOO bar" is not supported/],
    ['\\/ in double quotes', block('httpRequestTimeout: "50s\\/"'), /uses an escape that YAML 1\.1 lacks/],
    ['a surrogate \\u escape', block('httpRequestTimeout: "\\ud83d\\ude00"'), /uses an escape that YAML 1\.1 lacks/],
    ['"?" in a plain value inside { }', 'iaasNetworkProvider: {serverUrl: http://b/x?y=1}\n', /has "\?" in an unquoted value inside \{ \} or \[ \]/],
    ['a sequence as a key', '? [a, b]\n: 1\n', /has a sequence as a key/],
    ['a value without a key', ': x\n', /has a value without a key/],
  ])('refuses %s', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it.each([
    ['!!str 50', block('httpRequestTimeout: !!str 50'), '50'],
    ['!!int 50', block('httpRequestTimeout: !!int 50'), '50'],
    ['a local tag', block('httpRequestTimeout: !duration 50s'), '50s'],
    ['!!null ~', block('httpRequestTimeout: !!null ~'), ''],
    ['!!merge <<', 'a: &a {httpRequestTimeout: 10s}\niaasNetworkProvider:\n  !!merge <<: *a\n', '10s'],
    ['an alias as a key', 't: &t httpRequestTimeout\niaasNetworkProvider:\n  *t : 10s\n', '10s'],
    ['%YAML 1.1', `%YAML 1.1\n---\n${block('httpRequestTimeout: 55s')}`, '55s'],
    ['a URL with a query in a block value', block('httpRequestTimeout: 5s?'), '5s?'],
    ['CRLF line endings', block('httpRequestTimeout: 59s').replace(/\n/g, '\r\n'), '59s'],
  ])('reads %s as Go does', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });
});

describe('null list items and map keys, which yaml.v3 drops (found by hostile testing against the Go oracle)', () => {
  const selector = (s: string) => `agent:\n  networkResourcePlugin:\n    devicePluginAffinity:\n      nodeSelector: ${s}\n`;
  const stops = (text: string) => validateConfYml(text).stops;

  it.each([
    [
      'values: [~] with In (the agent reads an empty list and refuses it)',
      selector('{matchexpressions: [{key: a, operator: In, values: [~]}]}'),
      { agent: true, controller: false },
    ],
    ['values: [!!null ~] with NotIn', selector('{matchexpressions: [{key: a, operator: NotIn, values: [!!null ~]}]}'), { agent: true, controller: false }],
    [
      'values: [*null] through an alias',
      `n: &n ~\n${selector('{matchexpressions: [{key: a, operator: In, values: [*n]}]}')}`,
      { agent: true, controller: false },
    ],
    [
      'values: [~] with Exists (the controller reads [""] and refuses it)',
      selector('{matchexpressions: [{key: a, operator: Exists, values: [~]}]}'),
      { agent: false, controller: true },
    ],
    [
      'a null requirement (the controller reads operator "")',
      selector('{matchexpressions: [~, {key: a, operator: In, values: [x]}]}'),
      { agent: false, controller: true },
    ],
    ['a null label key (the controller reads key "")', selector('{matchlabels: {a: b, ~: c}}'), { agent: false, controller: true }],
    ['a label key tagged !!null', selector('{matchlabels: {!!null "": c}}'), { agent: false, controller: true }],
    ['values: [~, b] with In', selector('{matchexpressions: [{key: a, operator: In, values: [~, b]}]}'), { agent: false, controller: false }],
  ])('%s', (_what, text, expected) => {
    expect(stops(text)).toEqual(expected);
  });
});

describe('tabs in the indentation of blank and comment lines (found by hostile testing against the Go oracle)', () => {
  it.each([
    ['after a plain value, a tab before the value column', 'enableIPv4: true\n\t\n'],
    ['the same with CRLF line ends', 'enableIPv4: true\r\n\t\r\n'],
    ['after blank lines', 'enableIPv4: true\n\n  \n\t\n'],
    ['a comment line indented with a tab', 'enableIPv4: true\n\t# c\n'],
    ['inside a nested mapping', 'agent:\n  networkResourcePlugin:\n    kubeletRootDir: /x\n  \t  \n'],
    ['after a list item', 'podResourceInject:\n  namespacesExclude:\n  - a\n \t\n'],
    ['after a key without a value', 'agent:\n\t\n  networkResourcePlugin: {}\n'],
    ['after a comment', 'enableIPv4: true\n# c\n\t\n'],
    ['after a quoted list item', 'podResourceInject:\n  namespacesExclude:\n  - "a"\n\t\n'],
    ['at the start of the document', '---\n\t\nenableIPv4: true\n'],
  ])('refuses one %s, as libyaml does', (_what, text) => {
    expect(refusal(text)).toMatch(/line \d+, column \d+: has a tab in the indentation of a blank or comment line/);
  });

  it.each([
    ['a tab at or past the value column after a plain value', 'enableIPv4: true\n \t# c\npodResourceInject:\n  enabled: true\n   \t\n'],
    ['tabs after the content of a line', 'enableIPv4: true\t\nagent:\t# c\n  networkResourcePlugin: {}\n'],
  ])('reads %s, as libyaml does', (_what, text) => {
    expect(readConfYml(text).ok).toBe(true);
  });
});

describe('the non-specific tag "!" on a plain scalar (found by hostile testing against the Go oracle)', () => {
  const selector = 'agent: {networkResourcePlugin: {devicePluginAffinity: {nodeSelector: {matchexpressions: [! ~]}}}}\n';
  it.each([
    [
      'enableIPv4: ! true\n',
      { agent: false, controller: true },
      'enableIPv4: Invalid value: "true": line 1, column 15: cannot unmarshal ! `true` into bool, so Spiderpool\'s controller (gopkg.in/yaml.v2) refuses to start (its agent reads it); remove the "!" tag',
    ],
    ['clusterSubnetAutoPoolDefaultRedundantIPNumber: ! 0x10\n', { agent: false, controller: true }, 'cannot unmarshal ! `0x10` into int'],
    ['agent: ! ~\n', { agent: false, controller: true }, 'cannot unmarshal ! `~` into types.AgentConfig'],
    [selector, { agent: false, controller: true }, 'cannot unmarshal ! `~` into v1.LabelSelectorRequirement'],
    ['ipamUnixSocketPath: ! ~\nenableIPv4: ! "true"\n', { agent: true, controller: true }, 'cannot unmarshal !!str `true` into bool'],
  ])('%j: yaml.v2 leaves it an unresolved string, yaml.v3 resolves it as untagged', (text, stops, message) => {
    const findings = validateConfYml(text);
    expect(findings.stops).toEqual(stops);
    expect(findings.errors.map(fieldErrorString).join('\n')).toContain(message);
  });

  it('stops only the controller when it alone reads a provider setting it refuses, and warns with both readings', () => {
    const findings = validateConfYml('iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: ! null\n');
    expect(findings.stops).toEqual({ agent: false, controller: true });
    expect(findings.errors.map(fieldErrorString)).toEqual([
      expect.stringMatching(
        /^iaasNetworkProvider\.httpRequestTimeout: Invalid value: "null": is not a Go duration .*, so Spiderpool's controller \(gopkg\.in\/yaml\.v2, which reads it so\) refuses to start with it; /,
      ),
    ]);
    expect(findings.warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/^the agent \(gopkg.in\/yaml.v3\) reads "", the controller \(gopkg.in\/yaml.v2\) "null": /),
    ]);
  });

  it('reads "! ~" into a string as the text "~" in yaml.v2 and as empty in yaml.v3', () => {
    const reading = readConfYml('ipamUnixSocketPath: ! ~\n');
    expect([reading.controller?.['ipamUnixSocketPath'], reading.agent?.['ipamUnixSocketPath']]).toEqual(['~', '']);
  });
});

describe('lone carriage returns, which libyaml reads as line breaks (found by hostile testing against the Go oracle)', () => {
  it.each([
    ['a value followed by CR', 'enableIPv4: true\r', { enableIPv4: true }],
    ['CR between keys', 'enableIPv4: true\renableIPv6: false\r', { enableIPv4: true, enableIPv6: false }],
    [
      'CR inside double quotes (folded to a space)',
      'agent:\r  networkResourcePlugin:\r    kubeletRootDir: "/a\r     b"\r',
      { agent: { networkResourcePlugin: { kubeletRootDir: '/a b' } } },
    ],
    ['CR CR LF', 'enableIPv4: true\r\r\nenableIPv6: false\r\n', { enableIPv4: true, enableIPv6: false }],
  ])('reads %s as Go does', (_what, text, expected) => {
    const reading = readConfYml(text);
    expect(reading.ok).toBe(true);
    expect(reading.agent).toMatchObject(expected);
    expect(reading.controller).toMatchObject(expected);
  });
});

describe('":" and keys in flow collections as libyaml scans them (found by the differential test against yaml.v2/v3)', () => {
  const flow = (entries: string) => `iaasNetworkProvider: {${entries}}\n`;
  const warnings = (text: string) => readConfYml(text).warnings.map((w) => `${w.field}: ${w.message}`);

  it.each([
    ['`key:,` as the key "key:"', flow('httpRequestTimeout:, httpRequestTimeout: 3s'), '3s'],
    ['`key  :,` as the key "key  :"', flow('httpRequestTimeout  :, !!merge <<: {httpRequestTimeout: 9s}'), '9s'],
    ['`key:}` after a merge as the key "key:"', `a: &a {httpRequestTimeout: 5s}\n${flow('<<: *a, httpRequestTimeout:')}`, '5s'],
    ['a key and `:,` on the next line as the key "key :"', flow('httpRequestTimeout\n   :, httpRequestTimeout: 3s'), '3s'],
    ['a quoted key before `:,` as the key', flow('"httpRequestTimeout":, serverUrl: x'), ''],
    ['an explicit key and its ":" on the next line', flow('? httpRequestTimeout\n  : 3s'), '3s'],
    ['a key 1024 characters before its ":"', flow(`${'a'.repeat(1024)}: 1, httpRequestTimeout: 3s`), '3s'],
    ['a key of 1024 astral characters', flow(`${'\u{1F600}'.repeat(1024)}: 1, httpRequestTimeout: 3s`), '3s'],
    ['an alias key and `:value`', `t: &t httpRequestTimeout\n${flow('*t :3s')}`, '3s'],
    ['`?key` as an explicit key', flow('?httpRequestTimeout: 3s'), '3s'],
    ['an anchored empty key and `:value`', flow('&a :4s, httpRequestTimeout: 3s'), '3s'],
    ['an anchored empty key at the top', `&a : x\n${flow('httpRequestTimeout: 3s')}`, '3s'],
  ])('reads %s', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });

  it('keeps a quoted escape of the private-use character that stands for a kept ":" (only plain scalars get their ":" back)', () => {
    expect(provider('iaasNetworkProvider:\n  x: [-]\n  serverUrl: "http://a\\uE000b"\n').serverUrl).toBe('http://a\uE000b');
    expect(provider(flow('x: [-], httpRequestTimeout: "3s\\uE000"')).httpRequestTimeout).toBe('3s\uE000');
    expect(provider(flow('serverUrl: x:, httpRequestTimeout: "3s\\uE000"')).httpRequestTimeout).toBe('3s\uE000');
  });

  it('keeps a ":" before "," "}" or "]" in a value', () => {
    expect(provider(flow('serverUrl: http://a:, httpRequestTimeout: 3s'))).toEqual({ serverUrl: 'http://a:', httpRequestTimeout: '3s' });
    expect(provider(flow('serverUrl: a::')).serverUrl).toBe('a::');
    expect(provider(flow("serverUrl: x'y':")).serverUrl).toBe("x'y':");
  });

  it('says that a key written `key:,` is not the key meant', () => {
    expect(warnings(flow('httpRequestTimeout:, serverUrl: x'))).toEqual([
      'iaasNetworkProvider.httpRequestTimeout:: is not httpRequestTimeout for Go: a ":" right before "," "}" or "]" is part of the key, so the value is ignored; put a space after ":"',
    ]);
    expect(warnings(flow('httpRequestTimeout: 3s'))).toEqual([]);
  });

  it('reads a key with a long run of blanks (a regular expression over the key once backtracked for half a minute at the bound: cost in bench/conf-yml-cost.ts)', () => {
    const blanks = ' '.repeat(60_000);
    // Past 32 KiB: each also warns of its length.
    expect(warnings(`? "a${blanks}b"\n: 1\n`)).toContain(`a${' '.repeat(47)}…: is not a key Spiderpool reads (keys are case-sensitive): it is ignored`);
    expect(warnings(`iaasNetworkProvider:\n  ? "httpRequestTimeout${blanks}:"\n  : 3s\n`)).toContain(
      `iaasNetworkProvider.httpRequestTimeout${' '.repeat(30)}…: is not httpRequestTimeout for Go: a ":" right before "," "}" or "]" is part of the key, so the value is ignored; put a space after ":"`,
    );
  });

  it.each([
    [
      '":" right before "["',
      flow('httpRequestTimeout:[1]'),
      /line 1, column 41: ":" right before "\[" inside \{ \} or \[ \] is part of the unquoted text before it/,
    ],
    ['":" right before "{"', 'foo: [a:{b: c}]\n', /line 1, column 8: ":" right before "\{"/],
    ['a key and its ":" on two lines', flow('httpRequestTimeout\n  : 3s'), /line 2, column 3: this ":" stands on a later line than its key begins/],
    ['a quoted key and its ":" on two lines', flow('"httpRequestTimeout"\n  : 3s'), /line 2, column 3: this ":" stands on a later line/],
    ['an anchor on the line before its key', flow('&x\n  httpRequestTimeout: 3s'), /line 2, column 21: this ":" stands on a later line/],
    ['a comment between a key and its ":"', flow('httpRequestTimeout #c\n  : 3s'), /this ":" stands on a later line/],
    ['a sequence pair and its ":" on two lines', 'foo: [a\n  : b]\n', /line 2, column 3: this ":" stands on a later line/],
    ['a key 1025 characters before its ":"', flow(`${'a'.repeat(1025)}: 1`), /this ":" stands over 1024 characters after its key begins/],
    ['an empty key', flow(': x'), /has a value without a key/],
    ['an anchor and `:value` as a value', flow('httpRequestTimeout: &a :3s'), /line 1, column 46/],
  ])('refuses %s', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it('judges only the first document', () => {
    expect(provider(`${flow('httpRequestTimeout: 3s')}---\nfoo: {a:[b], c\n  : d}\n`).httpRequestTimeout).toBe('3s');
  });
});

describe('properties before the ":" of an empty key (found by review against yaml.v2/v3)', () => {
  const P = 'iaasNetworkProvider';
  it.each([
    ['an anchored empty key first in a nested mapping', `${P}:\n  &a : x\n  httpRequestTimeout: 3s\n`, '3s'],
    ['a tagged empty key first in a nested mapping', `${P}:\n  !!str : x\n  httpRequestTimeout: 3s\n`, '3s'],
    ['an anchor and a tag, a comment after the parent key', `${P}: # c\n  &a !!null : x\n  httpRequestTimeout: 3s\n`, '3s'],
    ['blanks and a tab around the ":"', `${P}:\n   &a \t:   x\n   httpRequestTimeout: 3s\n`, '3s'],
    ['an alias of the anchored empty key as a value', `${P}:\n  &a : 7s\n  httpRequestTimeout: *a\n`, ''],
    ['a mapping with properties of its own before it', `${P}: &m\n  &a : x\n  httpRequestTimeout: 3s\nb: *m\n`, '3s'],
    ['a merged sequence item on the line after its "-"', `${P}:\n  <<:\n    -\n      &a : x\n      httpRequestTimeout: 3s\n`, '3s'],
  ])('reads %s as the key "" (the mapping gets none of them)', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });

  it('refuses, in the agent only, two such keys (yaml.v3: "mapping key already defined")', () => {
    const reading = readConfYml(`${P}:\n  &a : 7s\n  &b : 8s\n  httpRequestTimeout: 3s\n`);
    expect(reading.agent).toBeUndefined();
    expect(reading.controller).toMatchObject({ [P]: { httpRequestTimeout: '3s' } });
  });

  it('leaves properties on the line of the parent key to the mapping (Go: "did not find expected key")', () => {
    expect(refusal(`${P}:\n  &a\n  : 7s\n  httpRequestTimeout: 3s\n`)).toMatch(/has a value without a key/);
  });
});

describe('libyaml’s blanks are a space and a tab only: NBSP, U+2003, U+3000 are text (found by review against yaml.v2/v3)', () => {
  const P = 'iaasNetworkProvider';
  const flow = (entries: string) => `${P}: {${entries}}\n`;
  const merged = (key: string) => `a: &a {httpRequestTimeout: 5s}\n${P}: {${key}: *a, serverUrl: x}\n`;

  it.each([
    ['a NBSP before "#" in a flow value, then `:,`', flow('httpRequestTimeout: 3s\u00a0#x:, serverUrl: y'), '3s\u00a0#x:'],
    ['an em space before "#" in a flow value, then `:,`', flow('httpRequestTimeout: 3s\u2003#x:, serverUrl: y'), '3s\u2003#x:'],
    ['an ideographic space before "-," in a flow value', flow('httpRequestTimeout: \u3000-, serverUrl: y'), '\u3000-'],
    ['LS inside quotes between ideographic spaces', `${P}:\n  httpRequestTimeout: "3s\u3000\u2028\u3000x"\n`, '3s\u3000\u2028\u3000x'],
    ['LS inside quotes after a NBSP', `${P}:\n  httpRequestTimeout: "3s\u00a0\u2028x"\n`, '3s\u00a0\u2028x'],
    ['"<<" after a NBSP as an ordinary key', merged('\u00a0<<'), ''],
  ])('reads %s as text', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });

  it.each([
    ['a space before "#" starts a comment', flow('httpRequestTimeout: 3s #x\n , serverUrl: y'), '3s'],
    ['"<<" after a tab and a tag is a merge key', `a: &a {httpRequestTimeout: 5s}\n${P}:\n  !!merge\t<<: *a\n`, '5s'],
    ['"<<" alone is a merge key', merged('<<'), '5s'],
  ])('still reads libyaml’s blanks as blanks: %s', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });

  it('refuses a %YAML directive followed by a NBSP (Go: "did not find expected comment or line break")', () => {
    expect(refusal(`%YAML 1.1\u00a0\n---\n${P}:\n  httpRequestTimeout: 3s\n`)).toMatch(/directive "%YAML 1\.1\\u00a0" is not supported/);
    expect(provider(`%YAML 1.1 \t\n---\n${P}:\n  httpRequestTimeout: 3s\n`).httpRequestTimeout).toBe('3s');
  });

  it('says a key ending in blanks and ":" is the field only for spaces and tabs before the ":"', () => {
    const warnings = (text: string) => readConfYml(text).warnings.map((w) => w.message);
    expect(warnings(flow('httpRequestTimeout \t:, serverUrl: y'))).toEqual([expect.stringMatching(/^is not httpRequestTimeout for Go/)]);
    expect(warnings(flow('httpRequestTimeout\u00a0:, serverUrl: y'))).toEqual([
      expect.stringMatching(/^is not a key Spiderpool reads .*did you mean httpRequestTimeout\?$/),
    ]);
  });

  it('advises writing a quoted boolean without quotes only when it is one apart from spaces and tabs', () => {
    expect(refusal('enableSpiderSubnet: " true\t"\n')).toMatch(/write true without quotes$/);
    expect(refusal('enableSpiderSubnet: "true\u00a0"\n')).toMatch(/write true or false, without quotes$/);
  });
});

describe('anchor and alias names end before ":" or "?", as libyaml ends them (found by fuzzing against yaml.v2/v3)', () => {
  const P = 'iaasNetworkProvider';
  const t = `t: &t httpRequestTimeout\n`;
  it.each([
    ['an anchored empty key written `&b:`', `${P}:\n  &b: 7s\n  httpRequestTimeout: *b\n`, ''],
    ['an alias key written `*t:`', `${t}${P}:\n  *t: 7s\n`, '7s'],
    ['an alias key written `*t:` in a flow mapping', `${t}${P}: {*t: 7s}\n`, '7s'],
    ['`&b:7s` in a flow mapping', `${P}: {&b:7s, httpRequestTimeout: *b}\n`, ''],
    ['`&b:x` as a value: the anchor, then the text ":x"', `${P}:\n  httpRequestTimeout: &b:x\n`, ':x'],
    ['`&b?x` as a value: the anchor, then the text "?x"', `${P}:\n  httpRequestTimeout: &b?x\n`, '?x'],
    ['`&a:` at the top', `&a: x\n${P}:\n  httpRequestTimeout: 3s\n`, '3s'],
  ])('reads %s', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });

  it('still refuses a name followed by a character no token starts with, and a name that is not ASCII', () => {
    expect(refusal(`${P}:\n  httpRequestTimeout: &b@x\n`)).toMatch(/anchor or alias name "b@x" is not one Go's decoders read/);
    expect(refusal(`${P}:\n  httpRequestTimeout: &ä:x\n`)).toMatch(/anchor or alias name "ä:x" is not one Go's decoders read/);
    // `?` and a blank after a property: libyaml's "mapping keys are not allowed in this context".
    expect(refusal(`foo:\n  &b? x: 1\n${P}:\n  httpRequestTimeout: 3s\n`)).toMatch(/anchor or alias name "b\?" is not one Go's decoders read/);
  });
});

describe('a ":" with no key, properties or "?" before it, in any mapping (found by fuzzing against yaml.v2/v3)', () => {
  const P = 'iaasNetworkProvider';
  const provider_ = `${P}:\n  httpRequestTimeout: 3s\n`;
  it.each([
    [
      'first in a mapping no decoder reads',
      `foo:\n  : x\n${provider_}`,
      /line 2, column 3: has a value without a key \(Go's decoders: "did not find expected key"\)/,
    ],
    ['after a key in a mapping no decoder reads', `foo:\n  a: 1\n  : x\n${provider_}`, /line 3, column 3: has a value without a key/],
    ['in a sequence item', `foo:\n- : x\n${provider_}`, /line 2, column 3: has a value without a key/],
    ['in a flow mapping', `foo: {: x}\n${provider_}`, /line 1, column 7: has a value without a key/],
    ['in the provider', `${P}:\n  : x\n  httpRequestTimeout: 3s\n`, /line 2, column 3: has a value without a key/],
    [
      'with properties less indented than the mapping’s keys',
      `${P}:\n   httpRequestTimeout: 5s\n  !!null : ~\n`,
      /line 3, column 10: has a value without a key/,
    ],
    ['with an anchor less indented than the mapping’s keys', `${P}:\n   httpRequestTimeout: 5s\n  &a : ~\n`, /line 3, column 6: has a value without a key/],
  ])('is refused %s, as libyaml refuses it', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it.each([
    ['an explicit empty key', `foo:\n  ? \n  : x\n${provider_}`],
    ['an anchored empty key', `foo:\n  &a : x\n${provider_}`],
    ['an empty key in a second document', `${provider_}---\nfoo:\n  : x\n`],
  ])('is not %s', (_what, text) => {
    expect(provider(text).httpRequestTimeout).toBe('3s');
  });
});

describe('"%" escapes in tags and %TAG prefixes, as libyaml decodes them (found by fuzzing against yaml.v2/v3)', () => {
  const P = 'iaasNetworkProvider';
  const provider_ = `${P}:\n  httpRequestTimeout: 3s\n`;
  const tagged = (tag: string) => `${P}:\n  x: ${tag} 5\n  httpRequestTimeout: 3s\n`;
  const octet = /a "%" in a tag must start two hex digits of UTF-8 octets \(Go's decoders: "did not find URI escaped octet"\)/;
  it.each([
    ['a shorthand tag', tagged('!!%zz'), /line 2, column 6: a "%" in a tag/],
    ['a shorthand tag in a flow mapping', `${P}: {x: !!%zz 5, httpRequestTimeout: 3s}\n`, octet],
    ['a local tag ending at "%"', tagged('!a%'), octet],
    ['one hex digit', tagged('!!%8'), octet],
    ['a verbatim tag', tagged('!<tag:%zz>'), octet],
    ['a %TAG prefix', `%TAG !e! tag:%zz\n---\n${provider_}`, /%TAG prefix "tag:%zz": a "%" in a tag/],
    ['a tag after the provider', `${provider_}z: !!%zz 5\n`, /line 3, column 4: /],
    ['a tag on an empty key', `${P}:\n  !!%null : x\n  httpRequestTimeout: 3s\n`, octet],
    ['a character cut short', tagged('!!%C3'), octet],
    ['a leading octet no UTF-8 sequence starts with', tagged('!!%FF'), /"found an incorrect leading UTF-8 octet"/],
    ['a trailing octet out of its range', tagged('!<%C3%41>'), /"found an incorrect trailing UTF-8 octet"/],
    ['a verbatim !!null tag spelt with an escape', `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:%6Eull> 5s\n`, /is tagged "!!null"/],
    ['a %TAG prefix spelling !!null with an escape', `%TAG !e! tag:yaml.org,2002:%6E\n---\n${P}:\n  httpRequestTimeout: !e!ull 5s\n`, /is tagged "!!null"/],
  ])('refuses %s', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it('refuses a bad escape in the two tokens yaml.v3 scans past the first document (the agent alone)', () => {
    const reading = readConfYml(`${provider_}...\n%TAG !e! tag:%zz\n---\n`);
    expect(reading.ok ? [] : reading.errors.map(fieldErrorString).join()).toMatch(
      /line 4: did not find URI escaped octet .*Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start \(its controller reads it\)/,
    );
  });

  it.each([
    ['a shorthand tag of a UTF-8 character', tagged('!!%C3%A9'), '3s'],
    ['a verbatim tag of a UTF-8 character', tagged('!<%E2%82%AC>'), '3s'],
    ['a verbatim !!str spelt with an escape', `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:%73tr> 5s\n`, '5s'],
    ['a %TAG prefix spelling !!str with an escape', `%TAG !e! tag:yaml.org,2002:%73\n---\n${P}:\n  httpRequestTimeout: !e!tr 5s\n`, '5s'],
    ['an escaped "%" in a verbatim tag (decoded once)', `${P}:\n  httpRequestTimeout: !<tag:yaml.org,2002:%2573tr> 5s\n`, '5s'],
    ['a bad escape in a later document past the lookahead', `${provider_}---\nz: !!%zz 5\n`, '3s'],
  ])('reads %s', (_what, text, timeout) => {
    expect(provider(text).httpRequestTimeout).toBe(timeout);
  });
});

describe('a block scalar ending the text without a line break (found by review against yaml.v2/v3)', () => {
  // libyaml (scannerc.go yaml_parser_scan_block_scalar) appends only the breaks it read.
  const P = 'iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: ';
  it.each([
    ['|\n    30s', '30s'],
    ['|+\n    30s', '30s'],
    ['>\n    30s', '30s'],
    ['>+\n    30s\n    40s', '30s 40s'],
    ['|\n    30s   ', '30s   '],
    ['|\n    30s # x', '30s # x'],
    ['|\n    30s\n     ', '30s\n '], // more indented than the scalar: a content line
    ['|2\n    30s\n     ', '30s\n '],
    ['|+\n    30s\n    \t', '30s\n\t'],
    ['|+\n     ', ''],
  ])('reads %j without a final break, as Go does', (block, expected) => {
    expect(provider(P + block)).toEqual({ serverUrl: 'http://p:80', httpRequestTimeout: expected });
  });

  it.each([
    ['|\n    30s\n', '30s\n'],
    ['|\n    30s\n    ', '30s\n'], // the scalar's own indentation: not a content line
    ['|+\n    30s\n  ', '30s\n'],
    ['|+\n    30s\n\n  ', '30s\n\n'],
    ['|2+\n    30s\n    ', '30s\n'],
    ['|+\n\n  ', '\n'],
    ['|\n    30s\r', '30s\n'],
    ['|\n    30s\n...', '30s\n'],
  ])('keeps the breaks read in %j', (block, expected) => {
    expect(provider(P + block)).toEqual({ serverUrl: 'http://p:80', httpRequestTimeout: expected });
  });

  it('accepts a duration and a URL written so, which it once refused', () => {
    expect(readConfYml(`${P}|\n    30s`).ok).toBe(true);
    expect(provider('iaasNetworkProvider:\n  httpRequestTimeout: 3s\n  serverUrl: |\n    http://a:80').serverUrl).toBe('http://a:80');
  });

  it('names an unknown key so written as Go reads it', () => {
    const warnings = readConfYml('iaasNetworkProvider:\n  httpRequestTimeout: 3s\n  ? >\n    srvUrl').warnings;
    expect(warnings.map((w) => w.field)).toEqual(['iaasNetworkProvider.srvUrl']);
  });
});

describe('a byte order mark before an indented first line (found by the Go-oracle generator against yaml.v2/v3)', () => {
  // libyaml's reader takes the mark for no character (readerc.go yaml_parser_determine_encoding).
  it('reads an indented mapping after it as Go does', () => {
    expect(provider('\uFEFF  a: 1\n  iaasNetworkProvider:\n    httpRequestTimeout: 3s\n').httpRequestTimeout).toBe('3s');
    expect(provider('\uFEFF    iaasNetworkProvider:\r\n      serverUrl: "http://p:80"\r\n      httpRequestTimeout: 50s\r\n    enableIPv4: true\r\n')).toEqual({
      serverUrl: 'http://p:80',
      httpRequestTimeout: '50s',
    });
  });

  it('ends the first document at a less indented key after it, as without the mark', () => {
    const reading = readConfYml('\uFEFF  iaasNetworkProvider:\n    httpRequestTimeout: 3s\nenableIPv4: []\n');
    expect(reading.ok).toBe(true);
    expect(reading.warnings.map((w) => w.message).join('\n')).toMatch(/^line 3: Spiderpool ignores everything from line 3 on/m);
    expect(
      readConfYml('\uFEFF  a: 1\n b: 2\n')
        .warnings.map((w) => w.message)
        .join('\n'),
    ).toMatch(/^line 2: Spiderpool ignores everything from line 2 on/m);
  });

  it('still refuses what Go refuses after it', () => {
    expect(readConfYml('\uFEFF  a: 1\n\t b: 2\n').ok).toBe(false); // a tab in the indentation
    expect(readConfYml('\uFEFF \ta: 1\n').ok).toBe(false);
  });
});
