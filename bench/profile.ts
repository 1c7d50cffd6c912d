/**
 * `npm run bench -- --profile`: where this webhook's time goes under load. Runs the
 * webhook under `node --cpu-prof` at 16 connections for each of bodies (a)–(d),
 * and the express floor for (a) to compare with, then sums the profile's self time by
 * package (zod, express, router, pino, ...), Node subsystem (TLS, streams, HTTP) and
 * function. V8 counts an inlined builtin as its caller's self time: `JSON.parse` shows up
 * in the function that calls it. The `.cpuprofile` files stay in bench/results/
 * (gitignored) for Chrome DevTools; the summary goes to bench/results/profile.json and the
 * terminal.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchBodies } from './bodies.js';
import type { LoadJob, ThroughputResult } from './loadgen.js';
import { nodeServerSpecs, startBenchServer, type ServerId } from './servers.js';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileShare {
  name: string;
  /** Share of the busy (non-idle) samples, percent. */
  percent: number;
}

const PROFILE_SECONDS = 6;
const TOP = 15;

/** The bucket a frame's self time is counted in: a package, a Node subsystem, V8's own. */
function category(frame: CpuProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) {
    const module = url.slice('node:'.length).replace(/^internal\//, '');
    if (/tls|crypto/.test(module)) return 'node: TLS';
    if (/^(_http|http)/.test(module)) return 'node: HTTP';
    if (/stream|net|buffer|events/.test(module)) return 'node: streams and sockets';
    return `node: ${module.split('/')[0]}`;
  }
  if (url.includes('/dist-bench/')) return `bench: ${url.slice(url.lastIndexOf('/') + 1)}`;
  if (url.includes('/dist/')) return `webhook: ${url.slice(url.lastIndexOf('/dist/') + '/dist/'.length).split('/')[0]}`;
  if (url === '') {
    if (functionName.startsWith('(')) return functionName;
    // Native socket writes; on a TLS socket the encryption happens inside them.
    if (/^write(v|Buffer|Utf8String|Latin1String)$/.test(functionName)) return 'node: socket writes incl. TLS encryption';
    return 'V8 builtins and other native code';
  }
  return url;
}

/** `yaml/dist/parse/parser.js` for a package file, `dist/server/app.js` for the webhook's own. */
function shortUrl(url: string): string {
  const inPackage = url.lastIndexOf('node_modules/');
  if (inPackage >= 0) return url.slice(inPackage + 'node_modules/'.length);
  const own = url.lastIndexOf('/dist/');
  return own >= 0 ? url.slice(own + 1) : url;
}

/** Self time by category and by function, as percent of busy samples (idle left out). */
export function summarizeProfile(nodes: CpuProfileNode[]): { categories: ProfileShare[]; functions: ProfileShare[] } {
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const node of nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)') continue;
    busy += hits;
    const cat = category(node.callFrame);
    byCategory.set(cat, (byCategory.get(cat) ?? 0) + hits);
    const where = node.callFrame.url === '' ? '' : ` ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
    const fn = `${node.callFrame.functionName || '(anonymous)'}${where}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  }
  const shares = (m: Map<string, number>) => [...m].map(([name, hits]) => ({ name, percent: (100 * hits) / busy })).sort((x, y) => y.percent - x.percent);
  return { categories: shares(byCategory), functions: shares(byFunction).slice(0, TOP) };
}

export interface ProfileOptions {
  repoDir: string;
  certDir: string;
  ca: Buffer;
  logDir: string;
  resultsDir: string;
  runLoad: <R>(job: LoadJob) => Promise<R>;
}

/** What is profiled: the webhook on every body, and the express floor on (a) (it answers (b) alike), to compare with. */
const PROFILED: { server: ServerId; bodies: string[] }[] = [
  { server: 'webhook', bodies: ['a', 'b', 'c', 'd'] },
  { server: 'floor', bodies: ['a'] },
];

export async function profileWebhook(options: ProfileOptions): Promise<void> {
  const summary: Record<string, { requestsPerS: number } & ReturnType<typeof summarizeProfile>> = {};
  for (const { server: id, bodies } of PROFILED) {
    for (const body of benchBodies().filter((b) => bodies.includes(b.id))) {
      const name = `${id}-${body.id}.cpuprofile`;
      const cpuProf = ['--cpu-prof', `--cpu-prof-dir=${options.resultsDir}`, `--cpu-prof-name=${name}`];
      const spec = nodeServerSpecs(options.repoDir, options.certDir, cpuProf).find((s) => s.id === id)!;
      const server = await startBenchServer(spec, options.logDir, options.ca);
      let load: ThroughputResult;
      try {
        load = await options.runLoad<ThroughputResult>({ op: 'throughput', port: server.port, bodyId: body.id, connections: 16, durationS: PROFILE_SECONDS });
      } finally {
        await server.stop();
      }
      const profile = JSON.parse(readFileSync(join(options.resultsDir, name), 'utf8')) as { nodes: CpuProfileNode[] };
      const key = `${id}:${body.id}`;
      summary[key] = { requestsPerS: load.requestsPerS, ...summarizeProfile(profile.nodes) };
      const { categories, functions } = summary[key]!;
      console.log(`\n## ${spec.title}, (${body.id}) ${body.title}: ${load.requestsPerS.toFixed(0)} req/s at 16 connections under --cpu-prof\n`);
      console.log('| Self time in | % of busy |\n|---|--:|');
      for (const c of categories.filter((c) => c.percent >= 0.5)) console.log(`| ${c.name} | ${c.percent.toFixed(1)} |`);
      console.log('\n| Function | % of busy |\n|---|--:|');
      for (const f of functions) console.log(`| ${f.name} | ${f.percent.toFixed(1)} |`);
    }
  }
  writeFileSync(join(options.resultsDir, 'profile.json'), `${JSON.stringify(summary, null, 2)}\n`);
}
