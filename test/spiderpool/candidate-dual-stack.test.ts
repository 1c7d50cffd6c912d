import { enableIPv6Of } from '../../src/spiderpool/candidate-dual-stack.js';

describe('enableIPv6Of: conf.yml read as the Go decoders read a bool', () => {
  test.each([
    ['enableIPv6: true\n', true],
    ['enableIPv6: True\n', true],
    ['enableIPv6: TRUE\n', true],
    ['enableIPv6: yes\n', true],
    ['enableIPv6: on\n', true],
    ['enableIPv6: y\n', true],
    ['enableIPv6: Y\n', true],
    ['enableIPv6: false\n', false],
    ['enableIPv6: no\n', false],
    ['enableIPv6: off\n', false],
    ['enableIPv6: n\n', false],
    ['enableIPv6:\n', false],
    ['enableIPv6: ~\n', false],
    ['enableIPv6: null\n', false],
    ['enableIPv4: true\n', false],
    ['', false],
    ['# only a comment\n', false],
    ['enableIPv6: true\n---\nenableIPv6: false\n', true],
    ['EnableIPv6: true\n', false], // another key: ignored
  ])('%j → %j', (text, value) => {
    expect(enableIPv6Of(text)).toEqual({ ok: true, enableIPv6: value });
  });

  test.each([
    ['enableIPv6: "true"\n'],
    ["enableIPv6: 'true'\n"],
    ['enableIPv6: 1\n'],
    ['enableIPv6: [true]\n'],
    ['enableIPv6: maybe\n'],
    ['enableIPv6: true\nenableIPv6: false\n'], // yaml.v3 (the agent) refuses duplicate keys
    ['- enableIPv6\n'],
    ['enableIPv6: [\n'],
  ])('%j gives no value', (text) => {
    expect(enableIPv6Of(text)).toEqual({ ok: false, reason: expect.any(String) });
  });
});
