import { readConfYml } from '../../src/config/conf-yml.js';
import { fieldErrorString } from '../../src/field/errors.js';

// libyaml's is_break takes LS (U+2028) and PS (U+2029) for line breaks (both Go decoders
// read the documents below, checked against yaml.v2/v3 in the go-oracle corpus); this
// webhook reads them only inside a quoted value between two other characters.
const P = 'iaasNetworkProvider';

describe('an LS or PS outside a quoted value: refused as this webhook’s own limit, truthfully (found by review against yaml.v2/v3)', () => {
  it.each([
    ['after a key', `${P}:\u2028  httpRequestTimeout: 5s\n`, 'line 1, column 21: contains U+2028 (LINE SEPARATOR)'],
    ['ending the text', `${P}:\n  httpRequestTimeout: 5s\u2029`, 'line 2, column 25: contains U+2029 (PARAGRAPH SEPARATOR)'],
    ['in a plain value', `${P}:\n  httpRequestTimeout: 5\u2028    s\n`, 'line 2, column 24: contains U+2028'],
    ['in a flow mapping', `${P}: {httpRequestTimeout: 5s,\u2029serverUrl: x}\n`, 'line 1, column 46: contains U+2029'],
  ])('%s', (_what, text, where) => {
    const reading = readConfYml(text);
    expect(reading.ok).toBe(false);
    const message = reading.ok ? '' : reading.errors.map(fieldErrorString).join('\n');
    expect(message).toContain(where);
    expect(message).toMatch(/refused by this webhook's own limit, not by Spiderpool, whose decoders read the character; write a line break \(or a space\) instead of it$/);
    // Go decodes these: the message must not say Spiderpool cannot.
    expect(message).not.toMatch(/cannot decode|refuse to start/);
  });

  it('still says Spiderpool cannot decode a control character met before it', () => {
    const reading = readConfYml(`${P}:\n  httpRequestTimeout: "\u0001"\u2028\n`);
    expect(reading.ok ? '' : reading.errors.map(fieldErrorString).join()).toMatch(/U\+0001, a control character.*cannot decode it/);
  });

  it('reads one inside a quoted value between two other characters', () => {
    const reading = readConfYml(`${P}:\n  httpRequestTimeout: "5\u2028s"\n`);
    expect(reading.ok && reading.provider.httpRequestTimeout).toBe('5\u2028s');
  });
});
