/**
 * The whole conf.yml, type by type, as Spiderpool's two decoders read it (each verdict
 * here was checked against gopkg.in/yaml.v2 v2.4.0 and yaml.v3 v3.0.1 by the e2e oracle),
 * and the start-time checks of agent.networkResourcePlugin.
 */
import { readConfYml } from '../../src/spiderpool/conf-yml.js';
import { validateConfYml } from '../../src/spiderpool/conf-validate.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';

/** Which components start: `both`, `agent` (yaml.v3 only), `controller` (yaml.v2 only) or `neither`. */
function starts(text: string): string {
  const { stops } = validateConfYml(text);
  return stops.agent ? (stops.controller ? 'neither' : 'controller') : stops.controller ? 'agent' : 'both';
}

function errors(text: string): string[] {
  return validateConfYml(text).errors.map(fieldErrorString);
}

describe('bool fields', () => {
  it.each(['true', 'True', 'TRUE', 'false', 'False', 'FALSE', '~', 'null', '', 'yes', 'Yes', 'YES', 'no', 'on', 'On', 'off', 'OFF', 'y', 'Y', 'n', 'N'])(
    'enableIPv4: %s starts both',
    (value) => expect(starts(`enableIPv4: ${value}\n`)).toBe('both'),
  );
  it.each(['"yes"', "'no'", '"on"', '"y"', '|-\n  yes'])('enableIPv4: %s (a string of a YAML 1.1 word) starts only the agent', (value) => {
    expect(starts(`enableIPv4: ${value}\n`)).toBe('agent');
  });
  it.each(['"true"', "'false'", '1', '0', 'tRUE', '"1"', '[true]', '{a: 1}', 'yes please'])('enableIPv4: %s starts neither', (value) => {
    expect(starts(`enableIPv4: ${value}\n`)).toBe('neither');
  });
  it('says what Go says, for each component', () => {
    expect(errors('enableIPv6: "yes"\n')).toEqual([
      'enableIPv6: Invalid value: "yes": line 1, column 13: cannot unmarshal !!str `yes` into bool, so Spiderpool\'s controller (gopkg.in/yaml.v2) refuses to start (its agent reads it); write true without quotes',
    ]);
    expect(errors('enableIPv6: [a]\n')).toEqual([
      "enableIPv6: Invalid value: line 1, column 13: cannot unmarshal !!seq into bool, so Spiderpool's agent (gopkg.in/yaml.v3) and controller (gopkg.in/yaml.v2) refuse to start; write true or false, without quotes",
    ]);
  });
});

describe('int fields', () => {
  const key = 'clusterSubnetAutoPoolDefaultRedundantIPNumber';
  it.each([
    '0',
    '-1',
    '+5',
    '1_000',
    '0x10',
    '0X1F',
    '0o17',
    '017',
    '08',
    '0b101',
    '-0b11',
    '1e3',
    '1.5',
    '-.5',
    '.5',
    '9223372036854775807',
    '-9223372036854775808',
    '9223372036854775808.0',
    '-1e300',
    '-.inf',
    '1_e3',
    '~',
  ])(`${key}: %s starts both (ints in every base, floats truncated)`, (value) => {
    expect(starts(`${key}: ${value}\n`)).toBe('both');
  });
  it.each(['9223372036854775808', '18446744073709551615', '99999999999999999999', '1e400', '.nan', '"5"', 'true', 'yes', '0x', '0o8', '2001-12-14', '[1]'])(
    `${key}: %s starts neither`,
    (value) => expect(starts(`${key}: ${value}\n`)).toBe('neither'),
  );
  it('says how far an int64 reaches', () => {
    expect(errors(`${key}: 9223372036854775808\n`)).toEqual([
      `${key}: Invalid value: "9223372036854775808": line 1, column 48: cannot unmarshal !!int \`9223372...\` into int, so Spiderpool's agent (gopkg.in/yaml.v3) and controller (gopkg.in/yaml.v2) refuse to start; write a whole number between -9223372036854775808 and 9223372036854775807`,
    ]);
  });
});

