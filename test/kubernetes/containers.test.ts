import { z } from 'zod';
import { listOf, stringEntries } from '../../src/kubernetes/containers.js';

describe('listOf', () => {
  const list = listOf(z.string());

  it('decodes an array of valid elements as z.array does', () => {
    expect(list.parse(['a', 'b'])).toEqual(['a', 'b']);
    expect(list.parse([])).toEqual([]);
  });

  it('reports only the first bad element, with its index and zod message', () => {
    const result = list.safeParse(['a', 1, 2, ...Array.from({ length: 100_000 }, (_, i) => i)]);
    expect(result.success).toBe(false);
    expect(result.error!.issues).toHaveLength(1);
    expect(result.error!.issues[0]).toMatchObject({ path: [1], message: z.string().safeParse(1).error!.issues[0]!.message });
  });

  it("keeps the element schema's inner path", () => {
    const issues = listOf(z.object({ a: z.string() })).safeParse([{ a: 'x' }, { a: 3 }]).error!.issues;
    expect(issues.map((issue) => issue.path)).toEqual([[1, 'a']]);
  });

  it('refuses a non-array as z.array does', () => {
    expect(list.safeParse('a').error!.issues).toEqual(z.array(z.string()).safeParse('a').error!.issues);
    expect(list.nullish().parse(null)).toBeNull();
  });
});

describe('stringEntries', () => {
  const entries = stringEntries(['conf.yml', 'other']);

  it('keeps only the listed keys that are present', () => {
    expect(entries.parse({ 'conf.yml': 'y', unrelated: 'z' })).toEqual({ 'conf.yml': 'y' });
    expect(entries.parse({})).toEqual({});
  });

  it('neither checks nor copies other keys, however many or wrong', () => {
    const object = Object.fromEntries([['conf.yml', 'x'], ...Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])]);
    expect(entries.parse(object)).toEqual({ 'conf.yml': 'x' });
  });

  it('refuses a listed key whose value is not a string, at that key', () => {
    const issues = entries.safeParse({ other: 'x', 'conf.yml': 3 }).error!.issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: ['conf.yml'], message: z.string().safeParse(3).error!.issues[0]!.message });
  });

  it('reads own keys only, never the prototype', () => {
    expect(stringEntries(['toString']).parse({})).toEqual({});
    expect(stringEntries(['conf.yml']).parse(Object.create({ 'conf.yml': 'inherited' }))).toEqual({});
  });

  it('refuses a non-object as z.record does', () => {
    for (const value of ['a', 1, null, ['x']]) {
      expect(entries.safeParse(value).error!.issues).toEqual(z.record(z.string(), z.string()).safeParse(value).error!.issues);
    }
  });
});
