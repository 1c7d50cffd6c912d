/**
 * Differential test of the whole-file conf.yml check against Go: documents generated
 * from the schema (src/spiderpool/conf-schema.ts) with every key mutated through every shape
 * (quoted and bare scalars, YAML 1.1 words, numbers in every base, over-large numbers,
 * lists, mappings, null, duplicate, unknown and wrong-case keys), decoded by the oracle
 * with gopkg.in/yaml.v2 v2.4.0 (controller) and yaml.v3 v3.0.1 (agent) into structs
 * written from the schema page, then put through the start-time checks (the IaaS
 * client's ValidateConfig, the agent's socket path, metav1.LabelSelectorAsSelector,
 * validation.IsQualifiedName, filepath.Match).
 *
 * Each component's verdict (decodes and passes the start checks, or not) must be the one
 * validateConfYml gives for that component, and each of Go's type-error
 * messages must be among the webhook's causes, at the same line; yaml-go's `unmarshal` must
 * give Go's whole error text where it is a decode error naming no struct type of the
 * oracle's own (package main). The seed (seed.ts) is
 * printed; ORACLE_SEED=<n> replays a run.
 */
import fc from 'fast-check';
import { CONF_YML, LABEL_SELECTOR } from '../../src/spiderpool/conf-schema.js';
import type { GoType, StructType } from '../../src/yaml-go/go-types.js';
import { validateConfYml } from '../../src/spiderpool/conf-validate.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';
import { escapeUnprintable } from '../../src/go/strconv-quote.js';
import { unmarshal } from '../../src/yaml-go/unmarshal.js';
import { askConfYml, disposeOracle, type ConfYmlAnswer, type Decoding } from './oracle.js';
import { differentialSeed } from './seed.js';

const SEED = differentialSeed('ORACLE_SEED');
const RUNS = process.env.ORACLE_RUNS !== undefined ? Number(process.env.ORACLE_RUNS) : 6_000;

afterAll(disposeOracle);

/** A YAML value to render: a scalar or flow text, or a block mapping / sequence. */
type Y = { text: string } | { map: Array<[string, Y]> } | { seq: Y[] };

function render(value: Y, indent: number): string {
  if ('text' in value) return ` ${value.text}`;
  const pad = ' '.repeat(indent);
  if ('seq' in value) {
    if (value.seq.length === 0) return ' []';
    return value.seq
      .map((item) => `\n${pad}-${'map' in item && item.map.length > 0 ? renderMapInSeq(item.map, indent + 2) : render(item, indent + 2)}`)
      .join('');
  }
  if (value.map.length === 0) return ' {}';
  return value.map.map(([k, v]) => `\n${pad}${k}:${render(v, indent + 2)}`).join('');
}

/** A mapping as a sequence item: its first entry on the "- " line. */
function renderMapInSeq(entries: Array<[string, Y]>, indent: number): string {
  const pad = ' '.repeat(indent);
  return entries.map(([k, v], i) => `${i === 0 ? ' ' : `\n${pad}`}${k}:${render(v, indent + 2)}`).join('');
}

const t = (text: string): Y => ({ text });
const texts = (...values: string[]) => fc.constantFrom(...values).map(t);

const BOOL_WORDS = [
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  'yes',
  'Yes',
  'YES',
  'no',
  'No',
  'NO',
  'on',
  'On',
  'ON',
  'off',
  'Off',
  'OFF',
  'y',
  'Y',
  'n',
  'N',
  'tRUE',
  'nO',
  'oN',
];
const NUMBERS = [
  '0',
  '1',
  '-1',
  '+5',
  '10',
  '1_000',
  '1__0',
  '_1',
  '1_',
  '0x10',
  '0X1F',
  '+0x10',
  '-0x10',
  '0xg',
  '0x',
  '0o17',
  '0O17',
  '0o8',
  '017',
  '08',
  '09',
  '00',
  '0b101',
  '-0b11',
  '0b2',
  '1e3',
  '1E3',
  '1.5',
  '-1.5',
  '.5',
  '-.5',
  '1.',
  '1.5e3',
  '1e',
  '1e400',
  '-1e400',
  '1e-400',
  '-1e300',
  '0.0e0',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '18446744073709551615',
  '18446744073709551616',
  '99999999999999999999',
  '9223372036854775808.0',
  '9.3e18',
  '9223372036854775807.0',
  '0x7FFFFFFFFFFFFFFF',
  '0x8000000000000000',
  '0xFFFFFFFFFFFFFFFFF',
  '.inf',
  '-.inf',
  '+.inf',
  '.nan',
  '.NaN',
  '12:30',
  '2001-12-14',
  '+-1',
  '1e3.5',
];
const NULLS = ['~', 'null', 'Null', 'NULL', ''];
const WORDS = ['kube-system', 'a', 'eth0', 'x y', 'http://p:80', '50s', 'é', '<<x'];

