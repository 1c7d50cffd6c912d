import {
  throughApiServerFigures,
  throughApiServerTable,
  type Setting,
  type ThroughApiServerResults,
  type Webhook,
} from '../../bench/through-apiserver-summary.js';

const cpu: Record<Webhook, number[]> = { webhook: [900, 800, 1000], go: [400] };
/** `n` latencies: 1..n ms shifted by `addMs`, shuffled (the figures must not rely on order). */
const latencies = (n: number, addMs: number): number[] => Array.from({ length: n }, (_, i) => ((i * 37) % n) + 1 + addMs);
const oneRound = (floorMs: number, webhookMs: number, goMs: number): Record<Setting, number[][]> => ({
  floor: [latencies(100, floorMs)],
  webhook: [latencies(100, webhookMs)],
  go: [latencies(100, goMs)],
});

describe('throughApiServerFigures', () => {
  it('takes p50 and p99 of each setting and what each webhook adds to the floor', () => {
    const figures = throughApiServerFigures(oneRound(0, 3, 2), cpu);
    expect(figures.settings.floor).toEqual({ requests: 100, p50Ms: 50, p99Ms: 99, addedP50Ms: 0, addedP99Ms: 0, cpuUsPerRequest: null });
    expect(figures.settings.webhook).toMatchObject({ p50Ms: 53, p99Ms: 102, addedP50Ms: 3, addedP99Ms: 3, cpuUsPerRequest: 900 });
    expect(figures.settings.go.cpuUsPerRequest).toBe(400);
    expect(figures.ratio).toEqual({ addedP50: 1.5, addedP99: 1.5, addedP50ByRound: { median: 1.5, min: 1.5, max: 1.5 } });
  });

  it('pools the rounds for p50 and p99, and takes the ratio within each round for addedP50ByRound', () => {
    // The second round's machine was 10 ms slower for every setting: within it, the ratio is still 2.
    const rounds: Record<Setting, number[][]> = {
      floor: [latencies(100, 0), latencies(100, 10)],
      webhook: [latencies(100, 2), latencies(100, 12)],
      go: [latencies(100, 1), latencies(100, 11)],
    };
    const figures = throughApiServerFigures(rounds, cpu);
    expect(figures.settings.webhook.requests).toBe(200);
    expect(figures.ratio.addedP50ByRound).toEqual({ median: 2, min: 2, max: 2 });
  });

  it('gives no ratio where the Go reference added nothing, rather than a division by zero or a sign flip', () => {
    const figures = throughApiServerFigures(oneRound(1, 2, 0), cpu);
    expect(figures.ratio).toEqual({ addedP50: null, addedP99: null, addedP50ByRound: { median: null, min: null, max: null } });
    const results: ThroughApiServerResults = {
      date: 'd',
      loadAverage: [1, 2],
      node: 'v20',
      go: 'go1',
      plan: { rounds: 1, concurrency: 1, requests: 100, warmup: 0 },
      ...figures,
    };
    expect(throughApiServerTable(results)).toContain('p50 n/a (Go added nothing)');
  });

  it('refuses a setting without a latency in a round', () => {
    const none: Record<Setting, number[][]> = { floor: [[1]], webhook: [[]], go: [[1]] };
    expect(() => throughApiServerFigures(none, cpu)).toThrow('no latency measured for webhook in some round');
  });
});
