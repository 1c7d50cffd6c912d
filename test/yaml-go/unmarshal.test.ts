/**
 * `unmarshal` (src/yaml-go/unmarshal.ts) against Go's own answers: every expected error
 * text and value below is what gopkg.in/yaml.v2 v2.4.0 and yaml.v3 v3.0.1 printed for the
 * same text into the same struct (`type T struct { A int; B bool; S string; List []string;
 * M map[string]string; Sub struct{ X int } }` with these yaml tags, in package main).
 */
import type { StructType } from '../../src/yaml-go/go-types.js';
import { unmarshal } from '../../src/yaml-go/unmarshal.js';

const T: StructType = {
  go: 'struct',
  name: 'main.T',
  fields: {
    a: { go: 'int' },
    b: { go: 'bool' },
    s: { go: 'string' },
    list: { go: 'slice', name: '[]string', of: { go: 'string' } },
    m: { go: 'map', name: 'map[string]string' },
    sub: { go: 'struct', name: 'main.Sub', fields: { x: { go: 'int' } } },
  },
};

const ZERO = { a: 0n, b: false, s: '', list: null, m: null, sub: { x: 0n } };

/** Both decoders' error texts (`undefined` when one decodes). */
const errors = (text: string) => {
  const { v2, v3 } = unmarshal(text, T);
  return { v2: v2.error, v3: v3.error };
};

describe('unmarshal returns Go error texts', () => {
  it('a type error: line and Go type, as both decoders print it', () => {
    const both = 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `abc` into int';
    expect(errors('a: abc\n')).toEqual({ v2: both, v3: both });
  });

  it('every type error, one line each, long values cut to 7 bytes and "..."', () => {
    const both = 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `abcdefg...` into int\n  line 2: cannot unmarshal !!str `maybe` into bool';
    expect(errors('a: abcdefghijkl\nb: maybe\n')).toEqual({ v2: both, v3: both });
  });

  it('a collection where a scalar goes, and a scalar where a struct goes, named by their Go types', () => {
    const both = 'yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into string\n  line 2: cannot unmarshal !!str `x` into main.Sub';
    expect(errors('s: [1, 2]\nsub: x\n')).toEqual({ v2: both, v3: both });
    const list = 'yaml: unmarshal errors:\n  line 2: cannot unmarshal !!str `x` into []string';
    expect(errors('m: {k: v, n: ~}\nlist: x\n')).toEqual({ v2: list, v3: list });
  });

  it('a repeated key: yaml.v3 refuses it, yaml.v2 keeps the last', () => {
    const decoded = unmarshal('a: 1\nb: true\na: 2\n', T);
    expect(decoded.v3.error).toBe('yaml: unmarshal errors:\n  line 3: mapping key "a" already defined at line 1');
    expect(decoded.v2).toEqual({ value: { ...ZERO, a: 2n, b: true }, problems: [] });
  });

  it('repeated keys in the order Go compares them (by the earlier key), after yaml.v2 type errors', () => {
    expect(errors('a: 1\nb: 2\nb: 3\na: 4\n')).toEqual({
      v2: 'yaml: unmarshal errors:\n  line 2: cannot unmarshal !!int `2` into bool\n  line 3: cannot unmarshal !!int `3` into bool',
      v3: 'yaml: unmarshal errors:\n  line 4: mapping key "a" already defined at line 1\n  line 3: mapping key "b" already defined at line 2',
    });
  });

  it('a key repeated past the 32 problems a pass keeps: the ones found before the cut, in Go order', () => {
    // Found line by line: every pair within lines 1-8, then line 9 against lines 1-4 (32).
    const pairs: Array<[number, number]> = [];
    for (let later = 2; later <= 9; later++) for (let earlier = 1; earlier < later && (later < 9 || earlier <= 4); earlier++) pairs.push([earlier, later]);
    pairs.sort(([e1, l1], [e2, l2]) => e1 - e2 || l1 - l2);
    const lines = pairs.map(([earlier, later]) => `\n  line ${later}: mapping key "a" already defined at line ${earlier}`);
    expect(unmarshal('a: 1\n'.repeat(40), T).v3.error).toBe(`yaml: unmarshal errors:${lines.join('')}`);
  });

  it('a field set twice by keys written differently (yaml.v3)', () => {
    const decoded = unmarshal('a: 1\n!!binary YQ==: 2\n', T);
    expect(decoded.v3.error).toBe('yaml: unmarshal errors:\n  line 2: field a already set in type main.T');
    expect(decoded.v2.value).toEqual({ ...ZERO, a: 2n });
  });

  it('a tag the text does not satisfy stops yaml.v3 at once, without a line', () => {
    const decoded = unmarshal('b: !!bool yes\n', T);
    expect(decoded.v3.error).toBe('yaml: cannot decode !!str `yes` as a !!bool');
    expect(decoded.v2.value).toEqual({ ...ZERO, b: true });
  });

  it('!!binary: decoded, or both refuse invalid base64', () => {
    expect(unmarshal('s: !!binary Zm9v\n', T).v3.value).toEqual({ ...ZERO, s: 'foo' });
    const invalid = 'yaml: !!binary value contains invalid base64 data';
    expect(errors('s: !!binary "***"\n')).toEqual({ v2: invalid, v3: invalid });
  });
});

