import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { boundedText, documentData, listItems, ManifestError, MAX_INPUT_BYTES, readManifestPaths, readText } from '../../src/kubernetes/manifests.js';

describe('readText: a file that cannot be read is one line in plain words', () => {
  const dir = mkdtempSync(join(tmpdir(), 'manifest-read-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each([
    ['a missing file', () => join(dir, 'nope.yml'), 'no such file or folder'],
    ['a folder', () => dir, 'is a folder, not a file'],
    ['a path through a file', () => join(fileURLToPath(import.meta.url), 'x'), 'a part of the path is not a folder'],
  ])('%s', async (_, file, why) => {
    const path = file();
    const error = await readText(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as Error).message).toBe(`${path}: cannot be read: ${why}`);
  });

  it('reads a file whole, as UTF-8', async () => {
    const path = join(dir, 'ok.yml');
    writeFileSync(path, 'name: é\n');
    expect(await readText(path)).toBe('name: é\n');
  });

  (existsSync('/dev/zero') ? it : it.skip)('stops an endless file at MAX_INPUT_BYTES with one line, not an engine error', async () => {
    const error = await readText('/dev/zero').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as Error).message).toBe(`/dev/zero: holds more than ${MAX_INPUT_BYTES} bytes, this command's limit for one input; split it`);
  });
});

describe('boundedText', () => {
  const chunks = (...texts: string[]) => texts.map((t) => Buffer.from(t));
  it('joins chunks up to the limit, inclusive', async () => {
    expect(await boundedText(chunks('ab', 'cd'), 'x', 4)).toBe('abcd');
  });
  it('refuses one byte past the limit, naming the source', async () => {
    await expect(boundedText(chunks('ab', 'cde'), 'x', 4)).rejects.toThrow('x: holds more than 4 bytes');
  });
});

describe('documentData', () => {
  const one = (text: string) => documentData(parseAllDocuments(text)[0]!);
  it('gives the data of a document', () => expect(one('a: 1\n')).toEqual({ ok: true, value: { a: 1 } }));
  it('gives a syntax error in one line, its place first and no colon left dangling', () => {
    expect(one('a: 1\na: 2\n')).toEqual({ ok: false, syntax: true, reason: 'line 2, column 1: Map keys must be unique' });
    expect(one('# title\n\n`x` is code\n')).toEqual({
      ok: false,
      syntax: true,
      reason: 'line 3, column 1: Plain value cannot start with reserved character `',
    });
  });
  it('refuses too many aliases as data, not syntax', () => {
    const data = one(`a: &a [x]\nb: [${Array(200).fill('*a').join(', ')}]\n`);
    expect(data).toMatchObject({ ok: false, syntax: false, reason: expect.stringMatching(/alias/i) });
  });
});

describe('listItems', () => {
  test.each([
    [{ kind: 'List', items: [1] }, [1]],
    [{ kind: 'ConfigMapList', items: [] }, []],
    [{ kind: 'List' }, []],
    [{ kind: 'List', items: null }, []],
    [{ kind: 'ConfigMapList' }, undefined],
    [{ kind: 'List', items: 5 }, 'not a list'],
    [{ kind: 'ConfigMap', items: [1] }, undefined],
    [null, undefined],
    ['List', undefined],
  ])('%j → %j', (value, items) => expect(listItems(value)).toEqual(items));
});

describe('readManifestPaths', () => {
  const dir = mkdtempSync(join(tmpdir(), 'manifest-paths-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a List of 150 000 items without overflowing the call stack (review2: they were spread into one call)', async () => {
    const file = join(dir, 'big.json');
    writeFileSync(
      file,
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: Array.from({ length: 150_000 }, () => ({ apiVersion: 'v1', kind: 'Namespace' })) }),
    );
    expect(await readManifestPaths([file])).toHaveLength(150_000);
  });
});
