/**
 * The figures of `npm run bench -- --through-apiserver` (through-apiserver.ts) from the
 * latencies it measured: pure, no I/O.
 */
import { median, quantile } from './results.js';

/**
 * What guards the pools in a phase: nothing (the floor), this webhook, the Go reference, and
 * what splits the gap between them: the Go reference with HTTP/2 off (`GODEBUG=http2server=0`,
 * called over HTTP/1.1 as this webhook is), the express floor and the Node ceiling (allow
 * everything; see servers.ts). In rotation order: no two that the probes confuse are adjacent.
 */
export type Setting = 'floor' | 'webhook' | 'go' | 'goHttp1' | 'expressFloor' | 'nodeCeiling';
export const SETTINGS: readonly Setting[] = ['floor', 'webhook', 'expressFloor', 'go', 'nodeCeiling', 'goHttp1'];
export type Webhook = Exclude<Setting, 'floor'>;
export const WEBHOOKS = SETTINGS.filter((s): s is Webhook => s !== 'floor');
/** The servers this webhook is compared with besides the Go reference (the target's). */
export type Reference = Exclude<Webhook, 'webhook' | 'go'>;
const REFERENCES: readonly Reference[] = ['goHttp1', 'expressFloor', 'nodeCeiling'];

/**
 * What the bench's two probes (through-apiserver.ts) tell of a setting: whether the ConfigMap
 * probe is refused and whether the pool probe is: both Go settings answer alike, and the
 * servers allowing everything as no webhook does.
 */
export const PROBED = {
  floor: 'floor',
  webhook: 'webhook',
  go: 'go',
  goHttp1: 'go',
  expressFloor: 'floor',
  nodeCeiling: 'floor',
} as const satisfies Record<Setting, Setting>;
export type Probed = (typeof PROBED)[Setting];

/**
 * The settings to register in turn to go from `current` to `next`, each seen applied by the
 * probes: between two they confuse, first one they tell apart from both.
 */
export function switchesTo(current: Setting | undefined, next: Setting): Setting[] {
  if (current === undefined || current === next || PROBED[current] !== PROBED[next]) return [next];
  return [SETTINGS.find((s) => PROBED[s] !== PROBED[next])!, next];
}

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

/**
 * The CPUs the processes run on (`taskset` lists): the API server, the writers and the bench
 * on `apiServer`, every webhook on `webhooks`, as in a cluster, where the webhook's pod does not
 * run on the API server's cores; without it, a webhook's CPU is taken from the API server's
 * and counted in its added latency (docs/performance.md).
 */
export interface CpuPlacement {
  apiServer: string;
  webhooks: string;
}

/** The webhooks on the last of `cpus` CPUs, everything else on the others; null (all share every CPU) with fewer than 2. */
export function cpuPlacement(cpus: number): CpuPlacement | null {
  if (cpus < 2) return null;
  return { apiServer: cpus === 2 ? '0' : `0-${cpus - 2}`, webhooks: String(cpus - 1) };
}

export interface ThroughApiServerResults {
  date: string;
  /** One-minute load average before and after the run. */
  loadAverage: [number, number];
  /** Where the processes ran; null when all shared every CPU. */
  cpus: CpuPlacement | null;
  node: string;
  go: string;
  plan: ThroughApiServerPlan;
  /** The protocol each webhook's server settles on by ALPN when offered `h2` and `http/1.1`. */
  protocols: Record<Webhook, string>;
  settings: Record<Setting, SettingFigures>;
  /** This webhook ÷ the Go reference (target ≤ 1.1 for the added latency). */
  ratio: Ratio;
  /** This webhook ÷ each other server. */
  against: Record<Reference, Ratio>;
}

/**
 * This webhook's added latency ÷ another's, over all rounds; `addedP50ByRound` the same
 * within each round (its phases adjacent in time), median and range over the `rounds` where
 * both added latency; null where either added none (a negative ratio means nothing).
 * `cpuPerUpdate`: the ratio of their CPU µs per UPDATE.
 */
export interface Ratio {
  addedP50: number | null;
  addedP99: number | null;
  addedP50ByRound: { median: number | null; min: number | null; max: number | null; rounds: number };
  cpuPerUpdate: number | null;
}

const ratioOf = (ours: number, other: number): number | null => (ours > 0 && other > 0 && Number.isFinite(ours) ? ours / other : null);
const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const p50 = (values: readonly number[]) => quantile(sorted(values), 0.5);

