/**
 * What a run prints: the Markdown table of figures with the webhook's ratios to the
 * express floor, the Node ceiling and the Go reference, the targets of the lean review path, and
 * `--compare` against a baseline.
 */
import { confYmlCostTargets, isConfYmlCost } from './conf-yml-cost.js';
import { figures, formatBytes, type BenchResults, type Figure } from './results.js';

function num(value: number): string {
  if (!Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}×` : '–');

/** The results table (Markdown). Ratios are webhook ÷ other server, from the same round. */
export function resultsTable(results: BenchResults): string {
  const lines = [
    '| Body | Figure | webhook | express floor | Node ceiling | Go reference | webhook ÷ floor | webhook ÷ ceiling | webhook ÷ Go |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const f of figures(results)) {
    const spread = results.meta.rounds > 1 ? ` (${f.vsFloorRange.map((r) => r.toFixed(2)).join('–')})` : '';
    const { webhook, floor, ceiling, go } = f.value;
    lines.push(
      `| ${f.body} | ${f.label} | ${num(webhook)} | ${num(floor)} | ${num(ceiling)} | ${num(go)} | ${ratio(f.vsFloor)}${spread} | ${ratio(f.vsCeiling)} | ${ratio(f.vsGo)} |`,
    );
  }
  lines.push('', '| In-process micro-benchmark | mean µs/call | p99 µs/call |', '|---|--:|--:|');
  for (const m of results.micro) lines.push(`| ${m.name} | ${num(m.meanUs)} | ${num(m.p99Us)} |`);
  const { loadBefore, loadAfter, cores } = results.meta;
  lines.push(
    '',
    `1-minute load average: ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${cores} cores${Math.max(loadBefore, loadAfter) > cores ? ': the machine was busy, expect noise' : ''}.`,
  );
  const { bytes, status } = results.limitProbe;
  lines.push(
    '',
    `Pool UPDATE at etcd's size limit (${bytes} bytes, ${formatBytes(bytes)}): webhook HTTP ${status.webhook}, ` +
      `express floor HTTP ${status.floor ?? '–'}, Node ceiling HTTP ${status.ceiling}, Go reference HTTP ${status.go}.`,
  );
  return lines.join('\n');
}

/**
 * The targets of the lean review path, each with its measured value and whether it is met: the pool
 * reviews (a) and (b) against the express floor (throughput at 16 connections, p99 at the
 * paced rate), peak RSS against the floor's, and, given the `baseline` this run replaces,
 * the ConfigMap review (c) not more than 10% worse than there (as ratios to the Node
 * ceiling, which every baseline has). The pure core's micro-benchmarks and the start time
 * keep the bounds of the performance comparison (docs/performance.md); hostile conf.yml
 * text, a ratio of its times at two sizes (conf-yml-cost.ts).
 */
export function targets(results: BenchResults, baseline?: BenchResults): { target: string; measured: string; met: boolean }[] {
  const byKey = new Map(figures(results).map((f) => [f.key, f]));
  const before = new Map(baseline === undefined ? [] : figures(baseline).map((f) => [f.key, f]));
  const get = (key: string) => byKey.get(key)!;
  const out: { target: string; measured: string; met: boolean }[] = [];
  for (const id of ['a', 'b']) {
    const body = results.bodies.find((b) => b.id === id);
    if (body === undefined) continue;
    const rps = get(`${id}.rps16`).vsFloor;
    out.push({ target: `(${id}) req/s at 16 conn ≥ 0.9× express floor`, measured: ratio(rps), met: rps >= 0.9 });
    const p99 = get(`${id}.p99`).vsFloor;
    out.push({ target: `(${id}) p99 at ${body.ratePerS}/s ≤ 1.1× express floor`, measured: ratio(p99), met: p99 <= 1.1 });
  }
  for (const [key, label] of [
    ['rss.peakSmall', '(a)–(c)'],
    ['rss.peak', 'incl. (d)'],
  ] as const) {
    const peak = get(key).vsFloor;
    out.push({ target: `RSS peak ${label} ≤ 1.2× express floor`, measured: ratio(peak), met: peak <= 1.2 });
  }
  for (const [key, what] of [
    ['c.rps16', 'req/s at 16 conn'],
    ['c.p99', 'p99'],
  ] as const) {
    const was = before.get(key)?.vsCeiling;
    if (was === undefined || !byKey.has(key)) continue;
    const now = get(key).vsCeiling;
    const met = get(key).better === 'higher' ? now >= was * 0.9 : now <= was * 1.1;
    out.push({ target: `(c) ${what} ÷ ceiling no more than 10% worse than the baseline's ${ratio(was)}`, measured: ratio(now), met });
  }
  for (const m of results.micro.filter((m) => !isConfYmlCost(m.name))) {
    // A Go duration is parsed within a microsecond; a review (the reviewer's, the candidate pools') within 50.
    const limitUs = m.name.startsWith('parseGoDuration') ? 1 : 50;
    out.push({ target: `${m.name} < ${limitUs} µs`, measured: `${num(m.meanUs)} µs`, met: m.meanUs < limitUs });
  }
  for (const t of confYmlCostTargets(results.micro)) out.push({ target: t.target, measured: ratio(t.ratio), met: t.met });
  const ready = get('ready').value.webhook;
  out.push({ target: 'start to ready < 1 s', measured: `${num(ready)} ms`, met: ready < 1000 });
  return out;
}