describe('string and []string fields', () => {
  it.each(['50', 'true', 'yes', '~', '"x"', '1.5', '2001-12-14'])('ipamUnixSocketPath: %s starts both (any scalar is its text)', (value) => {
    expect(starts(`ipamUnixSocketPath: ${value}\n`)).toBe('both');
  });
  it.each(['[a]', '{a: b}', '\n  - a'])('ipamUnixSocketPath: %s starts neither', (value) => expect(starts(`ipamUnixSocketPath: ${value}\n`)).toBe('neither'));
  it.each(['[a, b]', '[1, true]', '[]', '~', '\n    - kube-system', '[~]'])('podResourceInject.namespacesExclude: %s starts both', (value) => {
    expect(starts(`podResourceInject:\n  namespacesExclude: ${value}\n`)).toBe('both');
  });
  it.each(['kube-system', '"a"', '{a: b}', '[[a]]', '[{a: b}]'])('podResourceInject.namespacesExclude: %s starts neither', (value) => {
    expect(starts(`podResourceInject:\n  namespacesExclude: ${value}\n`)).toBe('neither');
  });
});

describe('structs, the document and keys', () => {
  it.each(['~', '{}', '\n  enabled: true'])('podResourceInject: %s starts both', (value) => expect(starts(`podResourceInject: ${value}\n`)).toBe('both'));
  it.each(['true', '[a]', '""', 'x'])('podResourceInject: %s starts neither', (value) => expect(starts(`podResourceInject: ${value}\n`)).toBe('neither'));
  it.each(['- a\n', 'just text\n', '"x"\n', '42\n'])('a document that is not a mapping (%j) starts neither', (text) => expect(starts(text)).toBe('neither'));
  it('a key written twice stops only the agent (yaml.v3), the controller keeps the last', () => {
    expect(starts('enableIPv4: true\nenableIPv4: false\n')).toBe('controller');
    expect(errors('enableIPv4: true\nenableIPv4: false\n')[0]).toMatch(
      /^enableIPv4: Invalid value: line 2, column 1: mapping key "enableIPv4" already defined at line 1, so Spiderpool's agent \(gopkg.in\/yaml.v3\) refuses to start/,
    );
  });
  it('checks the whole file whether or not the provider is enabled', () => {
    expect(starts('iaasNetworkProvider: {serverUrl: ""}\nenableIPv4: "true"\n')).toBe('neither');
  });
});

