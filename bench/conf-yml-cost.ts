/**
 * The cost of reading hostile conf.yml text, as a ratio: `readConfYml` on each shape at
 * 15 000 and at 60 000 characters (the 64 KiB bound). Each shape once cost a copy of the
 * text or a walk of the document per occurrence (src/config: dashes and colons in flow
 * collections, tags, LS inside quotes, private-use characters, thousands of keys, a key of
 * a long run of blanks; src/yaml-go: comments and skipped lines where a U+FEFF starts
 * libyaml's read buffer; an anchor or alias name ended before `:` that hides the next one from
 * the `yaml` package, a parse each): linear reading takes about 4× as long at 4× the text, quadratic
 * 16×. Jest cannot time out synchronous code, so this bound is checked here, as a ratio
 * within one run, not as a time.
 */
import { readConfYml } from '../src/spiderpool/conf-yml.js';
import { READ_CHUNK_BYTES } from '../src/yaml-go/libyaml-lookahead.js';
import type { MicroResult } from './micro.js';

/** The two sizes (characters) and the bound on the ratio of their times: linear is 4×. */
const SIZES = [15_000, 60_000] as const;
/** Between linear (4×) and quadratic (16×), their geometric mean: a loaded machine's noise moved a linear shape to 6.9×. */
const MAX_RATIO = 8;

/** Hostile shapes, each filled to about `chars` characters. */
const SHAPES: ReadonlyArray<readonly [string, (chars: number) => string]> = [
  ['"-," in a flow sequence', (n) => flow('-,', n)],
  ['"a:," in a flow sequence', (n) => flow('a:,', n)],
  ['tags over "%2C"', (n) => flow('!!str%2C x, ', n)],
  ['LS inside quotes', (n) => flow('"a\u2028b", ', n)],
  ['private-use characters', (n) => flow('\ue000\ue001\ue002, ', n)],
  ['thousands of keys', (n) => `${Array.from({ length: Math.floor(n / 10) }, (_, i) => `k${i}: v`).join('\n')}\niaasNetworkProvider: {serverUrl: http://a}\n`],
  // Lines nesting 150 deep, past the flow limit (so the block scalars are looked for) but under the 2 000 refused anywhere.
  ['"[" in a block scalar', (n) => `iaasNetworkProvider:\n  serverUrl: |\n${`    ${'['.repeat(150)}${']'.repeat(150)}\n`.repeat(Math.ceil(n / 305))}`],
  ['a key of blanks then ":"', (n) => `iaasNetworkProvider:\n  ? "httpRequestTimeout${' '.repeat(n)}:"\n  : 3s\n`],
  ['" #" in a flow sequence, a U+FEFF at a chunk end', (n) => bomAtChunkEnds(flow('" #" ,', n), '#\n', n + READ_CHUNK_BYTES)],
  ['"a," in a flow sequence, then "#" lines, a U+FEFF at each chunk end', (n) => bomAtChunkEnds(flow('a,', n / 2), '#\n', n)],
  ['aliases "*a:" before "|", each hiding the next from the parser', (n) => `k: &a x\nm:\n${'  *a: |\n  b: [-]\n'.repeat(Math.floor(n / 17))}`],
];

function flow(unit: string, chars: number): string {
  return `a: [${unit.repeat(Math.floor(chars / unit.length))}]\n`;
}

/**
 * `head`, then `line` repeated up to `chars` characters, with a comment ending in U+FEFF where
 * each 512-byte chunk ends: libyaml's reader buffer then starts with it, and its scanner skips
 * column 0 up to the next chunk (src/yaml-go/libyaml-bom.ts), harmlessly on `#` lines.
 */
function bomAtChunkEnds(head: string, line: string, chars: number): string {
  let text = head;
  let bytes = Buffer.byteLength(head);
  while (text.length < chars) {
    const left = READ_CHUNK_BYTES - (bytes % READ_CHUNK_BYTES);
    // Its first byte 2 before the chunk's end, so the chunk does not hold it whole.
    const next = left >= 4 && left < 4 + line.length ? ` #${' '.repeat(left - 4)}\uFEFF\n` : line;
    text += next;
    bytes += Buffer.byteLength(next);
  }
  return text;
}

const taskName = (shape: string, chars: number) => `readConfYml, ${shape}, ${chars} characters`;

/** The tinybench tasks: one per shape and size; each checks once that the text is read. */
export function confYmlCostTasks(): Array<{ name: string; run: () => void }> {
  return SHAPES.flatMap(([shape, fill]) =>
    SIZES.map((chars) => {
      const text = fill(chars);
      if (!readConfYml(text).ok) throw new Error(`${taskName(shape, chars)}: refused, but a conf.yml within the bound`);
      return { name: taskName(shape, chars), run: () => void readConfYml(text) };
    }),
  );
}

/** Whether a micro-benchmark is one of {@link confYmlCostTasks} (its mean is not per review). */
export const isConfYmlCost = (name: string): boolean => name.startsWith('readConfYml, ');

/** Per shape, the time at the larger size over the time at the smaller, and whether it is within {@link MAX_RATIO}. */
export function confYmlCostTargets(micro: readonly MicroResult[]): { target: string; ratio: number; met: boolean }[] {
  const mean = new Map(micro.map((m) => [m.name, m.meanUs]));
  return SHAPES.flatMap(([shape]) => {
    const [small, large] = SIZES.map((chars) => mean.get(taskName(shape, chars)));
    if (small === undefined || large === undefined) return [];
    const ratio = large / small;
    return [
      { target: `readConfYml, ${shape}: ${SIZES[1]} ÷ ${SIZES[0]} characters ≤ ${MAX_RATIO}× (linear 4×, quadratic 16×)`, ratio, met: ratio <= MAX_RATIO },
    ];
  });
}