/** The ratio ours ÷ `reference` of the added p50 in each round where both added latency: median, min, max, and how many rounds. */
function byRound(roundsMs: Record<Setting, number[][]>, reference: Webhook): Ratio['addedP50ByRound'] {
  const ratios = roundsMs.floor
    .map((floor, r) => ratioOf(p50(roundsMs.webhook[r]!) - p50(floor), p50(roundsMs[reference][r]!) - p50(floor)))
    .filter((x): x is number => x !== null);
  if (ratios.length === 0) return { median: null, min: null, max: null, rounds: 0 };
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios), rounds: ratios.length };
}

/**
 * The figures of each setting from the latencies measured under it (ms, any order, one
 * array per round; p50 and p99 from all rounds pooled, so that p99 rests on rounds ×
 * requests samples), and the ratios ours ÷ each other server; `cpuUsPerRequest` holds each webhook's CPU µs
 * per UPDATE, one value per round.
 *
 * @throws Error when a setting has no latency in some round.
 */
export function throughApiServerFigures(
  roundsMs: Record<Setting, number[][]>,
  cpuUsPerRequest: Record<Webhook, number[]>,
): Pick<ThroughApiServerResults, 'settings' | 'ratio' | 'against'> {
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
  const settings = Object.fromEntries(SETTINGS.map((s) => [s, figures(s)])) as Record<Setting, SettingFigures>;
  const ratioTo = (other: Webhook): Ratio => ({
    addedP50: ratioOf(settings.webhook.addedP50Ms, settings[other].addedP50Ms),
    addedP99: ratioOf(settings.webhook.addedP99Ms, settings[other].addedP99Ms),
    addedP50ByRound: byRound(roundsMs, other),
    cpuPerUpdate: ratioOf(settings.webhook.cpuUsPerRequest ?? NaN, settings[other].cpuUsPerRequest ?? NaN),
  });
  return { settings, ratio: ratioTo('go'), against: Object.fromEntries(REFERENCES.map((r) => [r, ratioTo(r)])) as Record<Reference, Ratio> };
}

const TITLES: Record<Setting, string> = {
  floor: 'no webhook (floor)',
  webhook: 'this webhook',
  go: 'Go reference',
  goHttp1: 'Go reference, HTTP/1.1',
  expressFloor: 'express floor',
  nodeCeiling: 'Node ceiling',
};
const ms = (v: number) => v.toFixed(2);
const times = (r: number | null) => (r === null ? 'n/a (one of the two added nothing)' : `${r.toFixed(2)}×`);

/** The Markdown table of `results`: p50/p99 and the added latency per setting, then the ratio. */
export function throughApiServerTable(results: ThroughApiServerResults): string {
  const { plan, loadAverage, cpus, protocols, settings, ratio, against } = results;
  return [
    `${plan.rounds} round(s) × ${plan.requests} UPDATEs per setting at ${plan.concurrency} at once; load average ${loadAverage.map((l) => l.toFixed(1)).join(' → ')}`,
    cpus === null
      ? 'CPUs: every process shares every CPU'
      : `CPUs: the API server, its writers and the bench on ${cpus.apiServer}, each webhook on ${cpus.webhooks}`,
    `ALPN, offered h2 and http/1.1: ${Object.entries(protocols)
      .map(([id, p]) => `${TITLES[id as Webhook]} ${p}`)
      .join(', ')}`,
    '',
    '| setting | UPDATEs | p50 ms | p99 ms | added p50 ms | added p99 ms | server CPU µs/UPDATE |',
    '|---|--:|--:|--:|--:|--:|--:|',
    ...SETTINGS.map((s) => {
      const f = settings[s];
      return `| ${TITLES[s]} | ${f.requests} | ${ms(f.p50Ms)} | ${ms(f.p99Ms)} | ${ms(f.addedP50Ms)} | ${ms(f.addedP99Ms)} | ${f.cpuUsPerRequest === null ? '' : f.cpuUsPerRequest.toFixed(0)} |`;
    }),
    '',
    `added latency, this webhook ÷ Go reference: p50 ${times(ratio.addedP50)}, p99 ${times(ratio.addedP99)} (target ≤ 1.1×)`,
    `added p50 ratio within each round (${ratio.addedP50ByRound.rounds} where both added): median ${times(ratio.addedP50ByRound.median)}, ${times(ratio.addedP50ByRound.min)} to ${times(ratio.addedP50ByRound.max)}; CPU per UPDATE ${times(ratio.cpuPerUpdate)}`,
    ...REFERENCES.map(
      (r) =>
        `this webhook ÷ ${TITLES[r]}: added p50 ${times(against[r].addedP50)} (within each round median ${times(against[r].addedP50ByRound.median)}), CPU per UPDATE ${times(against[r].cpuPerUpdate)}`,
    ),
  ].join('\n');
}