export function targetsTable(results: BenchResults, baseline?: BenchResults): string {
  return [
    '| Target | Measured | Met |',
    '|---|--:|---|',
    ...targets(results, baseline).map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`),
  ].join('\n');
}

/** A figure more than `tolerance` worse than the baseline's. */
export interface Regression {
  key: string;
  what: string;
  baseline: number;
  latest: number;
}

/** The machine a run's absolute figures belong to. */
function machine(results: BenchResults): string {
  return `${results.meta.cpu} ×${results.meta.cores}, node ${results.meta.node}`;
}

/**
 * Compares `latest` with `baseline`. The webhook's ratios to the floor, the ceiling and Go
 * are compared always (to the floor only when the baseline has it): they come from servers measured side by side, so they carry over
 * between machines and between quiet and busy hours. RSS (MiB) is compared always too (it
 * depends on Node and the code, not the CPU). Absolute times and rates (req/s, ms, µs)
 * are compared only when both runs are from the same machine and Node; otherwise they
 * say more about the machine than the code. "Worse" is lower for req/s (and their
 * ratios), higher for everything else.
 */
export function compare(latest: BenchResults, baseline: BenchResults, tolerance = 0.1): { regressions: Regression[]; notes: string[] } {
  const sameMachine = machine(latest) === machine(baseline);
  const notes = sameMachine ? [] : [`absolute figures not compared: baseline ran on ${machine(baseline)}, this run on ${machine(latest)}`];
  const base = new Map(figures(baseline).map((f) => [f.key, f]));
  const regressions: Regression[] = [];
  const check = (key: string, what: string, better: Figure['better'], before: number, now: number) => {
    if (!Number.isFinite(before) || !Number.isFinite(now)) return;
    const worse = better === 'higher' ? now < before * (1 - tolerance) : now > before * (1 + tolerance);
    if (worse) regressions.push({ key, what, baseline: before, latest: now });
  };
  for (const f of figures(latest)) {
    const b = base.get(f.key);
    if (b === undefined) continue;
    check(`${f.key}/floor`, `${f.body}: ${f.label}, webhook ÷ floor`, f.better, b.vsFloor, f.vsFloor);
    check(`${f.key}/ceiling`, `${f.body}: ${f.label}, webhook ÷ ceiling`, f.better, b.vsCeiling, f.vsCeiling);
    check(`${f.key}/go`, `${f.body}: ${f.label}, webhook ÷ Go`, f.better, b.vsGo, f.vsGo);
    if (sameMachine || f.key.startsWith('rss.')) check(f.key, `${f.body}: ${f.label}, webhook`, f.better, b.value.webhook, f.value.webhook);
  }
  if (sameMachine) {
    const microBase = new Map(baseline.micro.map((m) => [m.name, m]));
    for (const m of latest.micro) {
      const b = microBase.get(m.name);
      if (b) check(`micro:${m.name}`, `${m.name}, mean µs`, 'lower', b.meanUs, m.meanUs);
    }
  }
  return { regressions, notes };
}

export function comparisonText({ regressions, notes }: ReturnType<typeof compare>): string {
  const lines = notes.map((n) => `note: ${n}`);
  if (regressions.length === 0) return [...lines, 'No figure is more than 10% worse than the baseline.'].join('\n');
  lines.push(`${regressions.length} figure(s) more than 10% worse than the baseline:`, '', '| Figure | Baseline | Latest |', '|---|--:|--:|');
  for (const r of regressions) lines.push(`| ${r.what} | ${num(r.baseline)} | ${num(r.latest)} |`);
  return lines.join('\n');
}
