/**
 * The figures of `npm run bench -- --through-apiserver` (through-apiserver.ts) from the
 * latencies it measured: pure, no I/O.
 */
import { median, quantile } from './results.js';

/** What guards the pools in a phase: nothing (the floor), this webhook, or the Go reference. */
export type Setting = 'floor' | 'webhook' | 'go';
export const SETTINGS: readonly Setting[] = ['floor', 'webhook', 'go'];
export type Webhook = Exclude<Setting, 'floor'>;

export interface ThroughApiServerPlan {
  rounds: number;
  /** Writers at once, each updating its own pool in a closed loop. */
  concurrency: number;
  /** Measured UPDATEs per setting and round (after `warmup` unmeasured ones). */
  requests: number;
  warmup: number;
}

export interface SettingFigures {
  /** Measured UPDATEs, all answered 200. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** This setting's p50 (and p99) minus the floor's: what the webhook adds; 0 for the floor. */
  addedP50Ms: number;
  addedP99Ms: number;
  /** The webhook process's CPU time (user + system) per UPDATE, µs, the median over rounds; null for the floor. */
  cpuUsPerRequest: number | null;
}

export interface ThroughApiServerResults {
  date: string;
  /** One-minute load average before and after the run. */
  loadAverage: [number, number];
  node: string;
  go: string;
  plan: ThroughApiServerPlan;
  settings: Record<Setting, SettingFigures>;
  /**
   * This webhook's added latency ÷ the Go reference's (target ≤ 1.1), over all rounds;
   * `addedP50ByRound` the same ratio within each round (its three phases adjacent in time),
   * median and range. null where Go's added latency is not above 0.
   */
  ratio: { addedP50: number | null; addedP99: number | null; addedP50ByRound: { median: number | null; min: number | null; max: number | null } };
}

const ratioOf = (ours: number, go: number): number | null => (go > 0 ? ours / go : null);
const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const p50 = (values: readonly number[]) => quantile(sorted(values), 0.5);

/** The ratio ours ÷ Go of the added p50 in each round where Go added something: median, min, max. */
function byRound(roundsMs: Record<Setting, number[][]>): ThroughApiServerResults['ratio']['addedP50ByRound'] {
  const ratios = roundsMs.floor
    .map((floor, r) => ratioOf(p50(roundsMs.webhook[r]!) - p50(floor), p50(roundsMs.go[r]!) - p50(floor)))
    .filter((x): x is number => x !== null);
  return ratios.length === 0 ? { median: null, min: null, max: null } : { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/**
 * The figures of each setting from the latencies measured under it (ms, any order, one
 * array per round; p50 and p99 from all rounds pooled, so that p99 rests on rounds ×
 * requests samples), and the ratio ours ÷ Go; `cpuUsPerRequest` holds each webhook's CPU µs
 * per UPDATE, one value per round.
 *
 * @throws Error when a setting has no latency in some round.
 */
export function throughApiServerFigures(
  roundsMs: Record<Setting, number[][]>,
  cpuUsPerRequest: Record<Webhook, number[]>,
): Pick<ThroughApiServerResults, 'settings' | 'ratio'> {
  const empty = SETTINGS.filter((s) => roundsMs[s].length === 0 || roundsMs[s].length !== roundsMs.floor.length || roundsMs[s].some((r) => r.length === 0));
  if (empty.length > 0) throw new Error(`no latency measured for ${empty.join(', ')} in some round`);
  const quantiles = (s: Setting) => {
    const all = sorted(roundsMs[s].flat());
    return { requests: all.length, p50Ms: quantile(all, 0.5), p99Ms: quantile(all, 0.99) };
  };
  const floor = quantiles('floor');
  const figures = (s: Setting): SettingFigures => {
    const q = quantiles(s);
    const cpu = s === 'floor' ? null : median(cpuUsPerRequest[s]);
    return { ...q, addedP50Ms: q.p50Ms - floor.p50Ms, addedP99Ms: q.p99Ms - floor.p99Ms, cpuUsPerRequest: Number.isNaN(cpu) ? null : cpu };
  };
  const settings = { floor: figures('floor'), webhook: figures('webhook'), go: figures('go') };
  const ratio = {
    addedP50: ratioOf(settings.webhook.addedP50Ms, settings.go.addedP50Ms),
    addedP99: ratioOf(settings.webhook.addedP99Ms, settings.go.addedP99Ms),
    addedP50ByRound: byRound(roundsMs),
  };
  return { settings, ratio };
}

const TITLES: Record<Setting, string> = { floor: 'no webhook (floor)', webhook: 'this webhook', go: 'Go reference' };
const ms = (v: number) => v.toFixed(2);
const times = (r: number | null) => (r === null ? 'n/a (Go added nothing)' : `${r.toFixed(2)}×`);

/** The Markdown table of `results`: p50/p99 and the added latency per setting, then the ratio. */
export function throughApiServerTable(results: ThroughApiServerResults): string {
  const { plan, loadAverage, settings, ratio } = results;
  return [
    `${plan.rounds} round(s) × ${plan.requests} UPDATEs per setting at ${plan.concurrency} at once; load average ${loadAverage.map((l) => l.toFixed(1)).join(' → ')}`,
    '',
    '| setting | UPDATEs | p50 ms | p99 ms | added p50 ms | added p99 ms | webhook CPU µs/UPDATE |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...SETTINGS.map((s) => {
      const f = settings[s];
      return `| ${TITLES[s]} | ${f.requests} | ${ms(f.p50Ms)} | ${ms(f.p99Ms)} | ${ms(f.addedP50Ms)} | ${ms(f.addedP99Ms)} | ${f.cpuUsPerRequest === null ? '' : f.cpuUsPerRequest.toFixed(0)} |`;
    }),
    '',
    `added latency, this webhook ÷ Go reference: p50 ${times(ratio.addedP50)}, p99 ${times(ratio.addedP99)} (target ≤ 1.1×)`,
    `added p50 ratio within each round: median ${times(ratio.addedP50ByRound.median)}, ${times(ratio.addedP50ByRound.min)} to ${times(ratio.addedP50ByRound.max)}`,
  ].join('\n');
}
