import {
  cpuPlacement,
  PROBED,
  SETTINGS,
  switchesTo,
  throughApiServerFigures,
  throughApiServerTable,
  type Setting,
  type ThroughApiServerResults,
  type Webhook,
} from '../../bench/through-apiserver-summary.js';

const cpu: Record<Webhook, number[]> = { webhook: [900, 800, 1000], go: [400], goHttp1: [600], expressFloor: [450], nodeCeiling: [300] };
/** `n` latencies: 1..n ms shifted by `addMs`, shuffled (the figures must not rely on order). */
const latencies = (n: number, addMs: number): number[] => Array.from({ length: n }, (_, i) => ((i * 37) % n) + 1 + addMs);
/** One round of 100 latencies per setting, each shifted by its `addedMs` (0 for a setting not named). */
const oneRound = (addedMs: Partial<Record<Setting, number>>): Record<Setting, number[][]> => {
  const round = (s: Setting) => [latencies(100, addedMs[s] ?? 0)];
  return {
    floor: round('floor'),
    webhook: round('webhook'),
    go: round('go'),
    goHttp1: round('goHttp1'),
    expressFloor: round('expressFloor'),
    nodeCeiling: round('nodeCeiling'),
  };
};
const ratio = (latency: number | null, cpuPerUpdate: number | null) => ({
  addedP50: latency,
  addedP99: latency,
  addedP50ByRound: { median: latency, min: latency, max: latency, rounds: latency === null ? 0 : 1 },
  cpuPerUpdate,
});

describe('throughApiServerFigures', () => {
  it('takes p50 and p99 of each setting and what each webhook adds to the floor', () => {
    const figures = throughApiServerFigures(oneRound({ webhook: 3, go: 2, goHttp1: 2, expressFloor: 2, nodeCeiling: 2 }), cpu);
    expect(figures.settings.floor).toEqual({ requests: 100, p50Ms: 50, p99Ms: 99, addedP50Ms: 0, addedP99Ms: 0, cpuUsPerRequest: null });
    expect(figures.settings.webhook).toMatchObject({ p50Ms: 53, p99Ms: 102, addedP50Ms: 3, addedP99Ms: 3, cpuUsPerRequest: 900 });
    expect(figures.settings.go.cpuUsPerRequest).toBe(400);
    expect(figures.ratio).toEqual(ratio(1.5, 2.25));
  });

  it('takes the ratio to each other server apart: Go over HTTP/1.1, the express floor, the Node ceiling', () => {
    const figures = throughApiServerFigures(oneRound({ webhook: 3, go: 2, goHttp1: 6, expressFloor: 1, nodeCeiling: 4 }), cpu);
    expect(figures.settings.goHttp1).toMatchObject({ addedP50Ms: 6, cpuUsPerRequest: 600 });
    expect(figures.ratio).toEqual(ratio(1.5, 2.25));
    expect(figures.against).toEqual({ goHttp1: ratio(0.5, 1.5), expressFloor: ratio(3, 2), nodeCeiling: ratio(0.75, 3) });
  });

  it('pools the rounds for p50 and p99, and takes the ratio within each round for addedP50ByRound', () => {
    // The second round's machine was 10 ms slower for every setting: within it, the ratio is still 2.
    const rounds = oneRound({ webhook: 2, go: 1, goHttp1: 1, expressFloor: 1, nodeCeiling: 1 });
    const slower = oneRound({ floor: 10, webhook: 12, go: 11, goHttp1: 11, expressFloor: 11, nodeCeiling: 11 });
    for (const s of Object.keys(rounds) as Setting[]) rounds[s].push(...slower[s]);
    const figures = throughApiServerFigures(rounds, cpu);
    expect(figures.settings.webhook.requests).toBe(200);
    expect(figures.ratio.addedP50ByRound).toEqual({ median: 2, min: 2, max: 2, rounds: 2 });
  });

  it('gives no ratio where the other server added nothing, rather than a division by zero or a sign flip', () => {
    const figures = throughApiServerFigures(oneRound({ floor: 1, webhook: 2, expressFloor: 1, nodeCeiling: 1, goHttp1: 1 }), cpu);
    expect(figures.ratio).toEqual(ratio(null, 2.25));
    const results: ThroughApiServerResults = {
      date: 'd',
      loadAverage: [1, 2],
      cpus: cpuPlacement(2),
      node: 'v20',
      go: 'go1',
      plan: { rounds: 1, concurrency: 1, requests: 100, warmup: 0 },
      protocols: { webhook: 'http/1.1', go: 'h2', goHttp1: 'http/1.1', expressFloor: 'http/1.1', nodeCeiling: 'http/1.1' },
      ...figures,
    };
    const table = throughApiServerTable(results);
    expect(table).toContain('p50 n/a (one of the two added nothing)');
    expect(table).toContain('CPUs: the API server, its writers and the bench on 0, each webhook on 1');
    expect(throughApiServerTable({ ...results, cpus: null })).toContain('CPUs: every process shares every CPU');
    expect(table).toContain('this webhook http/1.1, Go reference h2, Go reference, HTTP/1.1 http/1.1, express floor http/1.1');
  });

  it('gives no ratio where this webhook added nothing or less than the floor, and counts the rounds that gave one', () => {
    const rounds = oneRound({ floor: 3, webhook: 1, go: 5, goHttp1: 5, expressFloor: 5, nodeCeiling: 5 });
    const faster = oneRound({ webhook: 4, go: 2, goHttp1: 2, expressFloor: 2, nodeCeiling: 2 });
    for (const s of Object.keys(rounds) as Setting[]) rounds[s].push(...faster[s]);
    expect(throughApiServerFigures(rounds, cpu).ratio.addedP50ByRound).toEqual({ median: 2, min: 2, max: 2, rounds: 1 });
    const below = throughApiServerFigures(oneRound({ floor: 3, webhook: 1, go: 5, goHttp1: 5, expressFloor: 5, nodeCeiling: 5 }), cpu);
    expect(below.ratio).toEqual(ratio(null, 2.25));
  });

  it('refuses a setting without a latency in a round', () => {
    const none = oneRound({});
    none.webhook = [[]];
    expect(() => throughApiServerFigures(none, cpu)).toThrow('no latency measured for webhook in some round');
  });
});

