/**
 * conf.yml files on which the check once disagreed with Spiderpool's own start-up code
 * (main @ a7fbd3b, both components): one group per class of disagreement, each with files
 * Spiderpool starts with (no refusal) and files that stop it (a refusal).
 */
import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { validateConfYml } from '../../src/spiderpool/conf-validate.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';

const starts = (text: string) => {
  const findings = validateConfYml(text);
  expect({ errors: findings.errors.map(fieldErrorString), stops: findings.stops }).toEqual({ errors: [], stops: { agent: false, controller: false } });
  return findings;
};
const stops = (text: string) => {
  const findings = validateConfYml(text);
  expect(findings.stops).toEqual({ agent: true, controller: true });
  return findings.errors.map(fieldErrorString).join('\n');
};

describe('serverUrl: only what ValidateConfig checks, with Go 1.25 url.Parse', () => {
  it.each(['http://:80', 'https://:', 'http://u@:80', 'http://h:80:80', 'http://[fd00::1]:80'])('starts with %j', (url) => {
    starts(`iaasNetworkProvider: {serverUrl: "${url}"}\n`);
  });
  it.each([
    ['http://', /has no host/],
    ['http://u@', /has no host/],
    ['ftp://h', /must be an http:\/\/ or https:\/\/ URL/],
    ['http://h:80:x', /invalid port ":x" after host/],
  ])('stops with %j', (url, why) => {
    expect(stops(`iaasNetworkProvider: {serverUrl: "${url}"}\n`)).toMatch(why);
  });
});

describe('merge keys the two decoders read differently', () => {
  it('warns, naming both values and which component reads which, when both are valid', () => {
    const findings = starts('iaasNetworkProvider: {serverUrl: "http://p", httpRequestTimeout: 5s, <<: {httpRequestTimeout: 6s}}\n');
    expect(findings.warnings).toEqual([
      {
        field: 'iaasNetworkProvider.httpRequestTimeout',
        message: expect.stringMatching(/^the agent \(gopkg.in\/yaml.v3\) reads "5s", the controller \(gopkg.in\/yaml.v2\) "6s": both start/),
      },
    ]);
  });
  it('stops only the component whose value is invalid', () => {
    const findings = validateConfYml('iaasNetworkProvider: {serverUrl: "http://p", httpRequestTimeout: 5s, <<: {httpRequestTimeout: 600s}}\n');
    expect(findings.stops).toEqual({ agent: false, controller: true });
    expect(findings.errors.map(fieldErrorString)).toEqual([
      expect.stringMatching(
        /^iaasNetworkProvider.httpRequestTimeout: Invalid value: "600s": .*Spiderpool's controller \(gopkg.in\/yaml.v2, which reads it so\) refuses to start/,
      ),
    ]);
  });
  it('warns about any setting read differently, not only the provider', () => {
    expect(starts('enableIPv4: false\n<<: {enableIPv4: true}\n').warnings.map((w) => w.field)).toEqual(['enableIPv4']);
  });
  it('does not warn when both read the same', () => {
    expect(starts('<<: {enableIPv4: true}\nenableIPv6: true\n').warnings).toEqual([]);
  });
});

