/**
 * The generator of conf.yml documents for the Go-oracle differential (go-oracle.test.ts):
 * one seeded fast-check grammar (`harsh` switches on shapes Go mostly refuses) whose
 * documents are strings under 4 KiB. A document is either
 *
 * - written from the grammar: quoting styles, nulls, tags (with "%" escapes, verbatim,
 *   and %TAG prefixes with escapes), anchors and aliases on keys and on values, merge keys,
 *   duplicates, directives, block scalars, flow collections holding a `-` or a kept `:`
 *   beside quoted private-use escapes (`"\uE000"`), a later document; or
 * - a realistic mutant of the fixture ConfigMap's conf.yml (test/fixtures/reviews): one to
 *   three lines edited as people edit it (an indented or tab-indented line, a pasted block
 *   scalar, a value quoted, unquoted or moved to the next line, a comment, a tag, an
 *   anchor), the whole text indented as pasted from a manifest;
 *
 * then given a line-break style (LF, CRLF; lone CR in the harsh grammar), an ending (a
 * final line break, none as `kubectl create configmap --from-file` keeps a file without
 * one, a blank line, a trailing blank), sometimes a BOM, and sometimes one NEL, LS, PS,
 * NBSP or U+FEFF inserted at a random place or standing for a line break.
 */
import fc from 'fast-check';
import { loadReview } from '../fixtures/load.js';

/** The provider block's key. */
export const P = 'iaasNetworkProvider';

/** The fixture ConfigMap's conf.yml: the document the realistic mutants start from. */
const FIXTURE: string = loadReview('configmap-update-timeout-50s').request['object'].data['conf.yml'];

/** Anchored definitions documents may start with, in an order where each alias resolves. */
const ANCHORS: ReadonlyArray<readonly [string, string]> = [
  ['t1', 't1: &t1 40s'],
  ['t2', 't2: &t2 ~'],
  ['t3', "t3: &t3 '1m'"],
  ['k1', 'k1: &k1 httpRequestTimeout'],
  // An anchor on a key (and on its value): `*kt` is then an alias key spelling httpRequestTimeout.
  ['kt', '&kt httpRequestTimeout: &vt 12s'],
  ['m1', 'm1: &m1 {serverUrl: "http://m1", httpRequestTimeout: 11s}'],
  ['m2', 'm2: &m2\n  httpRequestTimeout: 22s'],
  ['m3', 'm3: &m3\n  <<: *m1\n  httpRequestTimeout: 33s'],
  ['m4', 'm4: &m4\n  httpRequestTimeout: 44s\n  <<: *m1'],
  ['m5', 'm5: &m5 {httpRequestTimeout: ~, serverUrl: http://m5}'],
  ['m6', 'm6: &m6 {httpRequestTimeout: [1]}'],
  ['pb', `pb: &pb\n  ${P}:\n    serverUrl: http://pb\n    httpRequestTimeout: 55s`],
  ['pn', `pn: &pn {${P}: ~}`],
  ['pm', `pm: &pm {${P}: *m2}`],
];

/**
 * %TAG directives (with the `---` they need) and the tags that use them: prefixes spelt
 * with "%" escapes that libyaml decodes (`%73` is "s") or refuses (`%zz`, a cut UTF-8
 * sequence), and the primary handle redefined.
 */
const TAG_PREFIXES = [
  '%TAG !e! tag:yaml.org,2002:\n---\n',
  '%TAG !e! tag:yaml.org,2002:%73\n---\n',
  '%TAG !e! tag:yaml.org,2002:%6E\n---\n',
  '%TAG !e! tag:%2C\n---\n',
];
const HARSH_TAG_PREFIXES = [
  '%TAG !e! tag:%zz\n---\n',
  '%TAG !e! tag:%C3\n---\n',
  '%TAG ! tag:yaml.org,2002:\n---\n',
  '%TAG !e! tag:yaml.org,2002:%2573\n---\n',
];

/**
 * A rendered value: inline text after `key: ` (`commented` when it ends in a comment), or
 * a block scalar needing the indentation.
 */
type Value = { inline: string; commented: boolean } | { block: (indent: number) => string };