describe('warnings for what Spiderpool ignores', () => {
  const warnings = (text: string) => readConfYml(text).warnings.map((w) => `${w.field}: ${w.message}`);
  it('names unknown and wrong-case keys, with the key Spiderpool reads', () => {
    expect(warnings('EnableIPv4: true\nenableIPV6: true\nenablStatefulSet: true\nfoo: 1\n')).toEqual([
      'EnableIPv4: is not a key Spiderpool reads (keys are case-sensitive): it is ignored; did you mean enableIPv4?',
      'enableIPV6: is not a key Spiderpool reads (keys are case-sensitive): it is ignored; did you mean enableIPv6?',
      'enablStatefulSet: is not a key Spiderpool reads (keys are case-sensitive): it is ignored; did you mean enableStatefulSet?',
      'foo: is not a key Spiderpool reads (keys are case-sensitive): it is ignored',
    ]);
  });
  it('says a camel-case selector field is dropped and the selector selects every node', () => {
    const text =
      'agent:\n  networkResourcePlugin:\n    resourceAdvertisement:\n      subENI:\n        rules:\n        - nodeSelector:\n            matchExpressions: []\n';
    expect(warnings(text)).toEqual([
      'agent.networkResourcePlugin.resourceAdvertisement.subENI.rules[0].nodeSelector.matchExpressions: is dropped: Spiderpool reads label selector fields in lower case (matchexpressions), so this selector selects every node; write matchexpressions',
    ]);
  });
  it('warns about a second document, an empty file and the chart-only key (once)', () => {
    expect(warnings('enableIPv4: true\n---\nenableIPv4: false\n')).toEqual([
      ': holds more than one YAML document (---): Spiderpool reads only the first and ignores the rest; put every setting in the first',
    ]);
    expect(warnings('  enableIPv4: true\n# c\n\nenableIPv6: true\niaasNetworkProvider:\n  httpRequestTimeout: bad\n')).toEqual([
      ": line 4: Spiderpool ignores everything from line 4 on: the first top-level key or item is indented more than line 4, which ends the first YAML document for Go's decoders; indent all top-level keys alike",
    ]);
    expect(warnings('')).toEqual([': is empty: Spiderpool starts with every setting at its default']);
    expect(warnings('# nothing\n')).toEqual([': is empty: Spiderpool starts with every setting at its default']);
    expect(warnings('clusterSubnetDefaultFlexibleIPNumber: 1\n<<: {clusterSubnetDefaultFlexibleIPNumber: 2}\n')).toEqual([
      "clusterSubnetDefaultFlexibleIPNumber: is written by Spiderpool's Helm chart but read by neither the agent nor the controller: auto-created pools get clusterSubnetAutoPoolDefaultRedundantIPNumber spare IPs (0 here); set that key",
    ]);
  });
  it('warns about the chart-only key only where something is to change: SpiderSubnet on and the key Spiderpool reads unset', () => {
    const chartWarnings = (text: string) => validateConfYml(text).warnings.filter((w) => w.field === 'clusterSubnetDefaultFlexibleIPNumber');
    // What the chart renders with SpiderSubnet off (the fixtures' files): nothing to change, no warning.
    expect(chartWarnings('enableSpiderSubnet: false\nclusterSubnetDefaultFlexibleIPNumber: 1\n')).toEqual([]);
    expect(chartWarnings('clusterSubnetDefaultFlexibleIPNumber: 1\n')).toEqual([]);
    // The read key set: the chart's key changes nothing either.
    expect(chartWarnings('enableSpiderSubnet: true\nclusterSubnetDefaultFlexibleIPNumber: 1\nclusterSubnetAutoPoolDefaultRedundantIPNumber: 1\n')).toEqual([]);
    // SpiderSubnet on and only the chart's key: auto-created pools get 0 spare IPs, so the warning says which key to set.
    const [warning, ...more] = chartWarnings('enableSpiderSubnet: true\nclusterSubnetDefaultFlexibleIPNumber: 1\n');
    expect(more).toEqual([]);
    expect(warning!.message).toMatch(/set that key$/);
    expect(`data[conf.yml].${warning!.field}: ${warning!.message}`.length).toBeLessThan(256);
  });

  it('keeps every warning one line under 256 characters, whatever the key', () => {
    const text = `agent:\n  networkResourcePlugin:\n    resourceAdvertisement:\n      masterNIC:\n        rules:\n        - nodeSelector:\n            MatchLabels: {}\n            ${'k'.repeat(5000)}: 1\n`;
    for (const w of warnings(text)) {
      expect(`data[conf.yml].${w}`.length).toBeLessThan(256);
      expect(w).not.toContain('\n');
    }
  });
});

