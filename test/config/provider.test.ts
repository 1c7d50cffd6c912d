import { checkProviderSettings, httpRequestTimeoutProblem } from '../../src/config/provider.js';
import { fieldErrorString } from '../../src/field/errors.js';

const enabled = 'http://iaas-network-provider.example.svc:80';

describe('httpRequestTimeout boundaries (0 < d < 2m and d < 100s; empty means 50s)', () => {
  it.each([
    ['', 'empty means the default 50s'],
    ['1ns', 'the smallest positive duration'],
    ['50s', 'the default'],
    ['59s', 'the upper end of the recommended range'],
    ['1m', ''],
    ['1.5m', ''],
    ['500ms', ''],
    ['99.999999999s', 'one nanosecond under 100s'],
    ['1m39.999s', ''],
    ['+50s', 'Go accepts a leading plus'],
  ])('accepts %j %s', (value) => {
    expect(httpRequestTimeoutProblem(value)).toBeUndefined();
    expect(checkProviderSettings({ serverUrl: enabled, httpRequestTimeout: value })).toEqual({ errors: [], warnings: [] });
  });

  it.each([
    ['0s', 'is 0s, must be greater than 0'],
    ['0', 'is 0s, must be greater than 0'],
    ['-1s', 'is -1s, must be greater than 0'],
    ['1m40s', 'is 1m40s, must be less than 100s'],
    ['100s', 'is 1m40s, must be less than 100s'],
    ['119.999s', 'is 1m59.999s, must be less than 100s'],
    ['2m', 'is 2m0s, must be less than 2m (the static limit'],
    ['1h', 'is 1h0m0s, must be less than 2m'],
    ['50', 'is not a Go duration (time: missing unit in duration "50")'],
    ['abc', 'is not a Go duration (time: invalid duration "abc")'],
    ['1e3s', 'is not a Go duration (time: unknown unit "e" in duration "1e3s")'],
    ['50 s', 'is not a Go duration (time: unknown unit " s" in duration "50 s")'],
    ['50s\n', 'is not a Go duration (time: unknown unit "s\\x0a" in duration "50s\\x0a")'],
  ])('refuses %j: %s', (value, why) => {
    const { errors, warnings } = checkProviderSettings({ serverUrl: enabled, httpRequestTimeout: value });
    expect(warnings).toEqual([]);
    expect(errors).toHaveLength(1);
    const message = fieldErrorString(errors[0]!);
    expect(message.startsWith(`iaasNetworkProvider.httpRequestTimeout: Invalid value: ${JSON.stringify(value)}: ${why}`)).toBe(true);
    expect(message).toContain("so Spiderpool's agent and controller refuse to start with it");
    expect(message).not.toContain('\n');
  });

  it('suggests the unit a bare number lacks', () => {
    expect(httpRequestTimeoutProblem('50')!.advice).toMatch(/^did you mean "50s"\? /);
    expect(httpRequestTimeoutProblem('abc')!.advice).not.toContain('did you mean');
    // "100s" would be refused too: no hint that leads to another refusal.
    expect(httpRequestTimeoutProblem('100')!.advice).not.toContain('did you mean');
  });
});

describe('provider disabled (serverUrl empty)', () => {
  it('allows a bad timeout with a warning that names the value and the limit', () => {
    const { errors, warnings } = checkProviderSettings({ serverUrl: '', httpRequestTimeout: '100s' });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      {
        field: 'iaasNetworkProvider.httpRequestTimeout',
        message: expect.stringMatching(/^"100s" is ignored while serverUrl is empty, .*: it is 1m40s, must be less than 100s/),
      },
    ]);
  });

  it('says nothing about a good timeout', () => {
    expect(checkProviderSettings({ serverUrl: '', httpRequestTimeout: '50s' })).toEqual({ errors: [], warnings: [] });
  });
});

describe('serverUrl, when set', () => {
  it.each(['http://provider:80', 'https://provider.example.com/api', 'http://10.0.0.1:8080', 'http://[fd00::1]:80'])(
    'accepts %j',
    (serverUrl) => {
      expect(checkProviderSettings({ serverUrl, httpRequestTimeout: '' }).errors).toEqual([]);
    },
  );

  it.each(['ftp://provider', 'provider:80', 'http://', 'http:///path', ' http://provider', 'http://pro vider', 'not a url'])(
    'refuses %j',
    (serverUrl) => {
      const { errors } = checkProviderSettings({ serverUrl, httpRequestTimeout: '' });
      expect(errors.map((e) => e.field)).toEqual(['iaasNetworkProvider.serverUrl']);
      expect(errors[0]!.detail).toMatch(/^must be an http:\/\/ or https:\/\/ URL with a host/);
    },
  );

  it('reports a bad URL and a bad timeout together', () => {
    const { errors } = checkProviderSettings({ serverUrl: 'ftp://x', httpRequestTimeout: '2m' });
    expect(errors.map((e) => e.field)).toEqual(['iaasNetworkProvider.serverUrl', 'iaasNetworkProvider.httpRequestTimeout']);
  });
});