function valueArb(harsh: boolean): fc.Arbitrary<Value> {
  const inline = fc.oneof(
    fc.constantFrom(
      '50s',
      '1m30s',
      '0',
      '-1s',
      '50',
      '1e3',
      'yes',
      'on',
      'true',
      '2001-12-14',
      'http://a:80',
      'http://b/x?y=1',
      '~',
      'null',
      'Null',
      'NULL',
      'nULL',
      '.5m',
      '5 0s',
      'a#b',
      'µs',
      '',
    ),
    fc.constantFrom('""', '"50s"', '"null"', '"~"', '"5\\x30s"', '"\\u00b5s"', '"a\\tb"', '" 50s "', '"50s # x"'),
    fc.constantFrom("''", "'50s'", "'it''s'", "'~'"),
    // Private-use characters quoted, escaped or not (the reader stands one in for a kept ":").
    fc.constantFrom('"3s\\uE000"', '"\\uE000"', '"http://a\\uE000b"', '"\\uE001\\uE000"', "'3s\uE000'"),
    fc.constantFrom('!!str 50', '!!str', '!!str ~', '!!null', '!!null ~', '!!null null', '!!int 50', '! 50s', '!local 50s'),
    // "%" escapes in tags, decoded (`!!%73tr` is !!str) or refused, and the %TAG handle `!e!`.
    fc.constantFrom(
      '!!%73tr 50',
      '!!%zz 5s',
      '!!%41x 5s',
      '!%41 5s',
      '!<tag:yaml.org,2002:%73tr> 50',
      '!<tag:yaml.org,2002:%6Eull> 5s',
      '!<tag:%2C> 5s',
      '!e!str 50',
      '!e!tr 50',
      '!e!%73tr 50',
      '!e!ull 5s',
    ),
    fc.constantFrom('*t1', '*t2', '*t3', '*m1', '*vt', '*nope'),
    fc.constantFrom('[50s]', '{a: 1}', '[]', '{}'),
    // A "-" before a flow indicator and a ":" libyaml keeps in a flow plain scalar.
    fc.constantFrom('[-]', '[-, x]', '[x:, -]', '{x:, y: -}', '[a::]'),
    ...(harsh
      ? [
          fc.constantFrom('!!null 50s', '!!int 50s', '!!float 50s', '!!bool yes', '!!timestamp 2001-12-14', '!!binary "%%%"', '"\\/"', '"\\ud83d\\ude00"'),
          fc.constantFrom('!!%C3 5s', '!!%FF 5s', '!<%C3%41> 5s', '!!%C3%A9 5s', '!<tag:yaml.org,2002:%2573tr> 50', '!<!> 5s', '!<tag:%zz> 5s', '!%zz 5s'),
        ]
      : []),
  );
  const withComment = fc.tuple(inline, fc.boolean(), fc.boolean()).map(([v, c, c2]): Value => ({ inline: c && c2 ? `${v} # note` : v, commented: c && c2 }));
  const block = fc
    .tuple(
      fc.constantFrom('|', '|-', '|+', '>', '>-', '>+', '|2'),
      fc.array(fc.constantFrom('50s', '1m', 'http://a', '', 'x y'), { minLength: 1, maxLength: 3 }),
    )
    .map(
      ([header, lines]): Value => ({
        block: (indent) => `${header}\n${lines.map((l) => (l === '' ? '' : ' '.repeat(indent + 2) + l)).join('\n')}`,
      }),
    );
  return fc.oneof({ weight: 6, arbitrary: withComment }, { weight: 1, arbitrary: block });
}

interface Entry {
  /** Renders the entry at the given indentation (the first line unindented). */
  render: (indent: number) => string;
  /** `key: value` text for a flow mapping, when the entry can be written inline. */
  flow?: string;
}

