import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { documentTagDirectives, resolveTag, scanTag, scanTagDirective } from '../../src/yaml-go/libyaml-tags.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';

// Every expectation here was checked against gopkg.in/yaml.v2 v2.4.0 and yaml.v3 v3.0.1
// (test/e2e/oracle); the go-oracle corpus holds the same documents.
const P = 'iaasNetworkProvider';
const timeout = (tag: string, value = '5s') => `${P}:\n  httpRequestTimeout: ${tag} ${value}\n`;

/** Each decoder's httpRequestTimeout, or `undefined` where it refuses. */
function readings(text: string): { agent?: string; controller?: string } {
  const reading = readConfYml(text);
  const of = (conf: unknown) => (conf as { iaasNetworkProvider: { httpRequestTimeout: string } } | undefined)?.iaasNetworkProvider.httpRequestTimeout;
  return { agent: of(reading.agent), controller: of(reading.controller) };
}

function refusal(text: string): string {
  const reading = readConfYml(text);
  if (reading.ok) throw new Error(`expected a refusal of ${JSON.stringify(text)}`);
  return reading.errors.map(fieldErrorString).join('\n');
}

describe('scanTag: a tag token as libyaml scans it (scannerc.go yaml_parser_scan_tag)', () => {
  it.each([
    ['!<!> x', { end: 4, handle: '', suffix: '!' }],
    ['!<tag:x,[a]> x', { end: 12, handle: '', suffix: 'tag:x,[a]' }],
    ['! x', { end: 1, handle: '', suffix: '!' }],
    ['!!str x', { end: 5, handle: '!!', suffix: 'str' }],
    ['!e-_!a!b x', { end: 8, handle: '!e-_!', suffix: 'a!b' }],
    ['!*a!null x', { end: 8, handle: '!', suffix: '*a!null' }],
    ["!'!str", { end: 6, handle: '!', suffix: "'!str" }],
    ['!a,b]', { end: 5, handle: '!', suffix: 'a,b]' }],
    ['!%41%C3%A9\n', { end: 10, handle: '!', suffix: 'Aé' }],
  ])('%j', (text, expected) => {
    expect(scanTag(text, 0)).toEqual(expected);
  });

  it.each([
    ['!! x', 'did not find expected tag URI'],
    ['!e! x', 'did not find expected tag URI'],
    ['!<> x', 'did not find expected tag URI'],
    ['!<{a}> x', 'did not find expected tag URI'],
    ['!<a{> x', "did not find the expected '>'"],
    ['!<a b> x', "did not find the expected '>'"],
    ['!<!>x', 'did not find expected whitespace or line break'],
    ['!a{ x', 'did not find expected whitespace or line break'],
    ['!a# x', 'did not find expected whitespace or line break'],
    ['!a\u00e9 x', 'did not find expected whitespace or line break'],
    ['!a%zz x', 'did not find URI escaped octet'],
  ])('refuses %j', (text, problem) => {
    expect(scanTag(text, 0)).toMatchObject({ problem });
  });

  it('resolves a handle by the directives and refuses one not declared', () => {
    const directives = documentTagDirectives([{ handle: '!e!', prefix: 'tag:x,' }]) as Map<string, string>;
    expect(resolveTag({ end: 4, handle: '!e!', suffix: 'a' }, directives)).toEqual({ tag: 'tag:x,a' });
    expect(resolveTag({ end: 4, handle: '!!', suffix: 'int' }, directives)).toEqual({ tag: 'tag:yaml.org,2002:int' });
    expect(resolveTag({ end: 4, handle: '!f!', suffix: 'a' }, directives)).toEqual({ problem: 'found undefined tag handle' });
    expect(
      documentTagDirectives([
        { handle: '!', prefix: 'a' },
        { handle: '!', prefix: 'b' },
      ]),
    ).toEqual({ problem: 'found duplicate %TAG directive' });
  });
});

