/**
 * A U+FEFF at the start of libyaml's read buffer (src/yaml-go/libyaml-bom.ts): the scanner
 * then skips the character at column 0 of each line until the reader's next chunk. Every
 * expected error text and value is what gopkg.in/yaml.v2 v2.4.0 and yaml.v3 v3.0.1 printed
 * for the same text (the e2e oracle, test/e2e/oracle, into Spiderpool's conf.yml struct).
 */
import type { StructType } from '../../src/yaml-go/go-types.js';
import { unmarshal } from '../../src/yaml-go/unmarshal.js';

const P = 'iaasNetworkProvider';
const T: StructType = {
  go: 'struct',
  name: 'main.Conf',
  fields: { [P]: { go: 'struct', name: 'main.Provider', fields: { httpRequestTimeout: { go: 'string' } } } },
};

/** `before`, then `bom` (U+FEFF) with its first byte at byte `byte` (509: the first 512-byte chunk's last character), then `after`, behind a comment. */
const at = (before: string, after: string, byte = 509, bom = '\uFEFF') => `#${'x'.repeat(byte - Buffer.byteLength(before) - 2)}\n${before}${bom}${after}`;
const HEAD = `a: 1\n${P}:\n  "xxxx`;
const TAIL = `y": 1\n  httpRequestTimeout: 5s\n`;

const read = (text: string) => {
  const { v2, v3 } = unmarshal(text, T);
  const value = (d: typeof v2) => d.error ?? (d.value as { [P]: { httpRequestTimeout: string } })[P].httpRequestTimeout;
  return { v2: value(v2), v3: value(v3) };
};
const both = (v: string) => ({ v2: v, v3: v });

describe('a U+FEFF ending the reader first chunk inside a quoted key', () => {
  it("makes the next top-level key start at column 1: Go's error, with its lines", () => {
    // The original case: a generated conf.yml where a %TAG directive moved the U+FEFF there.
    expect(read(at(HEAD, `${TAIL}b: 2\n`))).toEqual({ v2: 'yaml: line 5: did not find expected key', v3: 'yaml: line 1: did not find expected key' });
  });
  it('is read as Go reads it without the U+FEFF, or with it elsewhere', () => {
    expect(read(at(HEAD, `${TAIL}b: 2\n`, 509, 'z'))).toEqual(both('5s'));
    expect(read(at(HEAD, `${TAIL}b: 2\n`, 505))).toEqual(both('5s'));
  });
  it('skips a space harmlessly, and an empty comment', () => {
    expect(read(at(HEAD, `${TAIL}  b: 2\n`))).toEqual(both('5s'));
    expect(read(at(HEAD, `${TAIL}#\n`))).toEqual(both('5s'));
  });
  it('reaches past a blank line the plain scalar before it reads', () => {
    expect(read(at(HEAD, `${TAIL}\nb: 2\n`))).toEqual({ v2: 'yaml: line 6: did not find expected key', v3: 'yaml: line 1: did not find expected key' });
  });
  it("turns a comment's words into a node (Go: \"could not find expected ':'\")", () => {
    expect(unmarshal(at(HEAD, `${TAIL}# c\nb: 2\n`), T).refused).toEqual(expect.objectContaining({ by: 'go' }));
  });
});

describe('a U+FEFF where the reader decodes its next chunk', () => {
  it('in a plain scalar, as in a quoted one', () => {
    expect(read(at(`a: 1\n${P}:\n  x: yyyy`, `z\n  httpRequestTimeout: 5s\nb: 2\n`))).toEqual({
      v2: 'yaml: line 5: did not find expected key',
      v3: 'yaml: line 1: did not find expected key',
    });
  });
  it("in a comment, as the next chunk's first character", () => {
    expect(read(at(`a: 1\n${P}:\n  httpRequestTimeout: 5s\n# c`, '\nb: 2\n', 510))).toEqual({
      v2: 'yaml: line 5: did not find expected key',
      v3: 'yaml: line 1: did not find expected key',
    });
  });
  it('before the first key: the mapping moves with it, and the key loses its first character', () => {
    expect(read(at('# c', `\n${P}:\n  httpRequestTimeout: 5s\n`, 510))).toEqual(both(''));
  });
  it("in a comment after an empty value: the next key, one column right, is that value's (found by fuzzing against yaml.v2/v3)", () => {
    expect(read(at(`a: 1\n${P}: # c`, `foo\n${P}: 50s\n`, 512))).toEqual(both(''));
  });
  it("in a comment after a plain scalar, which asks for 4 characters at the '#': the buffer starts before it, no skip", () => {
    expect(read(at(`a: 1\n${P}: x # c`, `foo\nzz: 50s\n`, 512))).toEqual(
      both('yaml: unmarshal errors:\n  line 3: cannot unmarshal !!str `x` into main.Provider'),
    );
  });
});

