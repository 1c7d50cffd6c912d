/**
 * What the widest bodies the JSON bounds allow cost once parsed: each shape filled to
 * 1 Mi tokens (`MAX_JSON_TOKENS`) or 7 MiB, checked by `parseReviewBody`'s pre-scan, parsed
 * twice and both kept (two largest bodies in flight, the body budget's capacity), each in
 * a process of its own. Prints one line per shape: heap per token, heap of the two, peak
 * RSS above the start, and the budget's weight of the two (`worstParsedBytes`), which must
 * stay above the heap. Run: `npm run build && npx tsc -p bench/tsconfig.json &&
 * node --expose-gc --max-semi-space-size=8 dist-bench/bench/json-shapes.js`.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MAX_BODY_BYTES } from '../src/defaults.js';
import { MAX_JSON_DEPTH, MAX_JSON_TOKENS, scanJsonShape, worstParsedBytes } from '../src/server/json-shape.js';

/** Each shape as a repeated unit inside a top-level array, with the tokens one unit holds. */
const SHAPES: Record<string, { unit: string; tokens: number }> = {
  'empty objects': { unit: '{},', tokens: 1 },
  'empty arrays': { unit: '[],', tokens: 1 },
  zeros: { unit: '0,', tokens: 1 },
  'objects of one key': { unit: '{"a":0},', tokens: 3 },
  'arrays nested 10 000 deep': { unit: `${'['.repeat(MAX_JSON_DEPTH - 2) + ']'.repeat(MAX_JSON_DEPTH - 2)},`, tokens: MAX_JSON_DEPTH - 2 },
};

function body(name: string): Buffer {
  const { unit, tokens } = SHAPES[name]!;
  const units = Math.min(Math.floor((MAX_JSON_TOKENS - 2) / tokens), Math.floor((MAX_BODY_BYTES - 2) / unit.length));
  return Buffer.from(`[${unit.repeat(units)}0]`);
}

const MiB = 1024 * 1024;
const peakRssMiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

/** In the child: parse one shape twice, keep both, report. */
function measure(name: string): void {
  const bytes = body(name);
  const shape = scanJsonShape(bytes);
  if (typeof shape === 'string') throw new Error(`${name}: ${shape}`);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage().rss / MiB;
  const kept = [JSON.parse(bytes.toString('utf8')), JSON.parse(bytes.toString('utf8'))];
  gc();
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / MiB;
  process.send!({
    shape: name,
    bodyMiB: +(bytes.length / MiB).toFixed(2),
    tokens: shape.tokens,
    heapPerToken: Math.round((heapMiB * MiB) / (2 * shape.tokens)),
    heapOfTwoMiB: +heapMiB.toFixed(1),
    peakRssAboveMiB: +(peakRssMiB() - rssBefore).toFixed(1),
    weightOfTwoMiB: +((2 * worstParsedBytes(bytes.length)) / MiB).toFixed(1),
    kept: kept.length,
  });
}

const self = fileURLToPath(import.meta.url);
if (process.argv[2] !== undefined) {
  measure(process.argv[2]);
} else {
  for (const name of Object.keys(SHAPES)) {
    const line = await new Promise((resolve, reject) => {
      const child = fork(self, [name], { execArgv: process.execArgv });
      child
        .once('message', resolve)
        .once('error', reject)
        .once('exit', (code) => (code === 0 ? undefined : reject(new Error(`${name}: exit ${code}`))));
    });
    console.log(JSON.stringify(line));
  }
}
