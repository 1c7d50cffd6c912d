/**
 * conf.yml's structure as libyaml (Go's yaml.v2/v3 scannerc.go, parserc.go) reads it where
 * the `yaml` package reads otherwise: flow continuation lines, block scalar headers,
 * explicit keys, and what ends the first document. Each expectation was checked against
 * yaml.v2 and yaml.v3 (test/e2e/oracle).
 */
import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { confProvider as provider, confRefusals } from '../helpers/conf-reading.js';

const refusal = (text: string): string => confRefusals(text).join('; ');

const P = 'iaasNetworkProvider';

describe('a flow mapping value on the line after its key, at column 0 (libyaml ignores indentation inside { } and [ ])', () => {
  it.each([
    [`${P}: {httpRequestTimeout:\n3s}\n`, { serverUrl: '', httpRequestTimeout: '3s' }],
    [`${P}: {httpRequestTimeout: 3s, serverUrl: \ny}\n`, { serverUrl: 'y', httpRequestTimeout: '3s' }],
    [`${P}: {httpRequestTimeout: 3s, serverUrl:\ny}\n`, { serverUrl: 'y', httpRequestTimeout: '3s' }],
    [`x: {a:\nb}\n${P}: {httpRequestTimeout: 3s}\n`, { serverUrl: '', httpRequestTimeout: '3s' }],
    [`${P}: {httpRequestTimeout:\r3s}\n`, { serverUrl: '', httpRequestTimeout: '3s' }],
    [`${P}: {httpRequestTimeout:\r\n3s}\r\n`, { serverUrl: '', httpRequestTimeout: '3s' }],
    [`${P}: {httpRequestTimeout:\n\n  \n3s}\n`, { serverUrl: '', httpRequestTimeout: '3s' }],
    [`${P}: {a:\n-, serverUrl: b}\n`, { serverUrl: 'b', httpRequestTimeout: '' }],
  ])('%j reads as Go does', (text, expected) => {
    expect(provider(text)).toEqual(expected);
  });

  it('still refuses what libyaml refuses there', () => {
    // The key and its ":" on two lines stays refused ("did not find expected ','").
    expect(refusal(`${P}: {httpRequestTimeout\n: 3s}\n`)).toMatch(/later line than its key begins/);
    expect(refusal(`${P}: {httpRequestTimeout:\n3s\n`)).toMatch(/not valid YAML/);
  });
});

describe('a block scalar header on the line after `key:`, at the key’s own indentation (libyaml reads the scalar as its value)', () => {
  it.each([
    [`${P}:\n  httpRequestTimeout:\n  |\n    3s\n`, { serverUrl: '', httpRequestTimeout: '3s\n' }],
    [`${P}:\n  httpRequestTimeout:\n  |\n    # 3s\n`, { serverUrl: '', httpRequestTimeout: '# 3s\n' }],
    [`${P}:\n  httpRequestTimeout:\n  |2\n     3s\n`, { serverUrl: '', httpRequestTimeout: ' 3s\n' }],
    [`${P}:\n  httpRequestTimeout:\n  >-\n   3s\n   4s\n  serverUrl: x\n`, { serverUrl: 'x', httpRequestTimeout: '3s 4s' }],
    [`${P}:\n  httpRequestTimeout:  # c\n\n  |\n    3s\n`, { serverUrl: '', httpRequestTimeout: '3s\n' }],
    [`${P}:\n  httpRequestTimeout:\n  |\n  serverUrl: x\n`, { serverUrl: 'x', httpRequestTimeout: '' }],
    [`${P}:\n  httpRequestTimeout:\n  |\n    3s\n  serverUrl:\n  >\n   y\n`, { serverUrl: 'y\n', httpRequestTimeout: '3s\n' }],
    [`${P}:\n  ? httpRequestTimeout\n  :\n  |\n   3s\n`, { serverUrl: '', httpRequestTimeout: '3s\n' }],
  ])('%j reads as Go does', (text, expected) => {
    expect(provider(text)).toEqual(expected);
  });

  it.each([
    // The key has its value already: libyaml's parser wants a key there ("did not find expected key").
    `${P}:\n  httpRequestTimeout: 1\n  |\n   3s\n`,
    // Properties save a simple key, which then needs its ":" ("could not find expected ':'").
    `${P}:\n  httpRequestTimeout:\n  &a |\n    3s\n`,
    // A content line at the key's indentation ends the scalar: it is then a key without ":".
    `${P}:\n  httpRequestTimeout:\n  |\n  3s\n`,
    `${P}:\n  httpRequestTimeout:\n  |\n\t3s\n`,
    // A ":" on a later line at another column than the key's: Go refuses the mapping
    // ("could not find expected ':'", "did not find expected key"), whatever follows it.
    `${P}:\n  serverUrl: http://p.example:80\n  httpRequestTimeout\n   :\n  |-\n    3s\n`,
    `${P}:\n  a: 1\n  httpRequestTimeout\n   :\n  |\n    3s\n`,
    `${P}:\n  ? serverUrl\n   :\n  |\n    http://a:1\n`,
  ])('%j stays refused, as Go refuses it', (text) => {
    refusal(text);
  });
});