describe('a second U+FEFF right after the BOM', () => {
  it('is skipped as a space, and so is the first character of each line after it', () => {
    // Go: "yaml: line 1: did not find expected key" (a value without a key), here in this package's words.
    expect(read('\uFEFF\uFEFF#c\nx: 1\n').v2).toMatch(/^yaml: line 2, column 2: .*did not find expected key/);
    expect(read('\uFEFF\uFEFF  a: 1\n  b: 2\n')).toEqual(both(''));
    // `b${P}` is read as the provider's key, one column right like `a`.
    expect(read(`\uFEFF\uFEFFa: 1\nb${P}:\n  httpRequestTimeout: 5s\n`)).toEqual(both('5s'));
  });
});

describe('a U+FEFF at the start of a line before the first document (found by fuzzing against yaml.v2/v3)', () => {
  // The `yaml` package takes it for a byte order mark; libyaml's reader drops only the stream's first.
  it('is the first character of a key, as Go reads it', () => {
    for (const text of [`# h\n\uFEFF${P}: {httpRequestTimeout: 5s}\n`, `\n\uFEFF&kp ${P}: {httpRequestTimeout: 5s}\n`]) {
      expect(read(text)).toEqual(both(''));
      expect(unmarshal(text, T).unknownKeys.map((k) => k.key)).toEqual([text.slice(text.indexOf('\uFEFF'), text.indexOf(':'))]);
    }
  });
  it('before "---" after a directive: text where a document start is needed (Go: "did not find expected <document start>")', () => {
    expect(unmarshal(`%YAML 1.1\n\uFEFF---\n${P}: {httpRequestTimeout: 5s}\n`, T).refused).toEqual(expect.objectContaining({ by: 'go' }));
  });
});

describe('a control character past the first document behind a BOM (found by fuzzing against yaml.v2/v3)', () => {
  // The reader's first 512-byte chunk holds the BOM's 3 bytes: `...` starting at byte `marker` (BOM included), U+0001 after a comment.
  const doc = `${P}: {httpRequestTimeout: 5s}\n`;
  const text = (marker: number) => `\uFEFF#${'x'.repeat(marker - 5 - doc.length)}\n${doc}...\n# xxxx\n\u0001\n`;
  it("stops yaml.v3 alone when yaml.v2's reach ends in the first chunk", () => {
    expect(Buffer.byteLength(text(502).slice(0, text(502).indexOf('...')))).toBe(502);
    const { v2, v3 } = read(text(502));
    expect(v2).toBe('5s');
    expect(v3).toMatch(/contains U\+0001, a control character past the first document/);
  });
  it("stops both when yaml.v2's reach crosses into the second chunk", () => {
    expect(unmarshal(text(509), T).refused).toEqual(expect.objectContaining({ by: 'go', problem: 'line 5, column 1: contains U+0001, a control character' }));
  });
});

describe('a U+FEFF cut by the first chunk end after an alias in a flow collection (found by fuzzing against yaml.v2/v3)', () => {
  // The `]` or `:` after an alias's name starts a token, which asks for 4 characters: the refill
  // happens there, the buffer does not start with the U+FEFF, and Go reads it as text, a key without ":".
  it.each([[at(`${P}: &a {}\r\nb: [x, *a]\r\n`, '', 510)], [at(`${P}: &a {}\r\nb: {x: *a}\r\n`, '', 510)]])(
    '%j is refused, as Go refuses it ("could not find expected \':\'")',
    (text) => {
      expect(unmarshal(text, T).refused).toEqual(expect.objectContaining({ by: 'go' }));
    },
  );
  it('is skipped after an alias ending its line, where the refill happens at the U+FEFF', () => {
    expect(read(at(`${P}: &a {}\r\nb: *a\r\n`, '', 510))).toEqual(both(''));
  });
});
