import { compare, targets } from '../../bench/report.js';
import { figures, median, type BenchResults, type PerServer } from '../../bench/results.js';

/** Per-round values: the webhook's, an express floor at 80% of the ceiling's, the ceiling's and Go's. */
const per = (webhook: number[], ceiling: number[], go: number[], floor = ceiling.map((v) => v * 0.8)): PerServer => ({ webhook, floor, ceiling, go });

/**
 * A two-round run in which the webhook does `rps` req/s on (a) and (c) and `p99` ms on (a)
 * against a ceiling of 1000 req/s and 1 ms (a floor of 800 req/s and 0.8 ms).
 */
function run({ rps = [800, 900], p99 = [1.2, 1.2], rss = 60, cpu = 'cpu A' } = {}): BenchResults {
  const body = (id: string, title: string) => ({
    id,
    title,
    bytes: 4400,
    requestsPerS: { 1: per(rps, [1000, 1000], [2000, 2000]), 16: per(rps, [1000, 1000], [2000, 2000]), 64: per(rps, [1000, 1000], [2000, 2000]) },
    ratePerS: 500,
    p50Ms: per([1, 1], [1, 1], [1, 1]),
    p99Ms: per(p99, [1, 1], [1, 1]),
    maxMs: per([2, 2], [2, 2], [2, 2]),
  });
  return {
    meta: { date: '', quick: false, rounds: 2, node: 'v20', go: 'go1.26', cpu, cores: 2, loadBefore: 0, loadAfter: 0, throughputSeconds: 2, latencySeconds: 3 },
    bodies: [body('a', 'pool UPDATE, allowed'), body('c', 'spiderpool-conf UPDATE')],
    memory: {
      idleMiB: per([rss, rss], [40, 40], [20, 20], [50, 50]),
      peakSmallMiB: per([rss, rss], [40, 40], [20, 20], [50, 50]),
      peakMiB: per([rss, rss], [40, 40], [20, 20], [50, 50]),
    },
    readyMs: per([300, 300], [80, 80], [20, 20]),
    micro: [{ name: 'reviewAdmission (a) pool UPDATE, allowed', meanUs: 2, p99Us: 3, samples: 100 }],
    limitProbe: { bytes: 3_146_218, status: { webhook: 413, floor: 200, ceiling: 200, go: 200 } },
  };
}

describe('figures', () => {
  it('takes ratios within each round, then their median', () => {
    const rps16 = figures(run({ rps: [800, 900] })).find((f) => f.key === 'a.rps16')!;
    expect(rps16.vsFloor).toBeCloseTo(1.0625);
    expect(rps16.vsCeiling).toBeCloseTo(0.85);
    expect(rps16.vsGo).toBeCloseTo(0.425);
    expect(rps16.vsFloorRange).toEqual([1, 1.125]);
  });

  it('reads results saved before the express floor existed, with NaN for the floor', () => {
    const old = run();
    for (const b of old.bodies) delete (b.requestsPerS[16] as Partial<PerServer>).floor;
    const rps16 = figures(old).find((f) => f.key === 'a.rps16')!;
    expect(rps16.value.floor).toBeNaN();
    expect(rps16.vsFloor).toBeNaN();
    expect(rps16.vsCeiling).toBeCloseTo(0.85);
    expect(compare(run(), old).regressions).toEqual([]);
  });

  it('shows CPU time per request when the run measured it, as a ratio where lower is better', () => {
    expect(figures(run()).some((f) => f.key === 'a.cpu16')).toBe(false);
    const measured = run();
    measured.bodies[0]!.cpuUsPerRequest = per([120, 130], [40, 40], [60, 60], [100, 100]);
    const cpu = figures(measured).find((f) => f.key === 'a.cpu16')!;
    expect(cpu.better).toBe('lower');
    expect(cpu.vsFloor).toBeCloseTo(1.25);
    expect(compare(measured, run()).regressions).toEqual([]);
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
    expect(slower).toEqual(expect.arrayContaining(['a.rps16/floor', 'a.rps16/ceiling', 'a.rps16/go', 'a.p99/floor', 'a.p99/ceiling']));
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
  const met = (r: BenchResults, name: string, baseline?: BenchResults) => targets(r, baseline).find((t) => t.target.startsWith(name))?.met;

  it('judges the pool reviews against the express floor', () => {
    expect(met(run({ rps: [720, 730] }), '(a) req/s at 16 conn ≥ 0.9× express floor')).toBe(true); // 0.9×, 0.91×
    expect(met(run({ rps: [700, 710] }), '(a) req/s at 16 conn')).toBe(false);
    expect(met(run({ p99: [0.88, 0.88] }), '(a) p99 at 500/s ≤ 1.1× express floor')).toBe(true);
    expect(met(run({ p99: [0.9, 0.9] }), '(a) p99')).toBe(false);
  });

  it('judges peak RSS against the express floor', () => {
    expect(met(run({ rss: 60 }), 'RSS peak (a)–(c) ≤ 1.2× express floor')).toBe(true);
    expect(met(run({ rss: 61 }), 'RSS peak (a)–(c)')).toBe(false);
    expect(met(run({ rss: 61 }), 'RSS peak incl. (d)')).toBe(false);
  });

  it('judges the ConfigMap review against the baseline it replaces, when there is one', () => {
    expect(met(run(), '(c) req/s')).toBeUndefined();
    expect(met(run({ rps: [800, 900] }), '(c) req/s', run({ rps: [880, 990] }))).toBe(true); // 10% worse
    expect(met(run({ rps: [700, 800] }), '(c) req/s', run({ rps: [880, 990] }))).toBe(false);
    expect(met(run({ p99: [1.3, 1.3] }), '(c) p99', run({ p99: [1.2, 1.2] }))).toBe(true);
    expect(met(run({ p99: [1.4, 1.4] }), '(c) p99', run({ p99: [1.2, 1.2] }))).toBe(false);
  });
});

describe('the conf.yml cost targets', () => {
  const withCost = (small: number, large: number): BenchResults => {
    const r = run();
    const name = (chars: number) => `readConfYml, "-," in a flow sequence, ${chars} characters`;
    r.micro.push({ name: name(15_000), meanUs: small, p99Us: small, samples: 5 }, { name: name(60_000), meanUs: large, p99Us: large, samples: 5 });
    return r;
  };
  const costTargets = (r: BenchResults) => targets(r).filter((t) => t.target.startsWith('readConfYml'));

  it('judges hostile text by the ratio of its times at 60 000 and 15 000 characters: linear passes, quadratic fails', () => {
    expect(costTargets(withCost(1000, 7900))).toEqual([
      { target: 'readConfYml, "-," in a flow sequence: 60000 ÷ 15000 characters ≤ 8× (linear 4×, quadratic 16×)', measured: '7.90×', met: true },
    ]);
    expect(costTargets(withCost(1000, 16_000))[0]?.met).toBe(false);
  });

  it('gives them no per-call time target, and none without both sizes', () => {
    expect(targets(withCost(1000, 4000)).some((t) => t.target.startsWith('readConfYml') && t.target.includes('µs'))).toBe(false);
    expect(costTargets(run())).toEqual([]);
  });
});
