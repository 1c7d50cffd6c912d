/**
 * parseGoUrl (src/go/url.ts) against Go's own url.Parse, through the Go oracle:
 * a corpus of serverUrl-like values and 50 000 generated ones per run, same verdict,
 * same scheme and host, or the same error text.
 */
import fc from 'fast-check';
import { parseGoUrl } from '../../src/go/url.js';
import { askUrls, disposeOracle, type UrlAnswer } from './oracle.js';
import { differentialSeed } from './seed.js';

const SEED = differentialSeed('ORACLE_SEED');

afterAll(disposeOracle);

/** netip.ParseAddr's wording after "invalid host: " is not reproduced, only the verdict. */
const withoutAddrDetail = (error: string | undefined) => error?.replace(/(: invalid host: ).*$/, '$1…');

function mismatch(input: string, go: UrlAnswer): string | undefined {
  const ours = parseGoUrl(input);
  const same = ours.ok
    ? go.ok && ours.scheme === (go.scheme ?? '') && ours.host === (go.host ?? '')
    : !go.ok && withoutAddrDetail(ours.error) === withoutAddrDetail(go.error);
  return same ? undefined : `${JSON.stringify(input)}\n  Go:   ${JSON.stringify(go)}\n  ours: ${JSON.stringify(ours)}`;
}

async function expectAgreement(inputs: string[]): Promise<void> {
  const answers = await askUrls(inputs);
  const mismatches = inputs.map((input, i) => mismatch(input, answers[i]!)).filter((m): m is string => m !== undefined);
  if (mismatches.length > 0) {
    throw new Error(`${mismatches.length} of ${inputs.length} disagree with Go (seed ${SEED}):\n${mismatches.slice(0, 20).join('\n')}`);
  }
}

const CORPUS = [
  'http://iaas-network-provider.kube-system.svc:80',
  'https://provider.example.com/api/v1?x=1#top',
  'HTTP://Provider',
  'http://10.0.0.1:8080',
  'http://[fd00::1]:80',
  'http://[fd00::1%25eth0]:80',
  'http://[fd00::1',
  'http://[::1]x',
  'http://user:pa%20ss@h',
  'http://us er@h',
  'http://u@v@h',
  'http://h:99999',
  'http://h:',
  'http://:80',
  'http://h:80:90/',
  'http://h:8o',
  'http://h\\x',
  'http://h/%zz',
  'http://h/%4',
  'https://h#%zz',
  'http://h?%zz',
  'http://h/a b',
  'http://h%41',
  'http://h%C3%A9',
  'http://h%25',
  'http://hé/',
  'http://h^',
  'http://h{}',
  'http://h|',
  'http://h`',
  "http://h'()*+,;=!$&",
  'http://h<>"',
  'http://h\t',
  'http://h\u007f',
  'http://h\u0000',
  ' http://h',
  'http:h',
  'http:/h',
  'http:///h',
  '//h/p',
  '///h/p',
  'h:80',
  'a:b/c',
  'a/b:c',
  ':80',
  '',
  '*',
  '1http://h',
  'ht tp://h',
  'http://',
  'https://h#',
  'http://h?',
  'http://h?a?b',
  'http://h#a#b',
  'mailto:x@y',
  'http://h/\u00e9',
  'http://h/%e9',
  'http://\u00e9%41',
  '//[]',
  '//[$]',
  '//%:http-%@=ftp',
  'http://u%:p%41@h',
  'http://u:%zz@h',
];

describe('parseGoUrl agrees with Go url.Parse', () => {
  it('on a corpus of serverUrl-like values', async () => {
    await expectAgreement(CORPUS);
  });

  it('on 50 000 generated values', async () => {
    const piece = fc.constantFrom(
      'http',
      'https',
      'HTTP',
      'ftp',
      ':',
      '//',
      '/',
      '?',
      '#',
      '@',
      '[',
      ']',
      '%',
      '%2',
      '%25',
      '%41',
      '%e9',
      '%zz',
      'h',
      'host',
      '.',
      '-',
      '_',
      '~',
      '80',
      '99999',
      'fd00::1',
      ' ',
      '\t',
      '\\',
      '^',
      '{',
      '|',
      '`',
      "'",
      '"',
      '<',
      '!',
      '$',
      '&',
      '=',
      '+',
      ',',
      ';',
      '*',
      'é',
      '\u007f',
      'a',
      'Z',
      '0',
    );
    const inputs = fc.sample(
      fc.array(piece, { maxLength: 12 }).map((p) => p.join('')),
      { numRuns: 50_000, seed: SEED },
    );
    await expectAgreement(inputs);
  });
});