describe('unmarshal returns what the caller builds its messages from', () => {
  it('each problem with its field path, position and kind', () => {
    const { v3 } = unmarshal('sub:\n  x: [1]\nlist: [a, {b: c}]\n', T);
    expect(v3.problems).toEqual([
      expect.objectContaining({
        kind: 'type',
        field: 'sub.x',
        line: 2,
        column: 6,
        tag: '!!seq',
        written: 'sequence',
        message: 'cannot unmarshal !!seq into int',
      }),
      expect.objectContaining({
        kind: 'type',
        field: 'list[1]',
        line: 3,
        column: 11,
        tag: '!!map',
        written: 'mapping',
        message: 'cannot unmarshal !!map into string',
      }),
    ]);
  });

  it('unknown keys with the path and type of their struct, each once, yaml.v3 pass first', () => {
    // yaml.v3 decodes nothing of `sub` (its key y is repeated): y is met by yaml.v2's pass.
    const { unknownKeys, v2, v3 } = unmarshal('defaults: &d {x: 1}\nsub:\n  y: 1\n  y: 2\nsub2: {}\n', T);
    expect(unknownKeys.map(({ parent, key, type }) => `${parent}|${key}|${type.name}`)).toEqual(['|defaults|main.T', '|sub2|main.T', 'sub|y|main.Sub']);
    expect(v2.value).toBeDefined();
    expect(v3.error).toBe('yaml: unmarshal errors:\n  line 4: mapping key "y" already defined at line 3');
  });

  it("merge keys in each decoder's order, nulls in lists as each keeps them", () => {
    const merged = unmarshal('defaults: &d {x: 1}\nsub:\n  x: 2\n  <<: *d\n', T);
    expect([merged.v2.value?.['sub'], merged.v3.value?.['sub']]).toEqual([{ x: 1n }, { x: 2n }]);
    const nulls = unmarshal('list: [a, ~, b]\na: null\n', T);
    expect([nulls.v2.value?.['list'], nulls.v3.value?.['list']]).toEqual([
      ['a', '', 'b'],
      ['a', 'b'],
    ]);
  });

  it('a text neither reads is refused as a whole, with its position', () => {
    const decoded = unmarshal('a: [1\n', T);
    expect(decoded.refused).toEqual(expect.objectContaining({ by: 'go', field: '' }));
    expect(decoded.refused?.problem).toMatch(/^not valid YAML: line \d+, column \d+: /);
    expect(decoded.v2.error).toBe(`yaml: ${decoded.refused?.problem}`);
  });
});