function entryArb(harsh: boolean): fc.Arbitrary<Entry> {
  const key = fc
    .tuple(
      fc.constantFrom('serverUrl', 'httpRequestTimeout', 'httpRequestTimeout'),
      fc.constantFrom<(k: string) => string>(
        (k) => k,
        (k) => k,
        (k) => `"${k}"`,
        (k) => `'${k}'`,
        (k) => `${k}  `,
        (k) => `&ka ${k}`,
      ),
    )
    .map(([k, spell]) => spell(k));
  // `*kt` is an alias key (ANCHORS' anchor on a key), with or without a blank before ":".
  const keys = fc.oneof({ weight: 8, arbitrary: key }, { weight: 1, arbitrary: fc.constantFrom('*kt ', '*kt', ...(harsh ? ['*k1 ', '*ka '] : [])) });
  // In a flow mapping the harsh grammar also writes `key:value` (one plain scalar for libyaml)
  // and a key whose ":" stands on the next line (no longer a key for libyaml).
  const flowColon = harsh ? fc.constantFrom(': ', ': ', ': ', ': ', ':', '\n  : ') : fc.constant(': ');
  const setting = fc.tuple(keys, valueArb(harsh), flowColon).map(
    ([k, v, colon]): Entry =>
      'inline' in v
        ? {
            render: () => `${k}: ${v.inline}`.trimEnd(),
            // A comment would swallow the rest of a flow mapping. A "?" in a plain scalar
            // inside a flow mapping is left out too (Go and readConfYml both refuse it, so it
            // would only dilute the sample). A bare tag there, and `key:` right before "," or
            // "}" (the space after the colon trimmed), come in the harsh grammar only.
            flow:
              !v.commented && (harsh || (!v.inline.includes('?') && !/^!\S*$/.test(v.inline)))
                ? harsh
                  ? `${k}${colon}${v.inline}`.trimEnd()
                  : `${k}: ${v.inline}`
                : undefined,
          }
        : { render: (indent) => `${k}: ${v.block(indent)}` },
  );
  const mergeKey = harsh ? fc.constantFrom('<<', '<<', '<<', '!!merge <<', '! <<', '&mk <<') : fc.constant('<<');
  const merge = fc
    .tuple(
      mergeKey,
      fc.constantFrom(
        '*m1',
        '*m2',
        '*m3',
        '*m4',
        '*m5',
        '*m6',
        '[*m1, *m2]',
        '[*m2, *m1]',
        '[*m5, *m1]',
        '[*m3, *m4]',
        '{httpRequestTimeout: 9s}',
        '*t1',
        '[]',
        '&mm {httpRequestTimeout: 8s}',
        '*vt',
      ),
    )
    .map(([k, v]): Entry => ({ render: () => `${k}: ${v}`, flow: `${k}: ${v}` }));
  const other = fc
    .constantFrom('other: 1', 'other: [1, 2]', 'other: {a: b}', 'other: [-]', 'other: {a:, b: -}', 'other: [a:, -]', ...(harsh ? ['other: {a: 1, a: 2}'] : []))
    .map((t): Entry => ({ render: () => t, flow: t }));
  const comment = fc.constant<Entry>({ render: () => '# comment' });
  return fc.oneof({ weight: 8, arbitrary: setting }, { weight: 3, arbitrary: merge }, { weight: 2, arbitrary: other }, { weight: 1, arbitrary: comment });
}

function providerArb(harsh: boolean): fc.Arbitrary<string> {
  const mapping = fc
    .tuple(fc.array(entryArb(harsh), { maxLength: 4 }), fc.integer({ min: 1, max: 4 }), fc.boolean(), fc.constantFrom('', '', '', ' &pp', '&kp '), fc.boolean())
    .map(([entries, indent, flow, anchor, comment]) => {
      // An anchor after the key is the mapping's; before it, the key's.
      const head = anchor === '&kp ' ? `&kp ${P}:` : `${P}:${anchor}`;
      if (flow && entries.every((e) => e.flow !== undefined)) return `${head} {${entries.map((e) => e.flow).join(', ')}}`;
      const lines = entries.map((e) => ' '.repeat(indent) + e.render(indent));
      return [head + (comment ? ' # provider' : ''), ...lines].join('\n');
    });
  const other = fc.constantFrom(
    `${P}:`,
    `${P}: ~`,
    `${P}: null`,
    `${P}: *m1`,
    `${P}: *m3`,
    `${P}: *m5`,
    `${P}: *t1`,
    `${P}: *t2`,
    `${P}: 50s`,
    `${P}: [a]`,
    `${P}:\n  - a`,
    `${P}: {}`,
  );
  return fc.oneof({ weight: 6, arbitrary: mapping }, { weight: 1, arbitrary: other });
}

/** A document's text before its ending, and what follows the ending (a later document, a marker). */
interface Body {
  text: string;
  suffix: string;
}