/** Quoted and bare forms of a scalar text. */
const quoting = (s: string): fc.Arbitrary<string> => (s === '' ? fc.constantFrom('', '""', "''") : fc.constantFrom(s, s, `"${s}"`, `'${s}'`));

const anyScalar: fc.Arbitrary<Y> = fc
  .oneof(fc.constantFrom(...BOOL_WORDS), fc.constantFrom(...NUMBERS), fc.constantFrom(...NULLS), fc.constantFrom(...WORDS))
  .chain(quoting)
  .map(t);

const flowCollections = texts('[]', '{}', '[a, b]', '[1, true]', '[~]', '[[a]]', '[{a: b}]', '{a: b}', '{a: [1]}', '{1: 2}', '[kube-system]');

/** A value of the wrong shape (or null) for any field. */
const wrongShape: fc.Arbitrary<Y> = fc.oneof(anyScalar, flowCollections, fc.constant<Y>({ seq: [t('a'), t('b')] }), fc.constant<Y>({ map: [['a', t('b')]] }));

/** Values for the fields the start-time checks read, valid and not. */
const SPECIAL: Record<string, string[]> = {
  kubeletRootDir: ['/var/lib/kubelet', 'var/lib/kubelet', './x', '/a/../b', '/', '..', '""', '~', '/var/lib/kubelet/'],
  resourceName: [
    'spidernet.io/sub-eni',
    'a/b/c',
    '""',
    'A_b',
    'example.com/x',
    '-bad',
    'Example.com/x',
    '/x',
    'x/',
    'a.b/c-d_e',
    `${'a'.repeat(64)}`,
    `p/${'a'.repeat(63)}`,
  ],
  defaultMaxCount: ['0', '1', '-1', '10000', '-9223372036854775808', '9223372036854775808.0', '-.inf', '-0.5', '1.5'],
  includeInterfaces: [
    '[eth*, ens[0-9]]',
    '["eth["]',
    '["[a-]"]',
    '["eth0["]',
    '["e*["]',
    '["\\\\"]',
    '["eth\\\\"]',
    '["[^a]x"]',
    '["[]a]"]',
    '["*["]',
    '["?"]',
    '["eth0*["]',
    '["[e-f]*"]',
    '["e[t-]"]',
    '["x*["]',
    '["lo*[", eth1]',
    '["e[^a]h0"]',
  ],
  excludeInterfaces: ['[lo]', '["["]', '["eth*"]', '["[\\\\]]"]', '["[ab"]', '["ab]"]', '["*"]'],
};
const LABEL_KEYS = ['a', 'app', 'a b', 'example.com/a', '-a', 'a/b/c', '""', 'k8s.io/x', 'A.B_c', 'Example.com/a', `${'k'.repeat(64)}`, 'a/', '/a'];
const LABEL_VALUES = ['v', '""', 'v v', '-v', 'a.b', `${'v'.repeat(64)}`, '1', 'true', '~', '[v]'];
const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'in', 'Gt', '""', 'exists'];

const selector: fc.Arbitrary<Y> = fc
  .record({
    labelsKey: fc.constantFrom('matchlabels', 'matchlabels', 'matchLabels', 'MatchLabels'),
    labels: fc.array(fc.tuple(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...LABEL_VALUES)), { maxLength: 3 }),
    exprKey: fc.constantFrom('matchexpressions', 'matchexpressions', 'matchExpressions'),
    exprs: fc.array(
      fc.record({
        key: fc.constantFrom(...LABEL_KEYS),
        operator: fc.constantFrom(...OPERATORS),
        values: fc.option(fc.constantFrom('[a]', '[]', '[a, b]', '["a b"]', '[1]', 'a', '~'), { nil: undefined }),
        keyName: fc.constantFrom('key', 'key', 'Key'),
      }),
      { maxLength: 2 },
    ),
    parts: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ labelsKey, labels, exprKey, exprs, parts }): Y => {
    const entries: Array<[string, Y]> = [];
    if (parts & 1) entries.push([labelsKey, { map: labels.map(([k, v]) => [k, t(v)]) }]);
    if (parts & 2) {
      entries.push([
        exprKey,
        {
          seq: exprs.map((e) => ({
            map: [[e.keyName, t(e.key)], ['operator', t(e.operator)], ...(e.values !== undefined ? [['values', t(e.values)] as [string, Y]] : [])],
          })),
        },
      ]);
    }
    return { map: entries };
  });