describe('a block scalar holding text that would be flow (libyaml reads it as written; found by fuzzing against yaml.v2/v3)', () => {
  it.each([
    [`${P}:\n  httpRequestTimeout: >\n    1m [-, x]\n`, { serverUrl: '', httpRequestTimeout: '1m [-, x]\n' }],
    [`${P}:\n  serverUrl: >\n    http://a [a::]\n`, { serverUrl: 'http://a [a::]\n', httpRequestTimeout: '' }],
    [`${P}:\n  serverUrl: |\n    a: [a:, b]\n`, { serverUrl: 'a: [a:, b]\n', httpRequestTimeout: '' }],
    [`${P}:\n  serverUrl: |-\r\n    a {?x: 1}\r\n`, { serverUrl: 'a {?x: 1}', httpRequestTimeout: '' }],
    // A quote in it opens no quoted scalar: the flow "-" after it is still a plain scalar.
    [`${P}:\n  serverUrl: |\n    it 's\n  httpRequestTimeout: 3s\nother: [-]\n`, { serverUrl: "it 's\n", httpRequestTimeout: '3s' }],
  ])('%j reads as Go does', (text, expected) => {
    expect(provider(text)).toEqual(expected);
  });
});

describe('a block scalar after an alias ended by ":" (libyaml ends the name there; found by fuzzing against yaml.v2/v3)', () => {
  // To the `yaml` package `*kt:` is an alias "kt:", and after a quoted scalar the `|` a block scalar holding the next line.
  const head = `k: &kt httpRequestTimeout\n${P}:\n  serverUrl: 'a'\n  *kt: |\n`;
  it.each([
    [`${head}  other: [-]\n`, { serverUrl: 'a', httpRequestTimeout: '' }],
    [`${head}    x [-]\n  other: [-]\n`, { serverUrl: 'a', httpRequestTimeout: 'x [-]\n' }],
  ])('%j reads as Go does', (text, expected) => {
    expect(provider(text)).toEqual(expected);
  });
  it("still refuses a flow sequence left open after it (Go: \"did not find expected ',' or ']'\")", () => {
    expect(refusal(`${head}  other: [-, a\n`)).toMatch(/not valid YAML/);
  });
});

describe('an explicit key "?" with nothing after it in a flow sequence (libyaml skips the token after it)', () => {
  it.each([
    `x: [?]\n`,
    `x: [? ]\n`,
    `x: [? : a]\n`,
    `x: [?, a]\n`,
    `x: [a, ?]\n`,
    `x: [[? ]]\n${P}: {httpRequestTimeout: 3s}\n`,
    `${P}: {serverUrl: [? : x]}\n`,
  ])('%j is refused, as Go refuses it', (text) => {
    expect(refusal(text)).toMatch(
      /line 1, column \d+: an explicit key "\?" with nothing after it inside \[ \] makes Go's decoders skip the token after it.*"did not find expected ',' or '\]'"/,
    );
  });

  it.each([`x: [?,]\n`, `x: [? :]\n`, `x: [? :, a]\n`, `x: [a, ? ,]\n`, `x: [? a]\n`, `x: [? &a ]\n`, `x: [? !!str , a]\n`, `x: {? }\n`, `x: {?, a}\n`])(
    '%j is read, as Go reads it',
    (text) => {
      expect(provider(`${text}${P}: {httpRequestTimeout: 3s}\n`)).toEqual({ serverUrl: '', httpRequestTimeout: '3s' });
    },
  );
});

