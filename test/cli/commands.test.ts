import { readFileSync } from 'node:fs';
import { reviewText } from '../../src/cli/review-file.js';
import { validateConfigText } from '../../src/cli/validate-config.js';
import { reviewAdmission } from '../../src/admission/review.js';
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

  it('exits 2 with a one-line error for input that is not an AdmissionReview', () => {
    expect(reviewText('nope')).toEqual({ exitCode: 2, stdout: '', stderr: 'error: input is not valid JSON\n' });
    expect(reviewText('{}')).toMatchObject({ exitCode: 2, stderr: expect.stringMatching(/^error: not an admission\.k8s\.io\/v1 AdmissionReview: /) });
  });
});

describe('validate-config', () => {
  const conf = (timeout: string, serverUrl = 'http://p:80') => `iaasNetworkProvider:\n  serverUrl: ${serverUrl}\n  httpRequestTimeout: ${timeout}\n`;

  it('accepts a good conf.yml', () => {
    expect(validateConfigText(conf('55s'), 'spiderpool-conf')).toEqual({
      exitCode: 0,
      stdout: 'ConfigMap "spiderpool-conf": conf.yml is valid\n',
      stderr: '',
    });
  });

  it('refuses a bad conf.yml with the message the webhook gives', () => {
    const review = loadReview('configmap-update-timeout-100s');
    const { status, warnings } = reviewAdmission(review).response;
    const result = validateConfigText(review.request.object.data['conf.yml'], 'spiderpool-conf');
    expect(result).toEqual({ exitCode: 1, stdout: '', stderr: warnings!.map((w) => `Warning: ${w}\n`).join('') + status!.message + '\n' });
  });

  it('reads a ConfigMap manifest among other documents', () => {
    const manifest = [
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spiderpool-conf\n  namespace: kube-system\ndata:\n  conf.yml: |\n' +
        conf('2m').replace(/^/gm, '    '),
    ].join('\n---\n');
    const result = validateConfigText(manifest, 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "2m": is 2m0s/);
  });

  it('exits 2 when a manifest lacks the named ConfigMap', () => {
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata: {}\n';
    expect(validateConfigText(manifest, 'spiderpool-conf')).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: 'error: the manifest has no ConfigMap named "spiderpool-conf"\n',
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
    expect(result.stderr).toMatch(/^ConfigMap "spiderpool-conf" is invalid: .*Invalid value: "500s"/);
  });

  it('exits 2, not "valid", for a manifest that is not valid YAML', () => {
    const duplicateName = configMapYaml('spiderpool-conf', '500s').replace('  name: spiderpool-conf\n', '  name: spiderpool-conf\n  name: spiderpool-conf\n');
    expect(validateConfigText(duplicateName, 'spiderpool-conf')).toMatchObject({ exitCode: 2, stdout: '', stderr: expect.stringMatching(/^error: the manifest is not valid YAML: Map keys must be unique[^\n]*\n$/) });
    const aliases = `${configMapYaml('spiderpool-conf', '50s')}  x: &a [1]\n  y: [${Array(120).fill('*a').join(',')}]\n`.replace(/  x: /, 'extra:\n  x: ');
    expect(validateConfigText(aliases, 'spiderpool-conf')).toMatchObject({ exitCode: 2, stderr: expect.stringMatching(/^error: the manifest is not valid YAML: .*alias/i) });
  });

  it('prints warnings as kubectl does and still exits 0', () => {
    const result = validateConfigText(conf('100s', '""'), 'spiderpool-conf');
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/^Warning: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: "100s" is ignored while serverUrl and service.name are empty/);
  });

  it('refuses text that is not YAML with its line and column', () => {
    const result = validateConfigText('iaasNetworkProvider: [\n', 'spiderpool-conf');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]: Invalid value: not valid YAML: line \d+, column \d+: /);
  });
});