/** A value for a field of Go type `type` (named `key`): mostly of the right shape. */
function valueFor(type: GoType, key: string, depth: number): fc.Arbitrary<Y> {
  const right = rightShape(type, key, depth);
  return fc.oneof({ weight: depth <= 1 ? 5 : 14, arbitrary: right }, { weight: 1, arbitrary: wrongShape });
}

function rightShape(type: GoType, key: string, depth: number): fc.Arbitrary<Y> {
  const special = SPECIAL[key];
  if (special) return fc.constantFrom(...special).map(t);
  switch (type.go) {
    case 'bool':
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...BOOL_WORDS).map(t) },
        {
          weight: 2,
          arbitrary: fc
            .constantFrom(...BOOL_WORDS)
            .chain(quoting)
            .map(t),
        },
        { weight: 1, arbitrary: texts('1', '0', '~', '"1"') },
      );
    case 'int':
      return fc.oneof(
        { weight: 3, arbitrary: texts('0', '1', '10', '1_000', '0x10', '017', '1e3', '1.5', '-2') },
        { weight: 3, arbitrary: fc.constantFrom(...NUMBERS).map(t) },
        { weight: 1, arbitrary: fc.constantFrom('5', '1e3', 'true').chain(quoting).map(t) },
      );
    case 'string':
      return anyScalar;
    case 'map':
      return fc
        .array(fc.tuple(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...LABEL_VALUES)), { maxLength: 2 })
        .map((es): Y => ({ map: es.map(([k, v]) => [k, t(v)]) }));
    case 'slice':
      if (type.of.go === 'string') {
        return fc.oneof(
          texts('[a, b]', '[1, true]', '[]', '[~]', '[[a]]', '[{a: b}]', '[kube-system]'),
          fc.array(anyScalar, { maxLength: 3 }).map((items): Y => ({ seq: items })),
        );
      }
      return depth > 6
        ? fc.constant(t('[]'))
        : fc.array(valueForStruct(type.of as StructType, depth + 1), { maxLength: 2 }).map((items): Y => ({ seq: items }));
    case 'struct':
      return type === LABEL_SELECTOR ? selector : depth > 6 ? fc.constant(t('{}')) : valueForStruct(type, depth + 1);
  }
}

/** A mapping with some of the struct's fields, perhaps an unknown, wrong-case or repeated key. */
function valueForStruct(type: Extract<GoType, { go: 'struct' }>, depth: number): fc.Arbitrary<Y> {
  const keys = Object.keys(type.fields);
  const entry = fc.constantFrom(...keys).chain((k) => valueFor(type.fields[k]!, k, depth).map((v): [string, Y] => [k, v]));
  const odd = fc.oneof(
    fc.constantFrom(...keys).map((k): [string, Y] => [k[0]!.toUpperCase() + k.slice(1), t('1')]),
    fc.constantFrom(...keys).map((k): [string, Y] => [k.toLowerCase() === k ? `${k}x` : k.toLowerCase(), t('true')]),
    fc.constant<[string, Y]>(['unknownKey', t('{a: [1, 2]}')]),
  );
  return fc
    .tuple(fc.array(entry, { maxLength: depth <= 1 ? 6 : 3 }), fc.option(odd, { freq: 4 }), fc.integer({ min: 0, max: 9 }))
    .map(([entries, extra, repeat]): Y => {
      const all = extra ? [...entries, extra] : entries;
      // A key written twice (yaml.v3 refuses it, yaml.v2 keeps the last).
      if (repeat === 0 && all.length > 0) all.push(all[0]!);
      return { map: all };
    });
}

/** Selectors of the right shape, with label keys, values and operators valid or not. */
const shapedSelector: fc.Arbitrary<Y> = fc
  .record({
    labels: fc.array(fc.tuple(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...LABEL_VALUES.filter((v) => v !== '[v]'))), { maxLength: 2 }),
    exprs: fc.array(
      fc.record({
        key: fc.constantFrom(...LABEL_KEYS),
        operator: fc.constantFrom(...OPERATORS),
        values: fc.option(fc.constantFrom('[a]', '[]', '[a, b]', '["a b"]', '[1]', '~'), { nil: undefined }),
      }),
      { maxLength: 2 },
    ),
  })
  .map(
    ({ labels, exprs }): Y => ({
      map: [
        ['matchlabels', { map: labels.map(([k, v]): [string, Y] => [k, t(v)]) }],
        [
          'matchexpressions',
          { seq: exprs.map((e) => ({ map: [['key', t(e.key)], ['operator', t(e.operator)], ...(e.values ? [['values', t(e.values)] as [string, Y]] : [])] })) },
        ],
      ],
    }),
  );
