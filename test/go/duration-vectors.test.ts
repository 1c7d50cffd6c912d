import { readFileSync } from 'node:fs';
import { formatGoDuration } from '../../src/go/duration-format.js';
import { parseGoDuration } from '../../src/go/duration-parse.js';

/** Vectors produced by Go's time.ParseDuration / Duration.String() (copied into test/fixtures/ from the Go run). */
interface Vector {
  in: string;
  ok: boolean;
  ns?: string;
  string?: string;
  error?: string;
}

const vectors: Vector[] = readFileSync(new URL('../fixtures/go-duration-vectors.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Vector);

describe('parseGoDuration agrees with Go on every shared vector', () => {
  it('loads the shared vectors', () => {
    expect(vectors.length).toBeGreaterThan(400);
    expect(vectors.some((v) => v.ok)).toBe(true);
    expect(vectors.some((v) => !v.ok)).toBe(true);
  });

  it.each(vectors.filter((v) => v.ok).map((v) => [v.in, v] as const))('accepts %j with Go’s value and String()', (_input, v) => {
    const ns = parseGoDuration(v.in);
    expect(ns).toBe(BigInt(v.ns!));
    expect(formatGoDuration(ns)).toBe(v.string);
  });

  it.each(vectors.filter((v) => !v.ok).map((v) => [v.in, v] as const))('refuses %j with Go’s error text', (_input, v) => {
    expect(() => parseGoDuration(v.in)).toThrow(new Error(v.error));
  });
});