describe('scanTagDirective: a %TAG directive as libyaml scans it (yaml_parser_scan_tag_directive_value)', () => {
  it.each([
    ['%TAG !e! tag:x,', { handle: '!e!', prefix: 'tag:x,' }],
    ['%TAG\t!\ttag:a[b],c\t# comment', { handle: '!', prefix: 'tag:a[b],c' }],
    ['%TAG !! tag:yaml.org,2002:%73', { handle: '!!', prefix: 'tag:yaml.org,2002:s' }],
  ])('%j', (line, expected) => {
    expect(scanTagDirective(line)).toEqual(expected);
  });

  it.each([
    ['%TAG', "did not find expected '!'"],
    ['%TAG !e tag:x,', "did not find expected '!'"],
    ['%TAG e! tag:x,', "did not find expected '!'"],
    ['%TAG !e!e! tag:x,', 'did not find expected whitespace'],
    ['%TAG !e!', 'did not find expected whitespace'],
    ['%TAG !e! {', 'did not find expected tag URI'],
    ['%TAG !e! \u00e9', 'did not find expected tag URI'],
    ...[...'{}<>#"|^\\`'].map((c): [string, string] => [`%TAG !e! a${c}b`, 'did not find expected whitespace or line break']),
    ['%TAG !e! a b', 'did not find expected comment or line break'],
    ['%TAG !e! a%2', 'did not find URI escaped octet'],
  ])('refuses %j', (line, problem) => {
    expect(scanTagDirective(line)).toMatchObject({ problem });
  });
});