function grammarArb(harsh: boolean): fc.Arbitrary<Body> {
  const topEntry = fc.oneof(
    { weight: 5, arbitrary: providerArb(harsh) },
    { weight: 2, arbitrary: fc.constantFrom('<<: *pb', '<<: *pn', '<<: *pm', '<<: [*pb, *pn]', '<<: [*pn, *pb]', '<<: [*pm, *pb]') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'enableIPv4: true',
        'ipamUnixSocketPath: /var/run/spidernet/spiderpool.sock',
        'clusterSubnetDefaultFlexibleIPNumber: 1',
        '# comment',
        'foo: [-]',
        ...(harsh ? ['foo: {a: 1, a: 2}', '? [a]\n: 1', '*k1 : 1', `*kp : {httpRequestTimeout: 2s}`] : []),
      ),
    },
  );
  return fc
    .record({
      // Each anchored definition is there 6 times in 7; a missing one makes its aliases unknown.
      anchors: fc
        .array(fc.integer({ min: 0, max: 6 }), { minLength: ANCHORS.length, maxLength: ANCHORS.length })
        .map((keep) => ANCHORS.filter((_, i) => keep[i] !== 0)),
      anchorsLast: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), // aliases before anchors: unknown anchor
      entries: fc.array(topEntry, { minLength: 1, maxLength: 3 }),
      prefix: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom('', '', '', '', '---\n', '%YAML 1.1\n---\n', '# head\n', ...(harsh ? ['%YAML 1.2\n---\n'] : [])) },
        { weight: 1, arbitrary: fc.constantFrom(...TAG_PREFIXES, ...(harsh ? HARSH_TAG_PREFIXES : [])) },
      ),
      suffix: fc.constantFrom(
        '',
        '',
        '',
        '...\n',
        '---\n',
        `---\n${P}: {httpRequestTimeout: 1h}\n`,
        ...(harsh ? ['--- ]]\n', '...\n]]\n', '# \u0001\n', '# \u0085\n', 'x: "\\/"\n', '...\n%TAG !e! tag:%zz\n---\n'] : []),
      ),
    })
    .map(({ anchors, anchorsLast, entries, prefix, suffix }) => {
      const defs = anchors.map(([, text]) => text);
      const body = anchorsLast ? [...entries, ...defs] : [...defs, ...entries];
      return { text: prefix + body.join('\n'), suffix };
    });
}

/** `key: value` split as the fixture's lines are written (the value without its double quotes). */
const SETTING = /^( *)([^:]+): *"?(.*?)"?$/;
const edit = (replace: (indent: string, key: string, value: string) => string) => (line: string) =>
  SETTING.test(line) ? line.replace(SETTING, (_m, indent: string, key: string, value: string) => replace(indent, key, value)) : line;

/** Edits of one line of the fixture, as people make them. */
const LINE_EDITS: ReadonlyArray<(line: string) => string> = [
  (l) => `${l} `,
  (l) => `${l}\t`,
  (l) => `${l} # note`,
  (l) => `${l}#note`,
  (l) => `  ${l}`,
  (l) => `\t${l}`,
  (l) => `# ${l}`,
  (l) => `${l}\n`,
  (l) => `${l}\n# c`,
  (l) => `${l}\r`,
  (l) => `${l}\n${l}`,
  edit((i, k, v) => `${i}${k}:\t${v}`),
  edit((i, k, v) => `${i}${k} : ${v}`),
  edit((i, k, v) => `${i}${k}: '${v}'`),
  edit((i, k, v) => `${i}${k}: ${v}`),
  edit((i, k, v) => `${i}${k}: "${v}"`),
  edit((i, k, v) => `${i}${k}: |\n${i}  ${v}`),
  edit((i, k, v) => `${i}${k}: |-\n${i}    ${v}`),
  edit((i, k, v) => `${i}${k}: >\n${i}  ${v}\n`),
  edit((i, k, v) => `${i}${k}: |+\n${i}  ${v}\n`),
  edit((i, k, v) => `${i}${k}:\n${i}  ${v}`),
  edit((i, k, v) => `${i}${k}:\n${i}${v}`),
  edit((i, k, v) => `${i}${k}: !!str ${v}`),
  edit((i, k, v) => `${i}${k}: &x ${v}`),
  edit((i, k, v) => `${i}&y ${k}: ${v}`),
  edit((i, k, v) => `${i}${k}: [${v}]`),
];

