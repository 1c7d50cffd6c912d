/**
 * In-process micro-benchmarks (tinybench) of the pure core: `reviewAdmission` per review
 * (the body already parsed, as the server hands it over), the candidate-pool decision of
 * the candidate-pool warnings (candidate-pools.ts), `parseGoDuration` per value and
 * `readConfYml` on hostile text at two sizes (conf-yml-cost.ts). Run as its own process by run.ts; prints one JSON object on stdout.
 */
import { Bench } from 'tinybench';
import { parseGoDuration, reviewAdmission } from '../src/index.js';
import { benchBodies } from './bodies.js';
import { candidatePoolsBenchCases } from './candidate-pools.js';
import { confYmlCostTasks } from './conf-yml-cost.js';

export interface MicroResult {
  name: string;
  /** Mean and 99th percentile time per call, microseconds. */
  meanUs: number;
  p99Us: number;
  samples: number;
}

/** Values as written in real `conf.yml` files, plus the longest form Go prints. */
const DURATIONS = ['50s', '1m30s', '1.5m', '500ms', '1h2m3.456789s'];

const timeMs = Number(process.argv[2] ?? 500);
const bench = new Bench({ time: timeMs, warmupTime: Math.min(200, timeMs) });
for (const body of benchBodies()) {
  const review: unknown = JSON.parse(body.json);
  bench.add(`reviewAdmission (${body.id}) ${body.title}`, () => {
    reviewAdmission(review);
  });
}
for (const candidates of candidatePoolsBenchCases()) bench.add(candidates.title, candidates.run);
for (const value of DURATIONS) {
  bench.add(`parseGoDuration("${value}")`, () => {
    parseGoDuration(value);
  });
}
// Hostile conf.yml text takes up to a second a call: three calls each, after one to warm up.
const confYml = new Bench({ time: 0, iterations: 3, warmupTime: 0, warmupIterations: 1 });
for (const task of confYmlCostTasks()) confYml.add(task.name, task.run);
await bench.run();
await confYml.run();
const results: MicroResult[] = [...bench.tasks, ...confYml.tasks].map((task) => {
  const result = task.result;
  if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
  return { name: task.name, meanUs: result.latency.mean * 1000, p99Us: result.latency.p99 * 1000, samples: result.latency.samplesCount };
});
process.stdout.write(`${JSON.stringify(results)}\n`);