describe('tags read as Go reads them (found by review against yaml.v2/v3)', () => {
  it.each([
    ['a verbatim !<!> on a plain value', timeout('!<!>'), '5s', '5s'],
    ['a verbatim !<!> on a quoted value', timeout('!<!>', "'5s'"), '5s', '5s'],
    ['a verbatim !<!> on a block scalar', timeout('!<!>', '|\n    5s'), '5s\n', '5s\n'],
    ['a verbatim !<!> on null (yaml.v2 keeps "null", as for "!")', timeout('!<!>', 'null'), '', 'null'],
    ['a verbatim !<!> on a key', `${P}:\n  !<!> httpRequestTimeout: 5s\n`, '5s', '5s'],
    ['a verbatim !<!> in a flow mapping', `${P}: {httpRequestTimeout: !<!> 5s}\n`, '5s', '5s'],
    ['a verbatim !<!> on a mapping', `${P}: !<!> {httpRequestTimeout: 5s}\n`, '5s', '5s'],
    ['a verbatim local tag', timeout('!<!foo>'), '5s', '5s'],
    ['a verbatim tag of flow indicators, in a flow mapping', `${P}: {httpRequestTimeout: !<tag:a,[b]> 5s}\n`, '5s', '5s'],
    ['a local tag with a later "!" (!*a!null)', timeout('!*a!null'), '5s', '5s'],
    ["a local tag !'!str", timeout("!'!str"), '5s', '5s'],
    ['a local tag !;!x on a key', `${P}:\n  !;!x httpRequestTimeout: 5s\n`, '5s', '5s'],
    ['!! with a suffix holding "!" (!!a!b)', timeout('!!a!b'), '5s', '5s'],
    ['!! with the suffix "!"', timeout('!!!'), '5s', '5s'],
    ['a local tag !a,b in a flow mapping', `${P}: {httpRequestTimeout: !a,b 5s}\n`, '5s', '5s'],
    ['a %TAG prefix of flow indicators', `%TAG !e! tag:a[b],\n---\n${timeout('!e!x')}`, '5s', '5s'],
    ['a %TAG directive with a comment', `%TAG !e! tag:x, # c\n---\n${timeout('!e!x')}`, '5s', '5s'],
    ['%TAG ! replacing the local prefix', `%TAG ! tag:yaml.org,2002:\n---\n${timeout('!str')}`, '5s', '5s'],
  ])('%s', (_what, text, agent, controller) => {
    expect(readings(text)).toEqual({ agent, controller });
  });

  it('reads !<!> as "!" for a bool: yaml.v3 resolves it, yaml.v2 leaves a string', () => {
    const reading = readConfYml('enableIPv4: !<!> true\n');
    expect(reading.agent?.['enableIPv4']).toBe(true);
    expect(reading.controller).toBeUndefined();
  });

  it('resolves %TAG ! replacing the local prefix for a standard tag', () => {
    expect(refusal(`%TAG ! tag:yaml.org,2002:\n---\n${timeout('!int')}`)).toMatch(/cannot decode !!str `5s` as a !!int/);
  });

  it.each<[string, string, RegExp]>([
    ['a verbatim tag of no URI character', timeout('!<{a}>'), /line 2, column 23: a tag needs a name .*"did not find expected tag URI"/],
    ['an empty verbatim tag', timeout('!<>'), /"did not find expected tag URI"/],
    ['a verbatim tag with "{"', `${P}: {httpRequestTimeout: !<a{> 5s}\n`, /"did not find the expected '>'"/],
    ['a verbatim tag with "#"', timeout('!<a#b>'), /"did not find the expected '>'"/],
    [
      'a verbatim tag not followed by a blank',
      timeout('!<!>x'),
      /column 27: a tag must be followed by a space .*"did not find expected whitespace or line break"/,
    ],
    ['!! without a suffix', timeout('!!'), /"did not find expected tag URI"/],
    ['a named handle without a suffix', timeout('!a!'), /"did not find expected tag URI"/],
    ['a handle not declared', timeout('!a!b!c'), /the tag handle "!a!" is not declared by a %TAG directive \(Go's decoders: "found undefined tag handle"\)/],
    ['a handle of word characters not declared', `${P}: {httpRequestTimeout: !a-b!x 5s}\n`, /"!a-b!" is not declared/],
    ['a handle declared twice', `%TAG !e! tag:x,\n%TAG !e! tag:y,\n---\n${timeout('!e!a')}`, /"found duplicate %TAG directive"/],
    [
      'a %TAG handle without its closing "!"',
      `%TAG !e tag:x,\n---\n${timeout('!e!a')}`,
      /line 1, column 8: Go's decoders refuse the directive "%TAG !e tag:x," \("did not find expected '!'"\)/,
    ],
    ['a %TAG handle of two handles', `%TAG !e!e! tag:x,\n---\n${timeout('!e!a')}`, /"did not find expected whitespace"/],
    ['a %TAG prefix of no URI character', `%TAG !e! {\n---\n${timeout('!e!a')}`, /"did not find expected tag URI"/],
    ...[...'{}<>#"|^\\`'].map(
      (c) =>
        [`a %TAG prefix with ${JSON.stringify(c)}`, `%TAG !e! a${c}b\n---\n${timeout('!e!a')}`, /"did not find expected whitespace or line break"/] as [
          string,
          string,
          RegExp,
        ],
    ),
    ['a %TAG prefix followed by more', `%TAG !e! a b\n---\n${timeout('!e!a')}`, /"did not find expected comment or line break"/],
  ])('refuses %s', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it('refuses a tag without a suffix in the two tokens yaml.v3 scans past the first document (the agent alone)', () => {
    const reading = readConfYml(`${timeout('')}...\n!! x\n`);
    expect(reading.controller).toBeDefined();
    expect(reading.ok ? '' : reading.errors.map(fieldErrorString).join()).toMatch(
      /line 4: did not find expected tag URI .*Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start/,
    );
  });
});

describe('each tag decoded from its own token, not from text another tag shares (found by review against yaml.v2/v3)', () => {
  // `!<tag:yaml.org,2002:%69nt>` is !!int; `!t!%2569nt` under `%TAG !t! tag:yaml.org,2002:`
  // is the tag "tag:yaml.org,2002:%69nt", which the `yaml` package spells the same way.
  it('reads a shorthand whose %25 spells a verbatim tag elsewhere as its own tag', () => {
    const text = `%TAG !t! tag:yaml.org,2002:\n---\nclusterSubnetAutoPoolDefaultRedundantIPNumber: !<tag:yaml.org,2002:%69nt> 1\n${timeout('!t!%2569nt')}`;
    expect(readings(text)).toEqual({ agent: '5s', controller: '5s' });
  });

  it('still decodes the verbatim tag itself', () => {
    const text = `%TAG !t! tag:yaml.org,2002:\n---\nclusterSubnetAutoPoolDefaultRedundantIPNumber: !<tag:yaml.org,2002:%69nt> 1\n${timeout('!<tag:yaml.org,2002:%69nt>')}`;
    expect(refusal(text)).toMatch(/line 5, column 50: cannot decode !!str `5s` as a !!int/);
  });

  it('decodes a %TAG prefix only in tags of its own handle', () => {
    const text = `%TAG !a! tag:yaml.org,2002:%69\n%TAG !b! tag:yaml.org,2002:\n---\n${timeout('!b!%2569nt')}`;
    expect(readings(text)).toEqual({ agent: '5s', controller: '5s' });
    expect(refusal(`%TAG !a! tag:yaml.org,2002:%69\n---\n${timeout('!a!nt')}`)).toMatch(/cannot decode !!str `5s` as a !!int/);
  });
});

describe('tags spelt "!!x" as yaml.v3 and yaml.v2 compare them (found by review against yaml.v2/v3)', () => {
  // A verbatim `!<!!int>` or a %TAG prefix `!!` makes the tag text "!!int": yaml.v3's
  // shortTag writes tag:yaml.org,2002:int the same way and takes it for !!int; yaml.v2
  // compares the long form only and leaves it a tag of its own.
  it.each([
    [
      '!<!!int> on a duration',
      timeout('!<!!int>'),
      /cannot decode !!str `5s` as a !!int, so Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start \(its controller reads it\)/,
    ],
    [
      '!<!!null> on a duration',
      timeout('!<!!null>'),
      /cannot decode !!str `5s` as a !!null, so Spiderpool's agent .* refuses to start \(its controller reads it\)/,
    ],
    [
      '!<!!binary> on text that is no base64',
      timeout('!<!!binary>'),
      /!!binary value contains invalid base64 data, so Spiderpool's agent .* refuses to start \(its controller reads it\)/,
    ],
    [
      '%TAG !e! !! and !e!int on a duration',
      `%TAG !e! !!\n---\n${timeout('!e!int')}`,
      /cannot decode !!str `5s` as a !!int, so Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start \(its controller reads it\)/,
    ],
    [
      '!<!!int> on an int (yaml.v2: no !!int)',
      'clusterSubnetAutoPoolDefaultRedundantIPNumber: !<!!int> 5\n',
      /cannot unmarshal !!int `5` into int, so Spiderpool's controller \(gopkg.in\/yaml.v2\) refuses to start \(its agent reads it\)/,
    ],
  ])('%s', (_what, text, pattern) => {
    expect(refusal(text)).toMatch(pattern);
  });

  it.each([
    ['!<!!binary> on base64', timeout('!<!!binary>', 'NTBz'), '50s', 'NTBz'],
    ['!<!!null> on ~', timeout('!<!!null>', '~'), '', '~'],
    ['!<!!str> on 50', timeout('!<!!str>', '50'), '50', '50'],
  ])('reads %s', (_what, text, agent, controller) => {
    expect(readings(text)).toEqual({ agent, controller });
  });
});

describe('merge keys by tag and style, as each decoder sees them (found by review against yaml.v2/v3)', () => {
  const merged = (key: string) => `a: &a {httpRequestTimeout: 5s}\n${P}:\n  ${key}: *a\n`;
  it.each([
    ['!!merge on a quoted "<<" (both)', merged("!!merge '<<'"), '5s', '5s'],
    ['!<!!merge> on "<<" (yaml.v3 alone)', merged('!<!!merge> <<'), '5s', ''],
    ['"!" on a quoted "<<" (yaml.v2 alone: a scalar tagged "!" is plain-implicit)', merged("! '<<'"), '', '5s'],
    ['"!" on a double-quoted "<<" in a flow mapping', `a: &a {httpRequestTimeout: 5s}\n${P}: {! "<<": *a}\n`, '', '5s'],
    ['"!<!>" on a plain "<<" (both)', merged('!<!> <<'), '5s', '5s'],
    ['a quoted "<<" untagged (neither)', merged("'<<'"), '', ''],
  ])('%s', (_what, text, agent, controller) => {
    expect(readings(text)).toEqual({ agent, controller });
  });
});

describe('a tag the parse takes back into a quoted value once its lines are repadded (found by fuzzing against yaml.v2/v3)', () => {
  // The `yaml` package ends a quoted scalar at a continuation line less indented than the
  // mapping and reads what follows as tokens; once the line is indented, it is text again.
  it.each([
    ['!!str', 'a !!str   b'],
    ['an undeclared handle', 'a !e!x   b'],
    ['a verbatim !<!>', 'a !<!>   b'],
    ['a tag libyaml refuses', 'a !!   b'],
  ])('keeps %s as written inside the value', (_what, value) => {
    const [, tag] = /^a (\S+)/.exec(value)!;
    expect(readings(`${P}:\n  httpRequestTimeout: 3s\n  serverUrl: 'a\n  ${tag}   b'\n`)).toEqual({ agent: '3s', controller: '3s' });
    const reading = readConfYml(`${P}:\n  httpRequestTimeout: 3s\n  serverUrl: 'a\n  ${tag}   b'\n`);
    expect(reading.ok && reading.provider.serverUrl).toBe(value);
  });
});

describe('a tag holding flow indicators and later "!"s is one tag, respelt once (found by review against yaml.v2/v3)', () => {
  // The `yaml` package sees a tag token at each "!" of `![!a[!a…`, where libyaml scans one
  // tag; each token respelt to the end of that tag overlapped the others and grew the text.
  it.each([
    ['![!null', timeout('![!null', '3s')],
    ['!x[!y', timeout('!x[!y', '3s')],
    ['![!a[!a[!a', timeout('![!a[!a[!a', '3s')],
  ])('reads %s as a local tag, as Go does', (_what, text) => {
    expect(readings(text)).toEqual({ agent: '3s', controller: '3s' });
  });

  it('reads a thousand overlapping tokens as the one tag they are', () => {
    expect(readings(timeout(`!${'[!a'.repeat(1000)}`, '3s'))).toEqual({ agent: '3s', controller: '3s' });
  });
});