const special = (key: string) => fc.constantFrom(...SPECIAL[key]!).map(t);
/** `agent.networkResourcePlugin` of the right shape throughout: what the start-time checks see. */
const startCheckDoc: fc.Arbitrary<Y> = fc
  .record({
    root: special('kubeletRootDir'),
    affinity: shapedSelector,
    sub: fc.array(fc.record({ resourceName: special('resourceName'), defaultMaxCount: special('defaultMaxCount'), nodeSelector: shapedSelector }), {
      maxLength: 2,
    }),
    master: fc.array(
      fc.record({
        defaultMaxCount: special('defaultMaxCount'),
        includeInterfaces: special('includeInterfaces'),
        excludeInterfaces: special('excludeInterfaces'),
        nodeSelector: shapedSelector,
      }),
      { maxLength: 2 },
    ),
    keep: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  })
  .map(({ root, affinity, sub, master, keep }): Y => {
    const pick = (entries: Array<[string, Y]>, offset: number) => entries.filter((_, i) => keep[(i + offset) % 8]);
    const rule = (r: Record<string, Y>, offset: number): Y => ({ map: pick(Object.entries(r), offset) });
    return {
      map: [
        [
          'agent',
          {
            map: [
              [
                'networkResourcePlugin',
                {
                  map: pick(
                    [
                      ['kubeletRootDir', root],
                      ['devicePluginAffinity', { map: [['nodeSelector', affinity]] }],
                      [
                        'resourceAdvertisement',
                        {
                          map: [
                            ['subENI', { map: [['rules', { seq: sub.map((r, i) => rule(r, i)) }]] }],
                            ['masterNIC', { map: [['rules', { seq: master.map((r, i) => rule(r, i + 3)) }]] }],
                          ],
                        },
                      ],
                    ],
                    5,
                  ),
                },
              ],
            ],
          },
        ],
      ],
    };
  });

/** Only `agent:`, so that the start-time checks are reached often. */
const AGENT_ONLY: Extract<GoType, { go: 'struct' }> = { ...CONF_YML, fields: { agent: CONF_YML.fields['agent']! } };
const documentArb = fc.oneof(valueForStruct(CONF_YML, 0), valueForStruct(AGENT_ONLY, 0), startCheckDoc).map((doc) => `${render(doc, 0).replace(/^\n/, '')}\n`);

/** TS's verdict per component: decodes with that decoder and passes the start checks. */
function tsVerdict(doc: string): { agent: boolean; controller: boolean; causes: string[] } {
  const findings = validateConfYml(doc);
  return { agent: !findings.stops.agent, controller: !findings.stops.controller, causes: findings.errors.map(fieldErrorString) };
}

const goOk = (d: Decoding, agent: boolean) => d.ok && !d.startError && !(agent && d.agentStartError);

/**
 * Go's type errors (`line N: cannot unmarshal …`, `line N: mapping key "x" already
 * defined …`) that name a type the webhook names as Go does (not Go's own struct types,
 * which the oracle declares in package main) and that the webhook's causes lack.
 */
