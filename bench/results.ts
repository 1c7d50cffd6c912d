/**
 * The shape of `bench/results/*.json`, and the figures derived from it: medians over the
 * rounds, and the ratios of this webhook to the express floor, the Node ceiling and the
 * Go reference taken within each round (the servers ran side by side, so machine noise
 * shared by the four cancels out) and then their median.
 */
import type { MicroResult } from './micro.js';
import type { ServerId } from './servers.js';

export const CONNECTIONS = [1, 16, 64] as const;
/** The connection count whose runs also measure CPU time per request. */
export const CPU_CONNECTIONS = 16;

/**
 * One value per round, per server. Results saved before the express floor existed have
 * no `floor`: its figures and ratios are then NaN.
 */
export type PerServer = Record<ServerId, number[]>;

export interface BodyResults {
  id: string;
  title: string;
  bytes: number;
  /** requests/s by connection count. */
  requestsPerS: Record<string, PerServer>;
  /**
   * Server CPU time (user + system) per request at {@link CPU_CONNECTIONS} connections,
   * microseconds: what a request costs, which a busy neighbour changes much less than
   * req/s. Absent in results saved before it was measured.
   */
  cpuUsPerRequest?: PerServer;
  /** Offered rate of the latency runs, requests/s. */
  ratePerS: number;
  p50Ms: PerServer;
  p99Ms: PerServer;
  maxMs: PerServer;
}

export interface BenchResults {
  meta: {
    date: string;
    quick: boolean;
    rounds: number;
    node: string;
    go: string;
    cpu: string;
    cores: number;
    /** 1-minute load average before and after: how busy the shared machine was. */
    loadBefore: number;
    loadAfter: number;
    throughputSeconds: number;
    latencySeconds: number;
  };
  bodies: BodyResults[];
  /** After (a)–(c) ran, and at the end (after the ~1 MiB body (d) too). */
  memory: { idleMiB: PerServer; peakSmallMiB: PerServer; peakMiB: PerServer };
  readyMs: PerServer;
  micro: MicroResult[];
  /** HTTP status each server gave the pool UPDATE at etcd's size limit (see bodies.ts). */
  limitProbe: { bytes: number; status: Record<ServerId, number> };
}

/** The value at quantile `q` (0..1) of ascending `sorted`, nearest rank. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A figure of the table: one measured quantity for the four servers. */
export interface Figure {
  /** Stable key for --compare, e.g. `a.rps16`. */
  key: string;
  body: string;
  label: string;
  better: 'higher' | 'lower';
  /** Median over the rounds, per server (NaN for a server it does not apply to). */
  value: Record<ServerId, number>;
  /** Median over rounds of webhook ÷ floor, webhook ÷ ceiling and webhook ÷ Go in the same round. */
  vsFloor: number;
  vsCeiling: number;
  vsGo: number;
  /** Lowest and highest per-round webhook ÷ floor: the noise between rounds. */
  vsFloorRange: [number, number];
}

function figure(key: string, body: string, label: string, better: Figure['better'], per: PerServer): Figure {
  const rounds = per.webhook.length;
  const ratios = (other: ServerId) => Array.from({ length: rounds }, (_, r) => per.webhook[r]! / (per[other]?.[r] ?? NaN));
  const vsFloor = ratios('floor');
  return {
    key,
    body,
    label,
    better,
    value: { webhook: median(per.webhook), floor: median(per.floor ?? []), ceiling: median(per.ceiling), go: median(per.go) },
    vsFloor: median(vsFloor),
    vsCeiling: median(ratios('ceiling')),
    vsGo: median(ratios('go')),
    vsFloorRange: [Math.min(...vsFloor), Math.max(...vsFloor)],
  };
}

/** Every figure of a run, in table order. */
export function figures(results: BenchResults): Figure[] {
  const out: Figure[] = [];
  for (const b of results.bodies) {
    const body = `(${b.id}) ${b.title}, ${formatBytes(b.bytes)}`;
    for (const c of CONNECTIONS) out.push(figure(`${b.id}.rps${c}`, body, `req/s, ${c} conn`, 'higher', b.requestsPerS[c]!));
    if (b.cpuUsPerRequest) out.push(figure(`${b.id}.cpu${CPU_CONNECTIONS}`, body, `CPU µs/request, ${CPU_CONNECTIONS} conn`, 'lower', b.cpuUsPerRequest));
    for (const [q, per] of [
      ['p50', b.p50Ms],
      ['p99', b.p99Ms],
      ['max', b.maxMs],
    ] as const) {
      out.push(figure(`${b.id}.${q}`, body, `${q} ms at ${b.ratePerS}/s`, 'lower', per));
    }
  }
  const all = 'all bodies';
  out.push(figure('rss.idle', all, 'RSS idle, MiB', 'lower', results.memory.idleMiB));
  out.push(figure('rss.peakSmall', all, 'RSS peak (a)–(c), MiB', 'lower', results.memory.peakSmallMiB));
  out.push(figure('rss.peak', all, 'RSS peak incl. (d), MiB', 'lower', results.memory.peakMiB));
  out.push(figure('ready', all, 'start to /readyz, ms', 'lower', results.readyMs));
  return out;
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}
