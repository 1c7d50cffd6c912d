import { checkProviderSettings, httpRequestTimeoutProblem } from '../../src/spiderpool/conf-provider.js';
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';

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

  it.each([
    ['10', '10s'],
    ['1min', '1m'],
    ['50sec', '50s'],
    ['50 s', '50s'],
    ['55seconds', '55s'],
    ['1min20sec', '1m20s'],
  ])('suggests %j → %j, a unit Go knows', (value, suggestion) => {
    expect(httpRequestTimeoutProblem(value)!.advice).toMatch(new RegExp(`^did you mean "${suggestion}"\\? `));
  });

  it.each(['2min', '1d', '1hour'])('does not suggest what would be refused too (%j)', (value) => {
    expect(httpRequestTimeoutProblem(value)!.advice).not.toContain('did you mean');
  });
});

describe('the warning while the provider is off', () => {
  it.each(['100s', '2m', 'abc', '0s', '50', 'é'.repeat(300), 'x'.repeat(5000), `${'9'.repeat(400)}s`, '\u0007'.repeat(200)])(
    'stays one line under 256 characters for %j',
    (value) => {
      const [warning] = checkProviderSettings({ serverUrl: '', httpRequestTimeout: value }).warnings;
      expect(`data[conf.yml].${warning!.field}: ${warning!.message}`.length).toBeLessThan(256);
    },
  );
});

describe('PR #5778 provider shape: service {name, namespace, port}', () => {
  const service = (name: string, namespace: string, port: bigint) => ({ serverUrl: '', httpRequestTimeout: '', service: { name, namespace, port } });

  it('is enabled by service.name and then needs a namespace and a port 1-65535', () => {
    expect(checkProviderSettings(service('provider', 'kube-system', 80n)).errors).toEqual([]);
    expect(checkProviderSettings(service('provider', 'kube-system', 65535n)).errors).toEqual([]);
    const { errors } = checkProviderSettings(service('provider', '', 0n));
    expect(errors.map(fieldErrorString)).toEqual([
      expect.stringMatching(/^iaasNetworkProvider\.service\.namespace: Required value: the provider Service "provider" needs its namespace/),
      expect.stringMatching(/^iaasNetworkProvider\.service\.port: Invalid value: "0": must be a port between 1 and 65535/),
    ]);
    expect(checkProviderSettings(service('provider', 'ns', 65536n)).errors.map(fieldErrorString)).toEqual([
      expect.stringMatching(/service\.port: Invalid value: "65536"/),
    ]);
  });

  it('keeps the httpRequestTimeout rules', () => {
    const settings = { ...service('provider', 'ns', 80n), httpRequestTimeout: '100s' };
    expect(checkProviderSettings(settings).errors.map(fieldErrorString)).toEqual([expect.stringMatching(/httpRequestTimeout: Invalid value: "100s"/)]);
    // Off (no serverUrl, no service.name): only a warning.
    expect(checkProviderSettings({ ...settings, service: { name: '', namespace: '', port: 0n } })).toMatchObject({
      errors: [],
      warnings: [{ field: 'iaasNetworkProvider.httpRequestTimeout' }],
    });
  });
});

describe('provider disabled (serverUrl empty)', () => {
  it('allows a bad timeout with a warning that names the value and the limit', () => {
    const { errors, warnings } = checkProviderSettings({ serverUrl: '', httpRequestTimeout: '100s' });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      {
        field: 'iaasNetworkProvider.httpRequestTimeout',
        message: expect.stringMatching(/^"100s" is ignored while serverUrl and service.name are empty, .*: it is 1m40s, must be less than 100s/),
      },
    ]);
  });

  it('says nothing about a good timeout', () => {
    expect(checkProviderSettings({ serverUrl: '', httpRequestTimeout: '50s' })).toEqual({ errors: [], warnings: [] });
  });
});

describe("serverUrl, when set (parsed as Go's url.Parse parses it)", () => {
  it.each([
    'http://provider:80',
    'https://provider.example.com/api',
    'http://10.0.0.1:8080',
    'http://[fd00::1]:80',
    'HTTP://Provider', // Go lower-cases the scheme
    'http://provider:99999', // Go checks only that the port is digits
    'http://provider/a b', // spaces are fine in a Go path
    'http://user:pass@provider',
    // ValidateConfig checks only that URL.Host is not empty, and ":80" is a host.
    'http://:80',
    'https://:',
    'http://u@:80',
    // Go 1.25 (Spiderpool's images) takes the port after the last colon; Go 1.26 refuses.
    'http://h:80:80',
    'http://h:80:90',
  ])('accepts %j', (serverUrl) => {
    expect(checkProviderSettings({ serverUrl, httpRequestTimeout: '' }).errors).toEqual([]);
  });

  it.each([
    ['ftp://provider', 'must be an http:// or https:// URL'],
    ['provider:80', 'must be an http:// or https:// URL'],
    ['http://', 'has no host'],
    ['http:///path', 'has no host'],
    ['http://u@', 'has no host'],
    ['http://u@/x', 'has no host'],
    ['not a url', 'must be an http:// or https:// URL'],
    [' http://provider', 'is not a URL Go can parse (parse " http://provider": first path segment in URL cannot contain colon)'],
    ['http://pro vider', 'is not a URL Go can parse (parse "http://pro vider": invalid character " " in host name)'],
    ['http://h\\x', 'is not a URL Go can parse (parse "http://h\\\\x": invalid character "\\\\" in host name)'],
    ['http://h/%zz', 'is not a URL Go can parse (parse "http://h/%zz": invalid URL escape "%zz")'],
    ['https://h#%zz', 'is not a URL Go can parse (parse "https://h#%zz": invalid URL escape "%zz")'],
    ['http://h:8o', 'is not a URL Go can parse (parse "http://h:8o": invalid port ":8o" after host)'],
    ['http://h:80:x', 'is not a URL Go can parse (parse "http://h:80:x": invalid port ":x" after host)'],
    ['http://[1.2.3.4]', 'is not a URL Go can parse (parse "http://[1.2.3.4]": invalid IP-literal)'],
    ['http://h\t', 'is not a URL Go can parse (parse "http://h\\t": net/url: invalid control character in URL)'],
  ])('refuses %j: %s', (serverUrl, why) => {
    const { errors } = checkProviderSettings({ serverUrl, httpRequestTimeout: '' });
    expect(errors.map((e) => e.field)).toEqual(['iaasNetworkProvider.serverUrl']);
    expect(errors[0]!.detail.startsWith(`${why}, so Spiderpool's agent and controller refuse to start with it; `)).toBe(true);
  });

  it('reports a bad URL and a bad timeout together', () => {
    const { errors } = checkProviderSettings({ serverUrl: 'ftp://x', httpRequestTimeout: '2m' });
    expect(errors.map((e) => e.field)).toEqual(['iaasNetworkProvider.serverUrl', 'iaasNetworkProvider.httpRequestTimeout']);
  });
});