function missingGoMessages(go: Decoding, causes: string[]): string[] {
  if (go.ok || !go.error?.startsWith('yaml: unmarshal errors:\n')) return [];
  const lines = go.error.split('\n').slice(1);
  // The webhook stops a decoder's pass after 32 errors (src/spiderpool/conf-yml.ts).
  if (lines.length >= 32 || causes.length >= 32) return [];
  return lines
    .map((line) => line.trim())
    .filter((line) => !/ into (\[\]|\*)?(main\.|struct )| in type main\./.test(line))
    .filter((line) => {
      const [, n, message] = /^line (\d+): (.*)$/.exec(line) ?? [];
      // The webhook escapes controls in Go's message (a cause stays one line).
      return !causes.some((c) => c.includes(`line ${n}, column `) && c.includes(`: ${escapeUnprintable(message!)}, so `));
    });
}
/** A decode error (not libyaml's scanner or parser) whose types yaml-go names as Go does, under the 32 problems a pass keeps. */
const comparableGoError = (e: string) =>
  /^yaml: (unmarshal errors:\n|cannot decode |!!binary value|document contains excessive)/.test(e) && !/main\.|struct \{/.test(e) && e.split('\n').length < 32;

/** Where yaml-go's error text differs from Go's, per decoder; `compared` counts the texts compared. */
function goTextDiffers(doc: string, go: ConfYmlAnswer, counts: { compared: number }): string[] {
  const ours = unmarshal(doc, CONF_YML);
  return (['v2', 'v3'] as const).flatMap((v) => {
    const theirs = go[v].error;
    if (go[v].ok || theirs === undefined || !comparableGoError(theirs) || ours[v].problems.length >= 32) return [];
    counts.compared++;
    return ours[v].error === theirs ? [] : [`${v}: Go ${JSON.stringify(theirs)}, yaml-go ${JSON.stringify(ours[v].error)}`];
  });
}
const goText = (d: Decoding) =>
  d.ok ? (d.startError || d.agentStartError ? `start check: ${d.startError ?? ''} ${d.agentStartError ?? ''}` : 'starts') : `decode: ${d.error}`;

describe('the whole conf.yml against Go (schema-driven documents)', () => {
  it(`agrees on every one of ${RUNS} generated documents, per decoder (seed printed; ORACLE_SEED replays)`, async () => {
    const docs = fc.sample(fc.tuple(documentArb, fc.integer({ min: 0, max: 99 })), { numRuns: RUNS, seed: SEED });
    const tops = ['- a\n', 'just text\n', '"quoted"\n', '[a: 1]\n', '~\n', '', '# nothing\n', '42\n'];
    const texts_ = docs.map(([doc, n]) =>
      n < 3 ? `${doc}---\nenableIPv4: "x"\n` : n < 5 ? doc.replace(/\n/g, '\r\n') : n < 7 ? tops[(n + doc.length) % tops.length]! : doc,
    );
    console.log(`conf.yml schema differential: seed ${SEED} (replay with ORACLE_SEED=${SEED}), ${texts_.length} documents`);
    const answers = await askConfYml(texts_);
    const mismatches: string[] = [];
    const outcomes = { bothStart: 0, agentOnly: 0, controllerOnly: 0, neither: 0, startCheckFails: 0 };
    const texts = { compared: 0 };
    texts_.forEach((doc, i) => {
      const go = answers[i]!;
      const agent = goOk(go.v3, true);
      const controller = goOk(go.v2, false);
      if (agent && controller) outcomes.bothStart++;
      else if (agent) outcomes.agentOnly++;
      else if (controller) outcomes.controllerOnly++;
      else outcomes.neither++;
      if (go.v2.startError || go.v3.startError) outcomes.startCheckFails++;
      const ts = tsVerdict(doc);
      const missing = [...missingGoMessages(go.v3, ts.causes), ...missingGoMessages(go.v2, ts.causes)];
      const differs = goTextDiffers(doc, go, texts);
      if (ts.agent !== agent || ts.controller !== controller || missing.length > 0 || differs.length > 0) {
        mismatches.push(
          `document ${JSON.stringify(doc)}\n  yaml.v3 (agent): ${goText(go.v3)}\n  yaml.v2 (controller): ${goText(go.v2)}\n` +
            `  webhook: agent ${ts.agent ? 'starts' : 'stops'}, controller ${ts.controller ? 'starts' : 'stops'}\n    ${ts.causes.join('\n    ')}` +
            (missing.length > 0 ? `\n  Go messages the webhook does not give: ${missing.join(' | ')}` : '') +
            (differs.length > 0 ? `\n  yaml-go's error text is not Go's: ${differs.join(' | ')}` : ''),
        );
      }
    });
    console.log(`outcomes: ${JSON.stringify(outcomes)}; Go error texts compared with yaml-go's: ${texts.compared}`);
    if (mismatches.length > 0) {
      throw new Error(
        `${mismatches.length} of ${texts_.length} documents disagree with Go (seed ${SEED}; replay with ORACLE_SEED=${SEED}):\n\n` +
          mismatches.slice(0, 15).join('\n\n'),
      );
    }
    // The generator must keep reaching every outcome, or the comparison proves little.
    expect(outcomes.bothStart).toBeGreaterThan(RUNS * 0.05);
    expect(outcomes.neither).toBeGreaterThan(RUNS * 0.05);
    expect(outcomes.agentOnly + outcomes.controllerOnly).toBeGreaterThan(RUNS * 0.01);
    expect(outcomes.startCheckFails).toBeGreaterThan(RUNS * 0.02);
    expect(texts.compared).toBeGreaterThan(RUNS * 0.05);
  });
});
