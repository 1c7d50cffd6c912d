/**
 * What a run prints: the Markdown table of figures with the webhook's ratios to the Node
 * ceiling and to the Go reference, the targets, and `--compare` against a
 * baseline.
 */
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
    '| Body | Figure | webhook | Node ceiling | Go reference | webhook ÷ ceiling | webhook ÷ Go |',
    '|---|---|--:|--:|--:|--:|--:|',
  ];
  for (const f of figures(results)) {
    const spread = results.meta.rounds > 1 ? ` (${f.vsCeilingRange.map((r) => r.toFixed(2)).join('–')})` : '';
    lines.push(
      `| ${f.body} | ${f.label} | ${num(f.value.webhook)} | ${num(f.value.ceiling)} | ${num(f.value.go)} | ${ratio(f.vsCeiling)}${spread} | ${ratio(f.vsGo)} |`,
    );
  }
  lines.push('', '| In-process micro-benchmark | mean µs/call | p99 µs/call |', '|---|--:|--:|');
  for (const m of results.micro) lines.push(`| ${m.name} | ${num(m.meanUs)} | ${num(m.p99Us)} |`);
  const { loadBefore, loadAfter, cores } = results.meta;
  if (Math.max(loadBefore, loadAfter) > cores) {
    lines.push('', `The machine was busy (1-minute load ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after, on ${cores} cores): expect noise.`);
  }
  const { bytes, status } = results.limitProbe;
  lines.push(
    '',
    `Pool UPDATE at etcd's size limit (${bytes} bytes, ${formatBytes(bytes)}): webhook HTTP ${status.webhook}, ` +
      `Node ceiling HTTP ${status.ceiling}, Go reference HTTP ${status.go}.`,
  );
  return lines.join('\n');
}

/** The targets, each with its measured value and whether it is met. */
export function targets(results: BenchResults): { target: string; measured: string; met: boolean }[] {
  const byKey = new Map(figures(results).map((f) => [f.key, f]));
  const get = (key: string) => byKey.get(key)!;
  const out: { target: string; measured: string; met: boolean }[] = [];
  for (const b of results.bodies) {
    if (b.id !== 'd') {
      const rps = get(`${b.id}.rps16`).vsCeiling;
      out.push({ target: `(${b.id}) req/s at 16 conn ≥ 0.8× ceiling`, measured: ratio(rps), met: rps >= 0.8 });
    }
    const p99 = get(`${b.id}.p99`).vsCeiling;
    out.push({ target: `(${b.id}) p99 at ${b.ratePerS}/s ≤ 1.3× ceiling`, measured: ratio(p99), met: p99 <= 1.3 });
  }
  for (const m of results.micro) {
    const limitUs = m.name.startsWith('reviewAdmission') ? 50 : 1;
    out.push({ target: `${m.name} < ${limitUs} µs`, measured: `${num(m.meanUs)} µs`, met: m.meanUs < limitUs });
  }
  const peak = get('rss.peak').value.webhook;
  const peakSmall = get('rss.peakSmall').value.webhook;
  out.push({ target: 'RSS at peak (a)–(c) < 90 MiB', measured: `${num(peakSmall)} MiB`, met: peakSmall < 90 });
  out.push({ target: 'RSS at peak incl. (d) < 90 MiB', measured: `${num(peak)} MiB`, met: peak < 90 });
  const ready = get('ready').value.webhook;
  out.push({ target: 'start to ready < 1 s', measured: `${num(ready)} ms`, met: ready < 1000 });
  return out;
}

export function targetsTable(results: BenchResults): string {
  return ['| Target | Measured | Met |', '|---|--:|---|', ...targets(results).map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`)].join(
    '\n',
  );
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
 * Compares `latest` with `baseline`. The webhook's ratios to the ceiling and to Go are
 * compared always: they come from servers measured side by side, so they carry over
 * between machines and between quiet and busy hours. RSS (MiB) is compared always too (it
 * depends on Node and the code, not the CPU). Absolute times and rates (req/s, ms, µs)
 * are compared only when both runs are from the same machine and Node; otherwise they
 * say more about the machine than the code. "Worse" is lower for req/s (and their
 * ratios), higher for everything else.
 */
export function compare(latest: BenchResults, baseline: BenchResults, tolerance = 0.1): { regressions: Regression[]; notes: string[] } {
  const sameMachine = machine(latest) === machine(baseline);
  const notes = sameMachine
    ? []
    : [`absolute figures not compared: baseline ran on ${machine(baseline)}, this run on ${machine(latest)}`];
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
