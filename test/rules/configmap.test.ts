import { reviewAdmission } from '../../src/rules/registry.js';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { loadReview } from '../fixtures/load.js';

function review(input: unknown, options?: Parameters<typeof reviewAdmission>[1]) {
  return AdmissionReviewResponseSchema.parse(reviewAdmission(input, options)).response;
}

/** The fixture ConfigMap UPDATE with `httpRequestTimeout` written as `line` (undefined: absent). */
function withTimeout(line: string | undefined, serverUrl = 'http://iaas-network-provider.kube-system.svc:80') {
  const input = loadReview('configmap-update-timeout-50s');
  const conf = ['enableIPv4: true', 'iaasNetworkProvider:', `  serverUrl: "${serverUrl}"`];
  if (line !== undefined) conf.push(`  httpRequestTimeout: ${line}`);
  input.request.object.data['conf.yml'] = `${conf.join('\n')}\n`;
  return input;
}

const FIELD = 'data[conf.yml].iaasNetworkProvider.httpRequestTimeout';

describe('ConfigMap spiderpool-conf: httpRequestTimeout at every boundary', () => {
  it.each([['""'], [undefined], ['1ns'], ['50s'], ['59s'], ['99.999999999s'], ['1m39.999s'], ['~']])('allows %s', (line) => {
    expect(review(withTimeout(line))).toEqual({ uid: expect.any(String), allowed: true });
  });

  it.each([
    ['0s', '"0s": is 0s, must be greater than 0'],
    ['-1s', '"-1s": is -1s, must be greater than 0'],
    ['50', '"50": is not a Go duration (time: missing unit in duration "50")'],
    ['abc', '"abc": is not a Go duration (time: invalid duration "abc")'],
    ['1e3s', '"1e3s": is not a Go duration (time: unknown unit "e" in duration "1e3s")'],
    ['1m40s', '"1m40s": is 1m40s, must be less than 100s'],
    ['100s', '"100s": is 1m40s, must be less than 100s'],
    ['2m', '"2m": is 2m0s, must be less than 2m'],
  ])('refuses %s with the value, its parsed form and the limit', (value, expected) => {
    const response = review(withTimeout(`"${value}"`));
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(response.status!.details).toMatchObject({ group: '', kind: 'ConfigMap', name: 'spiderpool-conf' });
    expect(response.status!.details!.causes).toEqual([
      { reason: 'FieldValueInvalid', field: FIELD, message: expect.stringContaining(`Invalid value: ${expected}`) },
    ]);
    expect(response.status!.message).toMatch(new RegExp(`^ConfigMap "spiderpool-conf" is invalid: ${FIELD.replace(/[[\].]/g, '\\$&')}: Invalid value: `));
  });

  it('judges an unquoted number by its text', () => {
    expect(review(withTimeout('50')).status!.details!.causes[0]!.message).toContain('Invalid value: "50": is not a Go duration');
  });
});

describe('ConfigMap spiderpool-conf: fixtures', () => {
  it('refuses 100s', () => {
    const input = loadReview('configmap-update-timeout-100s');
    const response = review(input);
    expect(response.uid).toBe(input.request.uid);
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toContain(`${FIELD}: Invalid value: "100s": is 1m40s, must be less than 100s`);
  });

  it.each(['configmap-update-other-name', 'configmap-delete'])('%s is allowed without warnings', (name) => {
    expect(review(loadReview(name))).toEqual({ uid: expect.any(String), allowed: true });
  });

  it.each(['configmap-update-timeout-50s', 'configmap-create-timeout-absent'])(
    '%s (written by the chart, SpiderSubnet off) is allowed without a word about the chart-only key: nothing to change',
    (name) => {
      expect(review(loadReview(name))).toEqual({ uid: expect.any(String), allowed: true });
    },
  );

  it('allows a bad timeout while the provider is disabled, with a warning', () => {
    const response = review(loadReview('configmap-update-disabled-bad-timeout'));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringMatching(
        /^data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: "abc" is ignored while serverUrl and service.name are empty, but Spiderpool will refuse to start once the IaaS provider is enabled: it is not a Go duration/,
      ),
    ]);
  });

  it('refuses a ConfigMap without conf.yml', () => {
    const input = loadReview('configmap-create-timeout-absent');
    input.request.object.data = { 'other.yml': '' };
    expect(review(input).status!.details!.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'data[conf.yml]', message: expect.stringMatching(/^Required value: /) },
    ]);
  });

  it('refuses YAML Spiderpool cannot decode, whatever serverUrl says', () => {
    const input = loadReview('configmap-create-timeout-absent');
    input.request.object.data['conf.yml'] = 'iaasNetworkProvider:\n  serverUrl: ""\n  httpRequestTimeout: [50s]\n';
    expect(review(input).status!.details!.causes[0]!.field).toBe('data[conf.yml].iaasNetworkProvider.httpRequestTimeout');
  });
});

describe('ConfigMap name and namespace', () => {
  it('guards another name when configured, and leaves spiderpool-conf alone then', () => {
    const other = loadReview('configmap-update-timeout-100s');
    other.request.object.metadata.name = 'my-spiderpool-conf';
    const options = { configMap: { name: 'my-spiderpool-conf' } };
    expect(review(other, options).allowed).toBe(false);
    expect(review(loadReview('configmap-update-timeout-100s'), options).allowed).toBe(true);
  });

  it('guards only the configured namespace when one is given', () => {
    const input = loadReview('configmap-update-timeout-100s');
    expect(review(input, { configMap: { name: 'spiderpool-conf', namespace: 'kube-system' } }).allowed).toBe(false);
    expect(review(input, { configMap: { name: 'spiderpool-conf', namespace: 'spiderpool' } }).allowed).toBe(true);
  });

  it('gives dryRun requests the same decision', () => {
    const input = loadReview('configmap-update-timeout-100s');
    const real = review(input);
    input.request.dryRun = true;
    expect(review(input)).toEqual(real);
  });
});

describe('warnings about hostile keys (found by hostile testing of the served webhook)', () => {
  const warnings = (confYml: string) => {
    const input = loadReview('configmap-update-timeout-50s');
    input.request.object.data['conf.yml'] = confYml;
    return review(input).warnings ?? [];
  };

  it.each([
    ['an escape character and a tab', '"key\\e\\t": 1\n', 'data[conf.yml].key\\x1b\\t: '],
    ['a carriage return in a nested key', 'agent:\n  "x\\ry": 1\n', 'data[conf.yml].agent.x\\ry: '],
    ['a YAML next-line (U+0085)', '"a\\Nb": 1\n', 'data[conf.yml].a\\u0085b: '],
    [
      'a bell inside a label selector',
      'agent: {networkResourcePlugin: {devicePluginAffinity: {nodeSelector: {"matchExpressions\\a": []}}}}\n',
      'nodeSelector.matchExpressions\\a: ',
    ],
  ])('names a key with %s escaped, on one line', (_what, confYml, shown) => {
    const [warning] = warnings(confYml);
    expect(warning).toContain(shown);
    expect(warning).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
  });
});
