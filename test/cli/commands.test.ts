import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { reviewText } from '../../src/cli/review-file.js';
import { validateConfigText } from '../../src/cli/validate-config.js';
import { reviewAdmission } from '../../src/rules/registry.js';
import { loadReview } from '../fixtures/load.js';

const fixtureText = (name: string) => readFileSync(new URL(`../fixtures/reviews/${name}.json`, import.meta.url), 'utf8');

describe('review', () => {
  it('prints the same response AdmissionReview as the server and exits 1 when denied', () => {
    const result = reviewText(fixtureText('pool-update-node-to-global'));
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual(reviewAdmission(loadReview('pool-update-node-to-global')));
  });

  it('exits 0 when allowed', () => {
    expect(reviewText(fixtureText('pool-update-node-to-other-node')).exitCode).toBe(0);
  });

  it("names a missing request.kind as it names a missing request.uid, in no schema library's words", () => {
    const result = reviewText(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x' } }));
    expect(result).toEqual({ exitCode: 2, stdout: '', stderr: 'error: not an admission.k8s.io/v1 AdmissionReview: request.kind: is required (an object)\n' });
  });

  it('exits 2 with a one-line error for input that is not an AdmissionReview', () => {
    expect(reviewText('nope')).toEqual({ exitCode: 2, stdout: '', stderr: 'error: input is not valid JSON\n' });
    expect(reviewText('{}')).toMatchObject({ exitCode: 2, stderr: expect.stringMatching(/^error: not an admission\.k8s\.io\/v1 AdmissionReview: /) });
  });
});

describe('validate-config', () => {
  it.each([
    ['an empty file', '', /^error: the input is empty \(no YAML document\); give conf\.yml, or a manifest with Spiderpool's ConfigMap "spiderpool-conf"\n$/],
    ['blanks and comments only', '\n# nothing here\n\n', /^error: the input is empty \(no YAML document, only blanks or comments\); /],
  ])('exit 2 for %s: a failed kubectl get > file must not pass a CI gate', (_what, text, message) => {
    expect(validateConfigText(text, 'spiderpool-conf')).toEqual({ exitCode: 2, stdout: '', stderr: expect.stringMatching(message) });
  });

  it('an empty mapping is a conf.yml (every setting at its default), not empty input', () => {
    expect(validateConfigText('{}\n', 'spiderpool-conf').exitCode).toBe(0);
  });

  const conf = (timeout: string, serverUrl = 'http://p:80') => `iaasNetworkProvider:\n  serverUrl: ${serverUrl}\n  httpRequestTimeout: ${timeout}\n`;

  it('accepts a good conf.yml', () => {
    expect(validateConfigText(conf('55s'), 'spiderpool-conf')).toEqual({
      exitCode: 0,
      stdout: "Spiderpool's agent and controller would start with this conf.yml\n",
      stderr: '',
    });
  });

  it('refuses a bad conf.yml with the message the webhook gives', () => {
    const review = loadReview('configmap-update-timeout-100s');
    const { status, warnings } = reviewAdmission(review).response;
    const result = validateConfigText(review.request.object.data['conf.yml'], 'spiderpool-conf');
    expect(result).toEqual({ exitCode: 1, stdout: '', stderr: `${(warnings ?? []).map((w) => `Warning: ${w}\n`).join('')}The ${status!.message}\n` });
  });

  it('prints several causes one per line, in the order of conf.yml, as kubectl prints an Invalid status; -o names the object', () => {
    const text = 'iaasNetworkProvider:\n  httpRequestTimeout: "3m"\n  serverUrl: "http://"\n';
    const result = validateConfigText(text, 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr.split('\n').map((line) => line.slice(0, 70))).toEqual([
      'The ConfigMap "spiderpool-conf" is invalid: ',
      '* data[conf.yml].iaasNetworkProvider.httpRequestTimeout: Invalid value',
      '* data[conf.yml].iaasNetworkProvider.serverUrl: Invalid value: "http:/',
      '',
    ]);
    for (const output of ['json', 'yaml'] as const) {
      const printed = validateConfigText(text, 'spiderpool-conf', undefined, output);
      expect(printed.exitCode).toBe(1);
      expect(printed.stderr).toBe('');
      const verdict = output === 'json' ? JSON.parse(printed.stdout) : parse(printed.stdout);
      expect(verdict).toMatchObject({ kind: 'ConfigMap', name: 'spiderpool-conf', allowed: false });
      expect(verdict.causes.map((c: { field: string }) => c.field)).toEqual([
        'data[conf.yml].iaasNetworkProvider.httpRequestTimeout',
        'data[conf.yml].iaasNetworkProvider.serverUrl',
      ]);
    }
  });

  it('reads a ConfigMap manifest among other documents', () => {
    const manifest = [
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spiderpool-conf\n  namespace: kube-system\ndata:\n  conf.yml: |\n' +
        conf('2m').replace(/^/gm, '    '),
    ].join('\n---\n');
    const result = validateConfigText(manifest, 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /^The ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "2m": is 2m0s/,
    );
  });

  it('exits 2 when a manifest lacks the named ConfigMap', () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata: {}\n';
    expect(validateConfigText(manifest, 'spiderpool-conf')).toEqual({
      exitCode: 2,
      stdout: '',
      stderr:
        'error: the manifest has no ConfigMap named "spiderpool-conf" (found ConfigMap "other" (no data keys)); pass --configmap-name to check one of another name\n',
    });
  });

  it('counts the objects of a manifest without its empty documents (review2: a trailing --- was one more object)', () => {
    expect(validateConfigText('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n', 'spiderpool-conf').stderr).toContain(
      '(found one object and no ConfigMap)',
    );
  });

  it('reads a List of 150 000 items without overflowing the call stack (review2: they were spread into one call)', () => {
    const items = Array.from({ length: 150_000 }, () => ({ apiVersion: 'v1', kind: 'Namespace' }));
    const result = validateConfigText(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), 'spiderpool-conf');
    expect(result).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('(found 150000 objects and no ConfigMap)') });
  });

  it('names the data keys of the named ConfigMap when it has no conf.yml', () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spiderpool-conf\ndata:\n  config.yaml: x\n  conf.yaml: y\n';
    const result = validateConfigText(manifest, 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /is invalid: data\[conf\.yml\]: Required value: .*\n\(found ConfigMap "spiderpool-conf" \(data keys: config\.yaml, conf\.yaml\)\)\n$/,
    );
  });

  it('names the field of a ConfigMap that is not one, as the webhook does (found by hostile testing)', () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spiderpool-conf\ndata:\n  conf.yml: 5\n';
    expect(validateConfigText(manifest, 'spiderpool-conf')).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: 'error: not a ConfigMap: data[conf.yml]: must be a string, not a number\n',
    });
  });

  it('on success says what it checked, with the ConfigMap it read from a manifest', () => {
    const manifest = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spiderpool-conf\ndata:\n  conf.yml: |\n    enableIPv4: true\n`;
    expect(validateConfigText(manifest, 'spiderpool-conf')).toEqual({
      exitCode: 0,
      stdout: `ConfigMap "spiderpool-conf": Spiderpool's agent and controller would start with this conf.yml\n`,
      stderr: '',
    });
  });

  it.each([
    [
      'enableIPv6: "true"\n',
      /data\[conf\.yml\]\.enableIPv6: Invalid value: "true": line 1, column 13: cannot unmarshal !!str `true` into bool, so Spiderpool's agent \(gopkg\.in\/yaml\.v3\) and controller \(gopkg\.in\/yaml\.v2\) refuse to start; write true without quotes/,
    ],
    [
      'podResourceInject:\n  namespacesExclude: kube-system\n',
      /data\[conf\.yml\]\.podResourceInject\.namespacesExclude: Invalid value: "kube-system": line 2, column 22: cannot unmarshal !!str `kube-sy\.\.\.` into \[\]string, .*; write a list: \[kube-system\]/,
    ],
    [
      'agent:\n  networkResourcePlugin:\n    kubeletRootDir: var/lib/kubelet\n',
      /data\[conf\.yml\]\.agent\.networkResourcePlugin\.kubeletRootDir: Invalid value: "var\/lib\/kubelet": must be an absolute path, so Spiderpool's agent and controller refuse to start; write it from the root, such as \/var\/lib\/kubelet/,
    ],
  ])('refuses the issue example %j', (text, pattern) => {
    const result = validateConfigText(text, 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(pattern);
  });

  it.each([
    [
      'iaasNetworkProvider:\n  httpRequestTimeOut: "500s"\n',
      'Warning: data[conf.yml].iaasNetworkProvider.httpRequestTimeOut: is not a key Spiderpool reads (keys are case-sensitive): it is ignored; did you mean httpRequestTimeout?\n',
    ],
    [
      'agent:\n  networkResourcePlugin:\n    devicePluginAffinity:\n      nodeSelector:\n        matchLabels: {kubernetes.io/os: linux}\n',
      'Warning: data[conf.yml].agent.networkResourcePlugin.devicePluginAffinity.nodeSelector.matchLabels: is dropped: Spiderpool reads label selector fields in lower case (matchlabels), so this selector selects every node; write matchlabels\n',
    ],
  ])('allows with a warning the issue example %j', (text, warning) => {
    expect(validateConfigText(text, 'spiderpool-conf')).toEqual({
      exitCode: 0,
      stdout: "Spiderpool's agent and controller would start with this conf.yml\n",
      stderr: warning,
    });
  });

  const configMapYaml = (name: string, timeout: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: kube-system\ndata:\n  conf.yml: |\n${conf(timeout).replace(/^/gm, '    ')}`;

  it('checks ConfigMaps inside a List, as kubectl get -o yaml prints several objects', () => {
    const list = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: other
  data:
    conf.yml: |
      iaasNetworkProvider:
        serverUrl: http://p:80
        httpRequestTimeout: 500s
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: spiderpool-conf
    namespace: kube-system
  data:
    conf.yml: |
      iaasNetworkProvider:
        serverUrl: http://p:80
        httpRequestTimeout: 500s
`;
    const result = validateConfigText(list, 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^The ConfigMap "spiderpool-conf" is invalid: .*Invalid value: "500s"/);
  });

  it('exits 2, not "valid", for a manifest that is not valid YAML', () => {
    const duplicateName = configMapYaml('spiderpool-conf', '500s').replace('  name: spiderpool-conf\n', '  name: spiderpool-conf\n  name: spiderpool-conf\n');
    expect(validateConfigText(duplicateName, 'spiderpool-conf')).toMatchObject({
      exitCode: 2,
      stdout: '',
      stderr: expect.stringMatching(/^error: the manifest is not valid YAML: line \d+, column \d+: Map keys must be unique\n$/),
    });
    const aliases = `${configMapYaml('spiderpool-conf', '50s')}  x: &a [1]\n  y: [${Array(120).fill('*a').join(',')}]\n`.replace(/ {2}x: /, 'extra:\n  x: ');
    expect(validateConfigText(aliases, 'spiderpool-conf')).toMatchObject({
      exitCode: 2,
      stderr: expect.stringMatching(/^error: the manifest is not valid YAML: .*alias/i),
    });
  });

  it('prints warnings as kubectl does and still exits 0', () => {
    const result = validateConfigText(conf('100s', '""'), 'spiderpool-conf');
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(
      /^Warning: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: "100s" is ignored while serverUrl and service.name are empty/,
    );
  });

  it('prints each warning once across the ConfigMaps of a manifest, as kubectl does', () => {
    const ignored = (namespace: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spiderpool-conf\n  namespace: ${namespace}\ndata:\n  conf.yml: |\n    iaasNetworkProvider:\n      httpRequestTimeout: 100s\n`;
    const result = validateConfigText(`${ignored('a')}---\n${ignored('b')}`, 'spiderpool-conf');
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    expect(result.stderr.match(/^Warning: /gm)).toHaveLength(1);
  });

  it('refuses text that is not YAML with its line and column', () => {
    const result = validateConfigText('iaasNetworkProvider: [\n', 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^The ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]: Invalid value: not valid YAML: line \d+, column \d+: /);
  });
});