/** A mutant of the fixture: one to three lines edited (the last, a provider line or any), the whole text indented 1 time in 8. */
const fixtureArb: fc.Arbitrary<Body> = fc
  .record({
    edits: fc.array(fc.tuple(fc.constantFrom('last', 'provider', 'any'), fc.nat(), fc.nat({ max: LINE_EDITS.length - 1 })), { minLength: 1, maxLength: 3 }),
    indented: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
    prefix: fc.constantFrom('', '', '', '---\n', '# conf.yml\n'),
    suffix: fc.constantFrom('', '', '', '...\n', '---\n'),
  })
  .map(({ edits, indented, prefix, suffix }) => {
    const lines = FIXTURE.replace(/\n$/, '').split('\n');
    const provider = lines.findIndex((l) => l.startsWith(P));
    for (const [where, n, e] of edits) {
      const at = where === 'last' ? lines.length - 1 : where === 'provider' ? provider + (n % (lines.length - provider)) : n % lines.length;
      lines[at] = LINE_EDITS[e]!(lines[at]!);
    }
    const text = lines.join('\n');
    return { text: prefix + (indented ? text.replace(/^/gm, '    ') : text), suffix };
  });

/** Characters libyaml or Go treat apart: NEL, LS, PS (line breaks), NBSP (not a blank), U+FEFF (a BOM only first). */
const SPECIAL = ['\u0085', '\u2028', '\u2029', '\u00a0', '\ufeff'];

/** A generated conf.yml document (see the file's comment). */
export function documentArb(harsh: boolean): fc.Arbitrary<string> {
  return fc
    .record({
      body: fc.oneof({ weight: 4, arbitrary: grammarArb(harsh) }, { weight: 1, arbitrary: fixtureArb }),
      // The ending where nothing follows: a final line break, none, a blank line, a trailing blank.
      ending: fc.constantFrom('\n', '\n', '\n', '\n', '', '', '', '\n\n', ' ', '\n  '),
      bom: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      nl: fc.constantFrom('\n', '\n', '\r\n', ...(harsh ? ['\r'] : [])),
      special: fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...SPECIAL), fc.nat(), fc.boolean()) }),
    })
    .map(({ body, ending, bom, nl, special }) => {
      let text = (body.text + (body.suffix === '' ? ending : '\n') + body.suffix).replace(/\n/g, nl);
      if (special !== null) {
        const [c, n, asBreak] = special;
        const breaks = [...text.matchAll(/\r\n|[\r\n]/g)];
        const at = breaks[n % Math.max(breaks.length, 1)];
        text =
          asBreak && at !== undefined
            ? text.slice(0, at.index) + c + text.slice(at.index + at[0].length)
            : text.slice(0, n % (text.length + 1)) + c + text.slice(n % (text.length + 1));
      }
      return (bom ? '\uFEFF' : '') + text;
    });
}

/**
 * The classes the generator must keep reaching, each a marker its documents carry: the
 * test asserts every one is in a share of the sample, so that no edit of the grammar
 * silently stops reaching what once went wrong.
 */
export const FEATURES: Readonly<Record<string, RegExp>> = {
  'a block scalar ending the text without a line break': /[|>][-+2]*(\r\n|[\r\n])([ \t]*(\r\n|[\r\n]))*[ \t]+[^\s][^\r\n]*$/,
  'a quoted private-use escape beside a flow "-" or kept ":"': /^(?=[^]*"[^"\n]*\\uE00[01])(?=[^]*(\[-[,\]]|\w:[,}\]]|: -[,}]|::\]))/,
  '"%" in a tag': /!(<[^>\s]*|[\w!-]*)%/,
  '%TAG prefix with a "%" escape': /%TAG \S+ \S*%/,
  'a %TAG handle used': /!e!/,
  'a fixture mutant': /enableKubevirtStaticIP/,
  'the whole text indented': /^(\uFEFF)?( {4}|(---|# conf.yml)(\r\n|[\r\n]) {4})ipamUnixSocketPath/,
  'an indented first line': /^\uFEFF?(---(\r\n|[\r\n]))? +[^\s#]/,
  'a pasted block scalar in the fixture': /enableKubevirtStaticIP[^]*: [|>][-+]?(\r\n|[\r\n])/,
  NEL: /\u0085/,
  'LS or PS': /[\u2028\u2029]/,
  NBSP: /\u00a0/,
  'U+FEFF past the start': /[^]\uFEFF/,
  'an anchor on a key': /(^|[\n{,] *)&(ka|kp|y) /,
  'an alias key': /\*k[t1a] ?:/,
  'a merge key': /<<: /,
  'a tab': /\t/,
  CRLF: /\r\n/,
  BOM: /^\uFEFF/,
  'no final line break': /[^\r\n]$/,
};
