/**
 * What one decoder's pass of `unmarshal` (unmarshal.ts) records: the problems Go's decoders
 * report per value, the refusals that stop both, and the count of decoded values behind
 * Go's "excessive aliasing" and this package's own bound.
 */
import type { Alias, LineCounter, YAMLMap } from 'yaml';
import type { GoType, StructType } from './go-types.js';
import type { Semantics } from './go-scalar.js';

/** One decoder's refusal of one value: Go's message without its `line N: `, and where. */
export type DecodeProblem = {
  /** As decode.go words it (`terror`: "cannot unmarshal !!str `abc` into int"; `failf`; `mapping`). */
  message: string;
  /** The value's path from the document: `a.b`, `a.list[0]`, `a.labels[key]`; `""` for the document. */
  field: string;
  /** 1-based line and column of the value (a key, for key problems), when it has a place. */
  line?: number;
  column?: number;
} & (
  | { kind: 'type'; type: GoType; written: 'mapping' | 'sequence' | 'scalar'; tag: string; value?: string }
  | { kind: 'tag' | 'binary' | 'lookahead' }
  | { kind: 'duplicate-key' | 'field-set-twice'; key: string }
);

/**
 * Why both decoders refuse the text as a whole: `go` (Go's decoders refuse it), `tag` (both
 * refuse a standard tag on a value that does not satisfy it; `problem` names the tag),
 * `limit` (this package's bound against hostile input; Go reads it), `unread` (Go reads
 * it, this package does not read it as Go does). `problem` starts with its position where it has one.
 */
export interface Refusal {
  by: 'go' | 'tag' | 'limit' | 'unread';
  problem: string;
  field: string;
  /** Each decoder's own error text, where this package knows it (decode errors, not scanner errors). */
  go?: Readonly<Record<Semantics, string>>;
}

/** A key a struct does not have (both decoders skip it unread), under the struct at `parent`. */
export interface UnknownKey {
  parent: string;
  key: string;
  type: StructType;
}

/** The same error text from both decoders. */
export function bothSay(message: string): Record<Semantics, string> {
  return { 'yaml.v2': `yaml: ${message}`, 'yaml.v3': `yaml: ${message}` };
}

/** Both decoders refusing the text; carries the refusal. */
export class DecodeFailure extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.problem);
  }
}

/**
 * Values one decoder's pass decodes (each key and value, each alias followed) before this
 * package gives up: aliases and merge keys can make a 64 KiB text decode billions. The Go
 * decoders count the same (decode.go `decodeCount`) and give up on "excessive aliasing"
 * only past 400 000 with nearly all of them aliases, so this is this package's limit.
 */
const MAX_DECODED_VALUES = 100_000;

/**
 * Problems one decoder's pass collects before it stops: the decoder already refuses the
 * text, and a hostile text of thousands of repeated keys must not cost seconds.
 */
const MAX_PROBLEMS_PER_PASS = 32;

/** Ends a pass that has found {@link MAX_PROBLEMS_PER_PASS} problems. */
export class PassFull extends Error {}

export interface Context {
  semantics: Semantics;
  lines: LineCounter;
  /** Each alias resolved once, to the nearest anchor of that name before it. */
  aliases: Map<Alias, unknown>;
  /** Mappings whose keys were checked in this pass: whether a key is written twice. */
  keysChecked: WeakMap<YAMLMap, boolean>;
  /** Values decoded so far in this pass (see {@link MAX_DECODED_VALUES}), and of them through aliases. */
  decoded: number;
  aliased: number;
  /** Aliases being followed now. */
  aliasDepth: number;
  expanding: Set<YAMLMap>;
  problems: DecodeProblem[];
  /** Go's type errors as decode.go's `d.terrors` lists them (`line N: ...`), in its order. */
  terrors: string[];
  /** Shared by both passes, by `parent` and `key`: each reported once. */
  unknownKeys: Map<string, UnknownKey>;
}

/** What decode.go reports with `failf`: it stops the decoder at once, and its message alone is the error. */
export const STOPS_AT_ONCE: ReadonlySet<DecodeProblem['kind']> = new Set(['tag', 'binary', 'lookahead']);

/**
 * Records a decoder's problem, and Go's type error for it (repeated keys are listed in
 * Go's order by their check); ends the pass once it has enough.
 */
export function report(ctx: Context, problem: DecodeProblem): void {
  ctx.problems.push(problem);
  if (!STOPS_AT_ONCE.has(problem.kind) && problem.kind !== 'duplicate-key') ctx.terrors.push(`line ${problem.line ?? 1}: ${problem.message}`);
  if (ctx.problems.length >= MAX_PROBLEMS_PER_PASS) throw new PassFull();
}

/** Where a node starts: its 1-based line and column, or nothing when it has no position. */
export function placeOf(node: unknown, lines: LineCounter): { line?: number; column?: number } {
  const start = (node as { range?: [number, number, number] } | null | undefined)?.range?.[0];
  if (start === undefined) return {};
  const { line, col } = lines.linePos(start);
  return { line, column: col };
}

/**
 * Counts `n` decoded values (`aliased`: decoded through an alias) as Go's decoders count
 * them (decode.go `decodeCount`, `aliasCount`): past 1 000, with over 100 through aliases
 * and more of them than `allowedAliasRatio` allows, both fail with "document contains
 * excessive aliasing". Past {@link MAX_DECODED_VALUES} this package gives up.
 */
export function spend(ctx: Context, n: number, aliased: boolean): void {
  ctx.decoded += n;
  if (aliased || ctx.aliasDepth > 0) ctx.aliased += n;
  if (ctx.aliased > 100 && ctx.decoded > 1_000 && ctx.aliased / ctx.decoded > allowedAliasRatio(ctx.decoded)) {
    const message = 'document contains excessive aliasing';
    throw new DecodeFailure({ by: 'go', field: '', problem: message, go: bothSay(message) });
  }
  if (ctx.decoded > MAX_DECODED_VALUES) {
    const problem = `decoding it reads more than ${MAX_DECODED_VALUES} values (aliases and merge keys, <<, repeat what they name)`;
    throw new DecodeFailure({ by: 'limit', field: '', problem });
  }
}

/** yaml.v3 decode.go `allowedAliasRatio` (yaml.v2 has the same): 0.99 up to 400 000 decoded values, down to 0.1 at 4 000 000. */
function allowedAliasRatio(decoded: number): number {
  if (decoded <= 400_000) return 0.99;
  if (decoded >= 4_000_000) return 0.1;
  return 0.99 - 0.89 * ((decoded - 400_000) / 3_600_000);
}
