import { PAIRS, pairedTable, summarize, type PairedRun } from '../../bench/paired.js';

const run = (baseCpu: number, otherCpu: number, baseRps = 1000, otherRps = 900): PairedRun => ({
  cpuUsPerRequest: { base: baseCpu, other: otherCpu },
  requestsPerS: { base: baseRps, other: otherRps },
});

describe('summarize', () => {
  const pair = { body: 'b', base: 'floor', other: 'webhook' } as const;

  it('takes the ratio within each run, then the median: a run slowed as a whole does not move it', () => {
    // The second run's machine was twice as slow for both servers.
    const result = summarize(pair, [run(100, 120), run(200, 240), run(100, 130)]);
    expect(result.cpuRatio).toBeCloseTo(1.2);
    expect(result.cpuRatioRange[0]).toBeCloseTo(1.2);
    expect(result.cpuRatioRange[1]).toBeCloseTo(1.3);
    expect(result.requestsPerSRatio).toBeCloseTo(0.9);
  });

  it('is not the ratio of the medians', () => {
    // Ratios 1.3, 1.0, 1.2: median 1.2; the medians (100 and 130) would give 1.3.
    const result = summarize(pair, [run(100, 130), run(300, 300), run(50, 60)]);
    expect(result.cpuRatio).toBeCloseTo(1.2);
  });

  it('refuses no runs', () => {
    expect(() => summarize(pair, [])).toThrow('at least one run');
  });
});

describe('pairedTable', () => {
  it('has a row per pair, naming both servers and the body', () => {
    const table = pairedTable([summarize({ body: 'a', base: 'answer-floor', other: 'webhook' }, [run(100, 110), run(100, 112)])]);
    const rows = table.split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[2]).toBe('| (a) | this webhook ÷ answer floor | 111 / 100 | 1.110× (1.10–1.12) | 0.900× |');
  });
});

describe('PAIRS', () => {
  it('calibrates with an A/A pair, measures the webhook against the express floor and splits it over the Node ceiling, for the allowed and the denied pool body', () => {
    expect(PAIRS).toContainEqual({ body: 'a', base: 'floor', other: 'floor' });
    for (const body of ['a', 'b']) {
      expect(PAIRS).toContainEqual({ body, base: 'floor', other: 'webhook' });
      expect(PAIRS).toContainEqual({ body, base: 'ceiling', other: 'answer-floor' });
      expect(PAIRS).toContainEqual({ body, base: 'answer-floor', other: 'webhook' });
    }
  });
});
