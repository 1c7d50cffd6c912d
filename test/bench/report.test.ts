import { compare, targets } from '../../bench/report.js';
import { figures, median, type BenchResults, type PerServer } from '../../bench/results.js';

const per = (webhook: number[], ceiling: number[], go: number[]): PerServer => ({ webhook, ceiling, go });

/** A two-round run in which the webhook does `rps` req/s and `p99` ms against a ceiling of 1000 req/s and 1 ms. */
function run({ rps = [800, 900], p99 = [1.2, 1.2], rss = 60, cpu = 'cpu A' } = {}): BenchResults {
  const body = {
    id: 'a',
    title: 'pool UPDATE, allowed',
    bytes: 4400,
    requestsPerS: { 1: per(rps, [1000, 1000], [2000, 2000]), 16: per(rps, [1000, 1000], [2000, 2000]), 64: per(rps, [1000, 1000], [2000, 2000]) },
    ratePerS: 500,
    p50Ms: per([1, 1], [1, 1], [1, 1]),
    p99Ms: per(p99, [1, 1], [1, 1]),
    maxMs: per([2, 2], [2, 2], [2, 2]),
  };
  return {
    meta: { date: '', quick: false, rounds: 2, node: 'v20', go: 'go1.26', cpu, cores: 2, loadBefore: 0, loadAfter: 0, throughputSeconds: 2, latencySeconds: 3 },
    bodies: [body],
    memory: { idleMiB: per([rss, rss], [40, 40], [20, 20]), peakSmallMiB: per([rss, rss], [40, 40], [20, 20]), peakMiB: per([rss, rss], [40, 40], [20, 20]) },
    readyMs: per([300, 300], [80, 80], [20, 20]),
    micro: [{ name: 'reviewAdmission (a) pool UPDATE, allowed', meanUs: 2, p99Us: 3, samples: 100 }],
    limitProbe: { bytes: 3_146_218, status: { webhook: 413, ceiling: 200, go: 200 } },
  };
}

describe('figures', () => {
  it('takes ratios within each round, then their median', () => {
    const rps16 = figures(run({ rps: [800, 900] })).find((f) => f.key === 'a.rps16')!;
    expect(rps16.vsCeiling).toBeCloseTo(0.85);
    expect(rps16.vsGo).toBeCloseTo(0.425);
    expect(rps16.vsCeilingRange).toEqual([0.8, 0.9]);
  });

  it('median of an even count is the mean of the middle two', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([5])).toBe(5);
    expect(median([])).toBeNaN();
  });
});

describe('compare', () => {
  it('flags lower throughput ratios and higher latency ratios, not the reverse', () => {
    const baseline = run();
    const slower = compare(run({ rps: [600, 700], p99: [2, 2] }), baseline).regressions.map((r) => r.key);
    expect(slower).toEqual(expect.arrayContaining(['a.rps16/ceiling', 'a.rps16/go', 'a.p99/ceiling']));
    const faster = compare(run({ rps: [1000, 1100], p99: [1, 1] }), baseline).regressions;
    expect(faster).toEqual([]);
  });

  it('tolerates changes within 10%', () => {
    expect(compare(run({ rps: [770, 870], p99: [1.3, 1.3] }), run()).regressions).toEqual([]);
  });

  it('compares RSS on any machine, absolute rates only on the same one', () => {
    const other = compare(run({ rps: [600, 700], rss: 80, cpu: 'cpu B' }), run());
    const keys = other.regressions.map((r) => r.key);
    expect(keys).toContain('rss.peak');
    expect(keys).not.toContain('a.rps16');
    expect(other.notes[0]).toMatch(/absolute figures not compared/);
    expect(compare(run({ rps: [600, 700] }), run()).regressions.map((r) => r.key)).toContain('a.rps16');
  });
});

describe('targets', () => {
  it('reports each target as met or not from the ratios', () => {
    const met = (r: BenchResults, name: string) => targets(r).find((t) => t.target.startsWith(name))!.met;
    expect(met(run({ rps: [800, 900] }), '(a) req/s at 16 conn')).toBe(true);
    expect(met(run({ rps: [500, 600] }), '(a) req/s at 16 conn')).toBe(false);
    expect(met(run({ p99: [1.2, 1.2] }), '(a) p99')).toBe(true);
    expect(met(run({ p99: [1.5, 1.5] }), '(a) p99')).toBe(false);
  });
});