describe('what follows a first document that ends without a marker (an implicit document end for libyaml)', () => {
  const block = `  ${P}:\n    httpRequestTimeout: 3s\n`;
  const flow = `{${P}: {httpRequestTimeout: 3s}}`;

  it.each([
    [`${block}- b\n`, 3],
    [`${block}!x\n`, 3],
    [`${block}"b"\n`, 3],
    [`${block}&a b\n`, 3],
    [`${block}? a\n`, 3],
    [`${block}: a\n`, 3],
    [`${block} b\n"x\n`, 3],
    [`${block}%YAML 1.1\n---\n`, 3],
    [`  ${P}:\r    httpRequestTimeout: 3s\r- b\r`, 3],
  ])('%j: Go reads the lines before the less indented line %d, and Spiderpool ignores the rest', (text, line) => {
    const reading = readConfYml(text);
    expect(reading.ok && reading.provider.httpRequestTimeout).toBe('3s');
    expect(reading.warnings.map((w) => w.message)).toContain(
      `line ${line}: Spiderpool ignores everything from line ${line} on: the first top-level key or item is indented more than line ${line}, which ends the first YAML document for Go's decoders; indent all top-level keys alike`,
    );
  });

  it.each([
    [`${flow}\nb: 1\n`, 1],
    [`${flow}\nb: "x\n`, 1],
    [`${flow}\n- a\n- "b\n`, 1],
    [`${flow}\r\nb: 1\r\n`, 1],
    [`${flow}\n|\n  x\n`, 1],
    [`${flow}\n  : x\n`, 1],
    [`{${P}: {httpRequestTimeout:\n3s}}\n- x\n`, 2],
  ])('%j: Go reads the flow collection ending on line %d as the whole first document', (text, line) => {
    const reading = readConfYml(text);
    expect(reading.ok && reading.provider.httpRequestTimeout).toBe('3s');
    expect(reading.warnings.map((w) => w.message)).toContain(
      `line ${line}: Spiderpool ignores everything after the { } or [ ] ending on line ${line}: for Go's decoders it is the whole first YAML document; put every setting inside it`,
    );
  });

  it.each([
    // The token Go's parser peeks to end the document is unterminated (yaml.v2 reads on into the next line while it may be a key).
    [`${block}"b\n`, /found unexpected end of stream/],
    [`${block}&a\n"b\n`, /found unexpected end of stream/],
    [`${block}[a, "b\n`, /found unexpected end of stream/],
    [`${block}|\n\tx\n`, /found a tab character where an indentation space is expected/],
    [`${flow}\n"x\n`, /found unexpected end of stream/],
    [`${flow} "x\n`, /found unexpected end of stream/],
    [`${block}\tb: 2\n`, /found character that cannot start any token/],
  ])('%j is refused by both, as Go refuses it', (text, why) => {
    const reading = readConfYml(text);
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.stops).toEqual({ agent: true, controller: true });
    expect(refusal(text)).toMatch(why);
  });

  it('refuses only the agent when yaml.v3’s lookahead of two tokens meets an error there', () => {
    const reading = readConfYml(`${block}- "b\n`);
    expect(!reading.ok && reading.stops).toEqual({ agent: true, controller: false });
    expect(reading.controller).toBeDefined();
    expect(refusal(`${block}- "b\n`)).toMatch(
      /found unexpected end of stream \(yaml\.v3 scans two tokens past the end of the first document\), so Spiderpool's agent/,
    );
  });
});

describe('a possible simple key at the end of the text, past an implicit document end (found by fuzzing against yaml.v2/v3)', () => {
  // Each once looped for ever: no simple key stays possible at the end of the stream.
  it.each([` l:\n&t`, `  a: 1\n&t`, `  a: 1\n[a`, `{a: 1}\n&x`, `  a: 1\nb`, `{}\nb`, `  ${P}: {httpRequestTimeout: 3s}\n&t`])(
    '%j is read, as Go reads it',
    (text) => {
      expect(readConfYml(text).ok).toBe(true);
    },
  );

  it('stops only the agent where yaml.v3 alone scans on to a ":" after a multi-line key (yaml.v2 sees the key stale first)', () => {
    const reading = readConfYml(` h:\nk\nt:`);
    expect(!reading.ok && reading.stops).toEqual({ agent: true, controller: false });
    expect(refusal(` h:\nk\nt:`)).toMatch(/mapping values are not allowed in this context/);
  });
});