describe('start-time checks of agent.networkResourcePlugin', () => {
  const plugin = (body: string) => `agent:\n  networkResourcePlugin:\n${body.replace(/^/gm, '    ')}\n`;
  const masterRule = (rule: string) => plugin(`resourceAdvertisement:\n  masterNIC:\n    rules:\n    - ${rule}`);
  const subRule = (rule: string) => plugin(`resourceAdvertisement:\n  subENI:\n    rules:\n    - ${rule}`);
  const selector = (s: string) => plugin(`devicePluginAffinity:\n  nodeSelector: ${s}`);

  it.each([
    [plugin('kubeletRootDir: var/lib/kubelet'), 'agent.networkResourcePlugin.kubeletRootDir: Invalid value: "var/lib/kubelet": must be an absolute path'],
    [plugin('kubeletRootDir: ./kubelet'), 'kubeletRootDir: Invalid value: "./kubelet": must be an absolute path'],
    [subRule('resourceName: a/b/c'), 'subENI.rules[0].resourceName: Invalid value: "a/b/c": is not a qualified name'],
    [subRule('resourceName: -x'), 'resourceName: Invalid value: "-x": is not a qualified name: name part must consist of'],
    [subRule('resourceName: Example.com/x'), 'prefix part must be a lowercase RFC 1123 subdomain'],
    [subRule('defaultMaxCount: -1'), 'subENI.rules[0].defaultMaxCount: Invalid value: "-1": must be greater than or equal to 0'],
    [masterRule('defaultMaxCount: -.inf'), 'masterNIC.rules[0].defaultMaxCount: Invalid value: "-9223372036854775808": must be greater than or equal to 0'],
    [masterRule('includeInterfaces: ["eth["]'), 'masterNIC.rules[0].includeInterfaces[0]: Invalid value: "eth[": is not a valid interface pattern'],
    [masterRule('excludeInterfaces: [lo, "[a-]"]'), 'masterNIC.rules[0].excludeInterfaces[1]: Invalid value: "[a-]": is not a valid interface pattern'],
    [
      selector('{matchlabels: {"a b": x}}'),
      'devicePluginAffinity.nodeSelector: Invalid value: is not a valid label selector: matchlabels[a b] key "a b": name part must consist',
    ],
    [selector('{matchlabels: {a: "x y"}}'), 'matchlabels[a] value "x y": not a valid label value'],
    [selector('{matchexpressions: [{key: a, operator: in, values: [x]}]}'), 'matchexpressions[0].operator: "in" is not a valid label selector operator'],
    [selector('{matchexpressions: [{key: a, operator: In}]}'), "matchexpressions[0]: for 'in', 'notin' operators, values set can't be empty"],
    [selector('{matchexpressions: [{key: a, operator: Exists, values: [x]}]}'), 'matchexpressions[0]: values set must be empty for exists and does not exist'],
  ])('refuses %j', (text, message) => {
    const found = errors(text);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
    expect(found[0]).toContain("so Spiderpool's agent and controller refuse to start; ");
    expect(starts(text)).toBe('neither');
  });

  it.each([
    plugin('kubeletRootDir: /var/lib/kubelet/'),
    plugin('kubeletRootDir: ""'),
    subRule('resourceName: ""'), // the default spidernet.io/sub-eni
    subRule('resourceName: example.com/sub-eni'),
    subRule('defaultMaxCount: 0'),
    masterRule('includeInterfaces: ["eth*", "ens[0-9]", "x*["]'), // Go stops matching "eth0" at "x", before the bad "["
    masterRule('excludeInterfaces: ["[^a]x", "e[t-u]h0"]'),
    selector('{matchlabels: {kubernetes.io/os: linux, a: ""}, matchexpressions: [{key: a, operator: NotIn, values: [b]}, {key: b, operator: DoesNotExist}]}'),
  ])('allows %j', (text) => {
    expect(errors(text)).toEqual([]);
  });
});

describe('hostile values in decode errors (found by hostile testing of the served webhook)', () => {
  const errors = (text: string) => validateConfYml(text).errors.map(fieldErrorString);

  it.each([
    ['a tab and ESC from double-quote escapes in a scalar where a list is read', 'podResourceInject: {namespacesExclude: "x\\ty\\e[31m"}\n'],
    ['a tab in a key written twice', '"a\\tb": 1\n"a\\tb": 2\nagent: {"x\\ry": 1, "x\\ry": 2}\n'],
    ['ESC in a bool', 'enableIPv4: "\\e[31m"\n'],
    ['ESC in a relative kubeletRootDir (a start-time check)', 'agent: {networkResourcePlugin: {kubeletRootDir: "rel\\e[31m"}}\n'],
  ])('escapes control characters: %s', (_what, text) => {
    const messages = errors(text);
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) expect(m).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
  });

  it('bounds what a start-time check shows of a long value in its advice', () => {
    const [message] = errors(`agent: {networkResourcePlugin: {kubeletRootDir: ${'r'.repeat(3000)}}}\n`);
    expect(message!.length).toBeLessThan(800);
    expect(message).toMatch(/such as \/r+…, or leave it empty/);
  });

  it('bounds what it shows of a long value in its advice', () => {
    const [message] = errors(`podResourceInject: {namespacesExclude: "${'a'.repeat(3000)}"}\n`);
    expect(message!.length).toBeLessThan(800);
    expect(message).toMatch(/write a list: \[a+…\]$/);
  });
});