describe('cpuPlacement', () => {
  it('gives the webhooks the last CPU and everything else the others', () => {
    expect(cpuPlacement(2)).toEqual({ apiServer: '0', webhooks: '1' });
    expect(cpuPlacement(8)).toEqual({ apiServer: '0-6', webhooks: '7' });
  });

  it('places nothing on a machine of one CPU', () => {
    expect(cpuPlacement(1)).toBeNull();
  });
});

describe('switchesTo', () => {
  it('goes straight to a setting the probes tell apart from the current one', () => {
    expect(switchesTo(undefined, 'go')).toEqual(['go']);
    expect(switchesTo('webhook', 'goHttp1')).toEqual(['goHttp1']);
    expect(switchesTo('go', 'go')).toEqual(['go']);
  });

  it('passes through a setting the probes tell apart when they would confuse the two', () => {
    expect(switchesTo('go', 'goHttp1')).toEqual(['floor', 'goHttp1']);
    expect(switchesTo('expressFloor', 'nodeCeiling')).toEqual(['webhook', 'nodeCeiling']);
    expect(switchesTo('floor', 'expressFloor')).toEqual(['webhook', 'expressFloor']);
  });

  it('ends at the setting asked for, each step answered by the probes otherwise than the one before, for every pair', () => {
    for (const from of SETTINGS)
      for (const to of SETTINGS.filter((s) => s !== from)) {
        const path = [from, ...switchesTo(from, to)];
        expect(path.at(-1)).toBe(to);
        for (let i = 1; i < path.length; i++) expect(`${from}→${to}: ${PROBED[path[i]!]}`).not.toBe(`${from}→${to}: ${PROBED[path[i - 1]!]}`);
      }
  });
});
