/**
 * The per-review bound on candidate-pool work, in steps: Kubernetes bounds tenant input by
 * cost (CEL's per-request budget), and the warn-only webhooks share one event loop with the
 * refusing ones. A step is one pattern element read at one name position by Go's
 * `filepath.Match` (counted as it matches, go/filepath-match.ts); the fixed work per list,
 * per pattern and pool, and per name grouped is priced in steps and charged before it is done
 * (docs/adr/0004-candidate-step-budget.md).
 */
import type { StepMeter } from '../go/filepath-match.js';
import type { PoolEntry } from './candidate-categories.js';

/**
 * Steps one review may take. The slowest steps (a class at each name position) took 3–9 ns
 * of CPU on the 2-core CI machine under a load of 10, most take 2–3 ns: 4–18 ms at most, in
 * the warn-only worker thread, where it delays no refusing review. A leading-star pattern
 * against 10 000 pools takes about a third of it.
 */
export const STEPS_PER_REVIEW = 2_000_000;

/** A pattern tried on one pool (a call, the name's place in the buffer): about 20 ns, priced as steps. */
export const STEPS_PER_PAIR = 8;

/** A name grouped (Map, Set and WeakMap accesses): about 100 ns, priced as steps. */
export const STEPS_PER_NAME = 32;

/** A list resolved and warned about (keyed, looked up, its warnings written): about 12 µs under load, priced as steps. */
export const STEPS_PER_LIST = 4096;

/** A name of a remembered list read again (copied and compared while warning, no lookup). */
export const STEPS_PER_REMEMBERED_NAME = 16;

/** What one review may still spend; matching takes its steps from it as a {@link StepMeter}. */
export interface StepBudget extends StepMeter {
  /** Set once a charge did not fit or matching ran out: the review then stops checking. */
  exceeded: boolean;
}

export function stepBudget(steps = STEPS_PER_REVIEW): StepBudget {
  return { remaining: steps, exceeded: false };
}

/** Takes `steps` from `budget` when they fit; else takes nothing, marks it exceeded and returns false. */
export function charge(budget: StepBudget, steps: number): boolean {
  if (steps > budget.remaining) {
    budget.exceeded = true;
    return false;
  }
  budget.remaining -= steps;
  return true;
}

/** The UTF-8 names of a pool list in one buffer: name `i` is `bytes[offsets[i]:offsets[i + 1]]`. */
export interface EncodedNames {
  bytes: Uint8Array;
  offsets: Uint32Array;
}

/** Per pool list (replaced whenever a pool changes): one buffer, not an object per name. */
const encoded = new WeakMap<readonly PoolEntry[], EncodedNames>();

export function encodedNames(pools: readonly PoolEntry[]): EncodedNames {
  let names = encoded.get(pools);
  if (names === undefined) {
    const parts = pools.map((entry) => new TextEncoder().encode(entry.name));
    const offsets = new Uint32Array(pools.length + 1);
    parts.forEach((part, i) => (offsets[i + 1] = offsets[i]! + part.length));
    const bytes = new Uint8Array(offsets[pools.length]!);
    parts.forEach((part, i) => bytes.set(part, offsets[i]!));
    names = { bytes, offsets };
    encoded.set(pools, names);
  }
  return names;
}