describe('YAML libyaml accepts and the yaml package alone refuses', () => {
  it.each([
    ['a comment right after a quoted scalar', 'a: ""#c\n'],
    ['a comment right after a flow collection', 'a: [b]#c\n'],
    ['"-" before a flow indicator', 'a: [-]\n'],
    ['a flow continuation line at column 0', 'a: [b,\nc]\n'],
    ['a quoted continuation line at column 0', 'a: "b\nc"\n'],
    ['a tag running over ","', 'a: !!str,\n'],
    ['properties before a root alias', '&a *a\n'],
    ['NEL inside a value', 'a: "x\u0085y"\n'],
    ['LS in a quoted value after a flow continuation line', 'a: {b: c,\nd: e}\nf: "x\u2028y"\n'],
  ])('starts with %s', (_what, text) => {
    starts(text);
  });
  it('restores each "-" and ":" of a flow collection after the spaces and pads inserted before them', () => {
    // A space after `?`, then continuation lines at column 0 padded in two parses.
    const reading = readConfYml('podResourceInject: {?namespacesInclude: [-,\nb:,\n-], namespacesExclude: [\n-, c:,\n-]}\n');
    expect(reading.agent?.['podResourceInject']).toEqual({ enabled: false, namespacesExclude: ['-', 'c:', '-'], namespacesInclude: ['-', 'b:', '-'] });
  });
  it('reads the values libyaml reads', () => {
    const reading = readConfYml('podResourceInject:\n  namespacesExclude: [-, "a\nb", c,\nd]\n  namespacesInclude: ["x\u0085y"]\n');
    expect(reading.agent?.['podResourceInject']).toEqual({ enabled: false, namespacesExclude: ['-', 'a b', 'c', 'd'], namespacesInclude: ['x y'] });
  });
  it.each([
    ['a comment right after a tag', 'a: !x#c\n', /a tag must be followed by a space or a line break/],
    ['a non-ASCII anchor name', 'a: &ä 1\n', /anchor or alias name "ä" is not one Go's decoders read/],
    ['a document marker inside a flow collection', 'a: [b,\n---\nc]\n', /not valid YAML/],
    ['properties before an alias in a mapping', 'a: &a *a\n', /not valid YAML/],
  ])('stops with %s', (_what, text, why) => {
    expect(stops(text)).toMatch(why);
  });
});

describe('!!binary and !!merge, decoded as both decoders do', () => {
  it('base64-decodes !!binary into strings, keys included', () => {
    const reading = readConfYml(
      '!!binary aWFhc05ldHdvcmtQcm92aWRlcg==:\n  serverUrl: !!binary aHR0cDovL3A=\n  httpRequestTimeout: !!binary |\n    NT\n    Bz\n',
    );
    expect(reading.ok && reading.provider).toMatchObject({ serverUrl: 'http://p', httpRequestTimeout: '50s' });
  });
  it('reads !!merge on a value as its text, and on << as a merge key', () => {
    const reading = readConfYml('iaasNetworkProvider: {serverUrl: !!merge http://p, !!merge <<: {httpRequestTimeout: 6s}}\n');
    expect(reading.ok && reading.provider).toMatchObject({ serverUrl: 'http://p', httpRequestTimeout: '6s' });
  });
  it.each([
    ['invalid base64', 'iaasNetworkProvider: {httpRequestTimeout: !!binary NTB}\n', /!!binary value contains invalid base64 data/],
    ['base64 with a space', 'iaasNetworkProvider: {httpRequestTimeout: !!binary " NTBz"}\n', /!!binary value contains invalid base64 data/],
    ['!!binary into a bool', 'enableIPv4: !!binary dHJ1ZQ==\n', /cannot unmarshal !!binary `dHJ1ZQ==` into bool/],
    ['!!merge into a bool', 'enableIPv4: !!merge true\n', /cannot unmarshal !!merge `true` into bool/],
  ])('stops with %s', (_what, text, why) => {
    expect(stops(text)).toMatch(why);
  });
});

describe('standard tags resolved by each decoder, on every scalar it decodes', () => {
  const agentOnly = (text: string) => {
    const findings = validateConfYml(text);
    expect(findings.stops).toEqual({ agent: true, controller: false });
    return findings.errors.map(fieldErrorString).join('\n');
  };
  it.each([
    ['!!bool yes into a bool', 'enableIPv4: !!bool yes\n'],
    ['!!bool on into a string', 'iaasNetworkProvider: {httpRequestTimeout: !!bool on}\n'],
    ['!!bool y in a list of strings', 'podResourceInject: {namespacesExclude: [!!bool y]}\n'],
    ['!!bool yes on a key', '!!bool yes: 1\n'],
  ])('stops only the agent with %s (yaml.v2 reads YAML 1.1 words as bools, yaml.v3 does not)', (_what, text) => {
    expect(agentOnly(text)).toMatch(/cannot decode !!str `(yes|on|y)` as a !!bool, so Spiderpool's agent/);
  });
  it('reads !!bool yes as the text in a string for the controller', () => {
    expect(readConfYml('iaasNetworkProvider: {httpRequestTimeout: !!bool yes}\n').controller?.['iaasNetworkProvider']).toMatchObject({
      httpRequestTimeout: 'yes',
    });
  });
  it.each([
    '!!int 1: x\n',
    '!foo bar: x\n',
    '!!float 1: x\n',
    '!!bool true: x\n',
    '!!timestamp 2001-12-14: x\n',
    '!!seq a: x\n',
    'iaasNetworkProvider: {!!int 1: x}\n',
    'enableIPv4: !!bool True\n',
  ])('starts with a tag its text satisfies: %j', (text) => {
    starts(text);
  });
  it.each([
    ['!!null on text', '!!null a: 1\n', /cannot decode !!str `a` as a !!null/],
    ['!!int on a date', 'iaasNetworkProvider: {httpRequestTimeout: !!int 2001-12-14}\n', /cannot decode !!str `2001-12-14` as a !!int/],
    [
      '!!float beyond int64',
      'iaasNetworkProvider: {httpRequestTimeout: !!float 18446744073709551615}\n',
      /cannot decode !!int `18446744073709551615` as a !!float/,
    ],
  ])('stops both with %s', (_what, text, why) => {
    expect(stops(text)).toMatch(why);
  });
});

describe('!!null on a mapping decodes the mapping (no pointer in conf.yml)', () => {
  it.each([
    'podResourceInject: !!null\n  enabled: true\n',
    'iaasNetworkProvider: !!null\n  serverUrl: "http://:80"\n',
    'agent: {networkResourcePlugin: {devicePluginAffinity: {nodeSelector: {matchlabels: !!null {a: b}}}}}\n',
    '--- !!null\nenableIPv4: true\n',
  ])('starts with %j', (text) => {
    starts(text);
  });
  it('checks what the !!null mapping holds', () => {
    expect(stops('iaasNetworkProvider: !!null\n  serverUrl: "ftp://h"\n')).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(readConfYml('podResourceInject: !!null\n  enabled: true\n').agent?.['podResourceInject']).toMatchObject({ enabled: true });
  });
});

describe('alias keys, compared by kind as yaml.v3 compares them', () => {
  it('starts when an alias key repeats an unknown key', () => {
    starts('&x a: 1\n*x : 2\n');
  });
  it.each([
    ['the same alias twice', '&x a: 1\n*x : 2\n*x : 3\n', /mapping key "x" already defined at line 2/],
    ['a field set through an alias', '&x enableIPv4: true\n*x : false\n', /field enableIPv4 already set in type types.SpiderpoolConfigmapConfig/],
  ])('stops the agent with %s', (_what, text, why) => {
    const findings = validateConfYml(text);
    expect(findings.stops).toEqual({ agent: true, controller: false });
    expect(findings.errors.map(fieldErrorString).join('\n')).toMatch(why);
  });
});

describe("this webhook's limits count what Go counts", () => {
  it('starts with brackets in comments and quoted strings', () => {
    starts(`# ${'{'.repeat(150)}\nfoo: "${'['.repeat(150)}"\n`);
  });
  it('refuses real nesting past its limit, saying the limit is its own', () => {
    expect(stops(`foo: ${'['.repeat(101)}${']'.repeat(101)}\n`)).toMatch(/this webhook's own limit against hostile input, not Spiderpool's/);
  });
});

describe('what stops both decoders although the yaml package reads it', () => {
  it.each([
    ['a lone "..."', '...\n', /"\.\.\." stands before any document/],
    ['"..." after a comment', '# c\n...\n', /"\.\.\." stands before any document/],
    ['a tag right before "}"', '{a: !}\n', /a tag must be followed by a space or a line break/],
    ['a tag right before ","', '{a: !!null, b: 1}\n', /not valid YAML|a tag must be followed/],
    ['a line holding only a tab', '\t\n', /has a tab in the indentation of a blank or comment line/],
    ['a tab line after a comment', '#c\n\t\n', /has a tab in the indentation of a blank or comment line/],
  ])('%s', (_what, text, why) => {
    expect(stops(text)).toMatch(why);
  });
  it('starts with "..." after a document or after "---"', () => {
    starts('---\n...\n');
    starts('enableIPv4: true\n...\n...\n');
  });
});

describe('ipamUnixSocketPath: the agent binds it, and sun_path is 108 bytes', () => {
  it.each([107, 50])('starts with a path of %i bytes', (n) => {
    starts(`ipamUnixSocketPath: /${'a'.repeat(n - 1)}\n`);
  });
  it('starts with the default (empty)', () => {
    starts('ipamUnixSocketPath: ""\n');
  });
  it.each([108, 200])('stops only the agent with a path of %i bytes, naming the limit', (n) => {
    const findings = validateConfYml(`ipamUnixSocketPath: /${'a'.repeat(n - 1)}\n`);
    expect(findings.stops).toEqual({ agent: true, controller: false });
    expect(findings.errors.map(fieldErrorString)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^ipamUnixSocketPath: Invalid value: "/a+": is ${n} bytes, but a unix socket path must be shorter than 108 bytes \\(Linux's sun_path .*so Spiderpool's agent refuses to start`,
        ),
      ),
    ]);
  });
  it('counts bytes, not characters', () => {
    expect(validateConfYml(`ipamUnixSocketPath: /${'é'.repeat(54)}\n`).stops.agent).toBe(true);
  });
});

describe('what each decoder reads past the first document', () => {
  const far = `# ${'x'.repeat(1000)}\n`;
  const agentOnly = (text: string) => {
    const findings = validateConfYml(text);
    expect(findings.stops).toEqual({ agent: true, controller: false });
    return findings.errors.map(fieldErrorString).join('\n');
  };
  it.each([
    ['a tab-only line after ---', 'a: 1\n---\n\t\n', /found character that cannot start any token/],
    ['a tab-only line after ...', 'a: 1\n...\n\t\n', /found character that cannot start any token/],
    ['a tab-only line after a comment', 'a: 1\n---\n# c\n\t\n', /found character that cannot start any token/],
    ['a character no token starts with', 'a: 1\n--- @\n', /found character that cannot start any token/],
    ['an unterminated quote', 'a: 1\n---\n"b\n', /found unexpected end of stream/],
    ['an unknown escape', 'a: 1\n---\n"a\\qb"\n', /found unknown escape character/],
    ['an unknown directive', 'a: 1\n---\n%FOO\n', /found unknown directive name/],
    ['an empty anchor name', 'a: 1\n---\n&\n', /did not find expected alphabetic or numeric character/],
    ['a tab in a block scalar indentation', 'a: 1\n--- |\n\t\n', /found a tab character where an indentation space is expected/],
    ['a control character in the next 512-byte read', `a: 1\n---\n${far}\u0001\n`, /contains U\+0001, a control character past the first document/],
  ])('stops only the agent with %s (yaml.v3 scans two tokens past the marker)', (_what, text, why) => {
    expect(agentOnly(text)).toMatch(why);
  });
  it.each([
    ['two tokens before the tab line', 'a: 1\n---\nb: 1\n\t\n'],
    ['a plain scalar running over the tab line', 'a: 1\n---\nb\n\t\n'],
    ['tokens the parser alone refuses', 'a: 1\n--- ]]\n'],
    ['tokens the parser alone refuses after ...', 'a: 1\n...\n]]\n'],
    ['a control character past both reads', `a: 1\n---\nb: c\n${far}\u0001\n`],
    ['an anchor name Go refuses in a later document', 'a: 1\n---\nb: 1\nc: &ä 1\n'],
  ])('starts with %s', (_what, text) => {
    starts(text);
  });
  it.each([
    ['a control character in the read that holds the marker', 'a: 1\n---\n\u0001\n'],
    ['a tab-only line before the marker', 'a: 1\n\t\n---\n'],
    ['a document marker inside a flow collection', 'a: [b,\n---\nc]\n'],
  ])('stops both with %s', (_what, text) => {
    stops(text);
  });
});

describe('directives as libyaml reads them', () => {
  it.each([
    ['after a byte order mark', '\ufeff%YAML 1.2\n---\na: 1\n'],
    ['on lines ending in CR alone', '%YAML 1.2\r---\ra: 1\r'],
  ])('stops both with %%YAML 1.2 %s', (_what, text) => {
    expect(stops(text)).toMatch(/directive "%YAML 1\.2" is not supported/);
  });
  it.each(['%YAML 1.1\r---\ra: 1\r', '\ufeff%YAML 1.1\n---\na: 1\n', '%YAML 1.1\u0085---\u0085a: 1\n'])('starts with %%YAML 1.1: %j', (text) => {
    starts(text);
  });
});

describe("a tab where a block scalar's indentation is read", () => {
  it.each([
    ['before the first line', 'a: |\n   \t3s\n'],
    ['before a later line', 'a: |\n  x\n \tb\n'],
    ['on the line after it', 'a: |\n  x\n\tb: 1\n'],
  ])('stops both %s', (_what, text) => {
    expect(stops(text)).toMatch(/found a tab character where an indentation space is expected/);
  });
  it.each(['a: |\n  x\n  \ty\n', 'a: >\n  x\n   \ty\n'])('starts with a tab inside the content: %j', (text) => {
    starts(text);
  });
});
