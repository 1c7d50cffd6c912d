import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';

// libyaml's is_break takes LS (U+2028) and PS (U+2029) for line breaks (both Go decoders
// read the documents below, checked against yaml.v2/v3 in the go-oracle corpus); this
// webhook reads them only inside a quoted value between two other characters.
const P = 'iaasNetworkProvider';

describe('an LS or PS outside a quoted value: refused as this webhook’s own limit, truthfully (found by review against yaml.v2/v3)', () => {
  it.each([
    ['after a key', `${P}:\u2028  httpRequestTimeout: 5s\n`, 'line 1, column 21: contains U+2028 (LINE SEPARATOR)'],
    ['ending the text', `${P}:\n  httpRequestTimeout: 5s\u2029`, 'line 2, column 25: contains U+2029 (PARAGRAPH SEPARATOR)'],
    ['in a plain value', `${P}:\n  httpRequestTimeout: 5\u2028    s\n`, 'line 2, column 24: contains U+2028'],
    ['in a flow mapping', `${P}: {httpRequestTimeout: 5s,\u2029serverUrl: x}\n`, 'line 1, column 46: contains U+2029'],
  ])('%s', (_what, text, where) => {
    const reading = readConfYml(text);
    expect(reading.ok).toBe(false);
    const message = reading.ok ? '' : reading.errors.map(fieldErrorString).join('\n');
    expect(message).toContain(where);
    expect(message).toMatch(
      /refused by this webhook's own limit, not by Spiderpool, whose decoders read the character; write a line break \(or a space\) instead of it$/,
    );
    // Go decodes these: the message must not say Spiderpool cannot.
    expect(message).not.toMatch(/cannot decode|refuse to start/);
  });

  it('still says Spiderpool cannot decode a control character met before it', () => {
    const reading = readConfYml(`${P}:\n  httpRequestTimeout: "\u0001"\u2028\n`);
    expect(reading.ok ? '' : reading.errors.map(fieldErrorString).join()).toMatch(/U\+0001, a control character.*cannot decode it/);
  });

  it('reads one inside a quoted value between two other characters', () => {
    const reading = readConfYml(`${P}:\n  httpRequestTimeout: "5\u2028s"\n`);
    expect(reading.ok && reading.provider.httpRequestTimeout).toBe('5\u2028s');
  });
});

describe('an LS or PS where the `yaml` package reads on through it (found by fuzzing against yaml.v2/v3)', () => {
  it.each([
    ['after an anchor name', 'b: &b\u2029r:\n'],
    ['after an alias name in a flow mapping', 'm: &m {r: *m\u2029}\n'],
    ['after a flow collection', 'n: &n {}\u2028m:\n'],
    ['inside an anchor name before a key', `&iaasNetw\u2029orkProvider: {httpRequestTimeout: -}\n`],
  ])('is refused as this webhook’s limit, not with the `yaml` package’s reading, %s', (_what, text) => {
    const reading = readConfYml(text);
    const message = reading.ok ? '' : reading.errors.map(fieldErrorString).join('\n');
    expect(message).toMatch(/contains U\+202[89] .*refused by this webhook's own limit, not by Spiderpool/);
    expect(message).not.toMatch(/anchor or alias name|without a key|cannot decode/);
  });
});

describe('an LS or PS inside a quoted implicit key: Go refuses it, the key spans two lines (found by fuzzing against yaml.v2/v3)', () => {
  it.each([
    [
      'a block mapping key',
      `${P}:\n  'serv\u2028erUrl': x\n  httpRequestTimeout: 3s\n`,
      'line 2, column 8: a quoted key holds U+2028',
      'mapping values are not allowed in this context',
    ],
    ['a double-quoted key', '"a\u2029b": 1\n', 'line 1, column 3: a quoted key holds U+2029', 'mapping values are not allowed in this context'],
    ['a flow mapping key', "{'a\u2028b': 1}\n", 'line 1, column 4: a quoted key holds U+2028', "did not find expected ',' or '}'"],
    ['a key in a flow sequence', "['a\u2028b': 1]\n", 'line 1, column 4: a quoted key holds U+2028', "did not find expected ',' or ']'"],
    ['a key after "- "', "- 'a\u2028b': 1\n", 'line 1, column 5: a quoted key holds U+2028', 'mapping values are not allowed in this context'],
  ])('refuses %s', (_what, text, where, go) => {
    const reading = readConfYml(text);
    expect(reading.ok).toBe(false);
    const message = reading.ok ? '' : reading.errors.map(fieldErrorString).join('\n');
    expect(message).toContain(where);
    expect(message).toContain(`(Go's decoders: "${go}"); write the key on one line; Spiderpool's agent and controller cannot decode it`);
  });

  it.each([
    ['a quoted value', `${P}:\n  httpRequestTimeout: '3\u2028s'\n`],
    ['an explicit key', `${P}:\n  ? 'a\u2028b'\n  : x\n  httpRequestTimeout: 3s\n`],
  ])('reads one in %s', (_what, text) => {
    expect(readConfYml(text).ok).toBe(true);
  });
});

describe('an LS or PS starting a line after an indented first mapping: a line break to libyaml, no end of the first document (found by fuzzing against yaml.v2/v3)', () => {
  // Go's readings, as yaml.v2 and yaml.v3 printed them: the LS or PS is a blank line, the
  // keys after it belong to the mapping (or are misaligned in it).
  it.each([
    [
      'before a misaligned key (Go: "yaml: line 4: did not find expected key")',
      `    a: 1\n    ${P}:\n  \u2029        serverUrl: x\n      httpRequestTimeout: 5s\n`,
      'line 3, column 3: contains U+2029',
    ],
    [
      'before an aligned key (Go reads serverUrl "x", httpRequestTimeout "5s")',
      `    a: 1\n    ${P}:\n\u2029      serverUrl: x\n      httpRequestTimeout: 5s\n`,
      'line 3, column 1: contains U+2029',
    ],
    ['alone before a key (Go reads httpRequestTimeout "5s")', `    a: 1\n    ${P}:\n\u2028      httpRequestTimeout: 5s\n`, 'line 3, column 1: contains U+2028'],
  ])('is refused as this webhook’s limit, not read as a less indented line, %s', (_what, text, where) => {
    const reading = readConfYml(text);
    const message = reading.ok ? '' : reading.errors.map(fieldErrorString).join('\n');
    expect(message).toContain(where);
    expect(message).toMatch(/refused by this webhook's own limit, not by Spiderpool/);
  });
});
