/**
 * `npm run bench -- --scale`: the SpiderIPPool cache at Spiderpool's scale, against the e2e
 * kube-apiserver (test/e2e/apiserver, built by its build.sh) with Spiderpool's real CRD
 * (read from ../shared/spiderpool/crds/, never copied). For each pool count N it creates N
 * IaaS node pools in dual-stack pairs (parallel requests), then for each allocation count
 * K writes K allocations into every pool's status (Spiderpool's `allocatedIPs` record; each
 * setup step logs its rate, the API server's CPU per request and the share of a core it got) and
 * measures the built webhook (`serve --kubeconfig`, the pool cache on) from its start:
 * time to ready (`/readyz` 200) and to synced (the cache's list logged), probe failures
 * (`/livez` and `/readyz`, 2 s timeout, every 250 ms, from the start until 5 s after sync),
 * the longest event-loop block (prom-client's `monitorEventLoopDelay` maximum) from the first
 * answer until then and under churn, RSS and heap after sync, review latency (a pool UPDATE with a pair check) quiet and
 * under status churn at a fixed rate, and RSS under that churn. Beside it the Go reference
 * (bench/go-reference `-pool-cache-kubeconfig`: controller-runtime's cache, default
 * options) on the same pools: RSS after sync and sync time, and the ratios; and a bare
 * client's paged read of the same list (`JSON.parse` of each page, nothing kept; its time
 * and the part spent waiting for first bytes): the API server's pace, a floor for any sync.
 *
 * The webhook runs under the Node the image ships (image/base.sh's NODE_VERSION, installed
 * once by `.ci/node24 --print-node`), with Node's compile cache filled beforehand as the
 * image fills it at build time (image/compile-cache.mjs), and with the Node flags of
 * package.json's `start` (the image's ENTRYPOINT); which Node ran is printed above the table
 * and kept in scale.json.
 * The webhook's
 * its CPU time (`/proc/<pid>/stat`) is read over the quiet reviews and over the churn, so
 * what one status write costs the webhook is measured apart from the shared machine's load,
 * and the event loop's p99 delay over each. After sync the same reviews go at the same time
 * to two floors the churn costs nothing (the webhook with `--no-pool-cache`, and the Go
 * reference serving reviews): if their p99 grows under churn as the webhook's does, the
 * machine (the API server and the writer on the same cores), not the cache, sets it. The
 * webhook's memory after sync is broken down (`smaps_rollup` anonymous / file-backed, V8's
 * heap spaces, external) in a second table.
 *
 * Flags (after `--scale`): `--pools 1000,10000` and `--allocations 0,30,64` (defaults);
 * `--churn-rate 50` (status writes per second), `--churn-s 15` (the quiet window and the churn window, each); `--cpu-prof DIR` runs the
 * webhook under `node --cpu-prof`, one profile per row in DIR; `--machine-node` runs it under
 * the Node running the bench instead, `--no-compile-cache` without the compile cache. Prints a Markdown table
 * and writes bench/results/scale.json. Bounded: every wait has a limit; every process it
 * starts is stopped at the end. Loopback only.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { APISERVER_BINARY, startApiServer, type ApiServer } from '../test/e2e/cluster/apiserver.js';
import { exited, stop, waitForLine } from './child.js';
import { startNodeFlags } from './servers.js';

const REPO_DIR = new URL('../../', import.meta.url).pathname;
const CRD_DIR = join(REPO_DIR, '../shared/spiderpool/crds');
const POOLS = '/apis/spiderpool.spidernet.io/v2beta1/spiderippools';
const PARALLEL = 32;
const PROBE_TIMEOUT_MS = 2000;
const PROBE_EVERY_MS = 250;
/** How long a sync may take, in seconds: 120, or 5 ms per pool when more (a 50 000-pool list at 64 allocations is ~440 MiB of JSON). */
const syncLimitS = (pools: number): number => Math.max(120, pools / 200);

interface Client {
  /** `waitedMs`: from sending the request to its response's headers (the API server's time to first byte). */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: string; waitedMs: number }>;
}

async function clientFor(kubeconfig: string): Promise<Client> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const options: https.RequestOptions = {};
  await config.applyToHTTPSOptions(options);
  const agent = new https.Agent({ ...(options.agent as https.Agent).options, keepAlive: true, maxSockets: PARALLEL });
  const server = new URL(config.getCurrentCluster()!.server);
  return {
    request: (method, path, body) =>
      new Promise((resolve, reject) => {
        const text = body === undefined ? undefined : JSON.stringify(body);
        const sent = performance.now();
        const req = https.request(
          {
            host: server.hostname,
            port: server.port,
            path,
            method,
            agent,
            headers: {
              ...options.headers,
              'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
              Accept: 'application/json',
            },
            timeout: 60_000,
          },
          (res) => {
            const waitedMs = performance.now() - sent;
            const parts: Buffer[] = [];
            res.on('data', (c: Buffer) => parts.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), waitedMs }));
          },
        );
        req.on('error', reject);
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
        req.end(text);
      }),
  };
}

/** Runs `task(i)` for i < n, `PARALLEL` at a time. */
async function parallel(n: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

const must = (what: string, answer: { status: number; body: string }, ok: number[]) => {
  if (!ok.includes(answer.status)) throw new Error(`${what}: HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
};

/** Pool i of a dual-stack pair per node: even i IPv4, odd i IPv6, naming each other. */
function poolObject(i: number) {
  const node = i >> 1;
  const v6 = (i & 1) === 1;
  const [a, b] = [(node >> 8) & 255, node & 255];
  const name = (j: number) => `node-${j >> 1}-${(j & 1) === 1 ? 'v6' : 'v4'}`;
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: {
      name: name(i),
      annotations: { 'ipam.spidernet.io/iaas-provider': 'openstack', 'ipam.spidernet.io/parent-nic': 'eth0', 'ipam.spidernet.io/pair-pool': name(i ^ 1) },
    },
    spec: v6
      ? { ipVersion: 6, subnet: `fd00:${a}:${b}::/64`, ips: [`fd00:${a}:${b}::10-fd00:${a}:${b}::100`], nodeName: [`node-${node}`] }
      : { ipVersion: 4, subnet: `10.${a}.${b}.0/24`, ips: [`10.${a}.${b}.10-10.${a}.${b}.250`], nodeName: [`node-${node}`] },
  };
}

/** Spiderpool's status of pool i with k allocations (`allocatedIPs`: address → {interface, pod, podUid}, as JSON text). */
function statusOf(i: number, k: number) {
  const pool = poolObject(i);
  const record: Record<string, unknown> = {};
  for (let j = 0; j < k; j++) {
    const address =
      pool.spec.ipVersion === 6
        ? pool.spec.ips[0]!.split('-')[0]!.replace(/::10$/, `::${(16 + j).toString(16)}`)
        : pool.spec.ips[0]!.split('-')[0]!.replace(/\.10$/, `.${10 + j}`);
    record[address] = { interface: 'eth0', pod: `default/web-${i}-${j}`, podUid: `6a0e1d2c-3b4f-4a5e-8d7c-${String(i * 1000 + j).padStart(12, '0')}` };
  }
  return k === 0 ? { allocatedIPCount: 0 } : { allocatedIPCount: k, allocatedIPs: JSON.stringify(record) };
}

async function installCrd(client: Client): Promise<void> {
  const file = readdirSync(CRD_DIR).find((f) => f.includes('spiderippools'));
  if (file === undefined) throw new Error(`${CRD_DIR} has no spiderippools CRD`);
  const crd = parseAllDocuments(readFileSync(join(CRD_DIR, file), 'utf8'))
    .map((d) => d.toJSON())
    .find((d) => d?.kind === 'CustomResourceDefinition');
  must('create the CRD', await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), [201, 409]);
  for (let i = 0; i < 120; i++) {
    if ((await client.request('GET', `${POOLS}?limit=1`)).status === 200) return;
    await sleep(500);
  }
  throw new Error('the SpiderIPPool CRD was not served within 60 s');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createPools(client: Client, n: number): Promise<void> {
  await parallel(n, async (i) => must(`create pool ${i}`, await client.request('POST', POOLS, poolObject(i)), [201, 409]));
}

async function writeStatuses(client: Client, n: number, k: number): Promise<void> {
  await parallel(n, async (i) => {
    const name = poolObject(i).metadata.name;
    must(`status of ${name}`, await client.request('PATCH', `${POOLS}/${name}/status`, { status: statusOf(i, k) }), [200]);
  });
}

/**
 * Runs `writes` (n requests to the API server), then logs their rate and where the time
 * went: the API server's CPU per request and the share of a core it got meanwhile (a
 * share well under its 2 cores means the machine's load, not the API server, set the pace).
 */
async function setupStep(what: string, n: number, apiServerPid: number, writes: () => Promise<void>): Promise<void> {
  const started = { at: performance.now(), cpu: cpuMs(apiServerPid), own: process.cpuUsage() };
  await writes();
  const seconds = (performance.now() - started.at) / 1000;
  const apiCpuMs = cpuMs(apiServerPid) - started.cpu;
  const own = process.cpuUsage(started.own);
  console.error(
    `scale: ${what}: ${n} requests in ${seconds.toFixed(1)} s (${f0(n / seconds)}/s, ${PARALLEL} in parallel); ` +
      `API server CPU ${f1(apiCpuMs / n)} ms per request, ${f0(apiCpuMs / 10 / seconds)}% of a core; ` +
      `this client ${f1((own.user + own.system) / 1000 / n)} ms per request; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
}

/** User and system CPU time of process `pid` so far, in milliseconds (`/proc/<pid>/stat` fields 14 and 15, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** `/proc/<pid>/status` VmRSS, in MiB. */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

interface Webhook {
  child: ChildProcess;
  port: number;
  ca: string;
  log: () => string;
}

function webhookGet(w: Webhook, path: string, body?: string): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: w.port,
        path,
        method: body === undefined ? 'GET' : 'POST',
        ca: w.ca,
        timeout: PROBE_TIMEOUT_MS,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), ms: performance.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '', ms: performance.now() - started }));
    req.end(body);
  });
}

/** The Node the webhook runs under: its binary, its version, and the compile cache folder it is given (`undefined`: none). */
interface WebhookNode {
  binary: string;
  version: string;
  compileCache: string | undefined;
}

/**
 * The image's Node (`.ci/node24 --print-node`) or, with `machine`, the one running the bench;
 * with `compileCache`, a compile cache filled as the image's build fills it (a folder under
 * `tmp`), when that Node keeps one (22.1 and later).
 */
function webhookNode(machine: boolean, compileCache: boolean, tmp: string): WebhookNode {
  const binary = machine ? process.execPath : execFileSync('bash', [join(REPO_DIR, '.ci/node24'), '--print-node'], { encoding: 'utf8' }).trim();
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  const [major = 0, minor = 0] = version.slice(1).split('.').map(Number);
  if (!compileCache || major < 22 || (major === 22 && minor < 1)) return { binary, version, compileCache: undefined };
  const dir = join(tmp, 'compile-cache');
  execFileSync(binary, [...startNodeFlags(REPO_DIR), join(REPO_DIR, 'image/compile-cache.mjs'), REPO_DIR], {
    env: { PATH: process.env['PATH'] ?? '', NODE_COMPILE_CACHE: dir },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { binary, version, compileCache: dir };
}

const describeNode = (node: WebhookNode) =>
  `the webhook under Node ${node.version} (${node.binary === process.execPath ? "the bench's own" : "the image's"}), ${node.compileCache === undefined ? 'no compile cache' : 'compile cache filled beforehand, as in the image'}`;

/** The webhook with its pool cache on `kubeconfig`'s cluster, or (`undefined`) with `--no-pool-cache`: the churn's floor. */
async function startWebhook(
  node: WebhookNode,
  kubeconfig: string | undefined,
  certDir: string,
  profileDir: string | undefined,
): Promise<{ webhook: Webhook; startedMs: number }> {
  const startedMs = Date.now();
  const profile = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const cache = kubeconfig === undefined ? ['--no-pool-cache'] : [`--kubeconfig=${kubeconfig}`, '--pool-cache-sync-wait=5m'];
  const child = spawn(
    node.binary,
    [...startNodeFlags(REPO_DIR), ...profile, join(REPO_DIR, 'dist/cli/main.js'), 'serve', '--port=0', '--host=127.0.0.1', `--cert-dir=${certDir}`, ...cache],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: certDir, ...(node.compileCache === undefined ? {} : { NODE_COMPILE_CACHE: node.compileCache }) },
    },
  );
  let log = '';
  child.stdout!.on('data', (c) => (log += c));
  child.stderr!.on('data', (c) => (log += c));
  const line = await waitForLine(child, () => log, 'serving admission reviews', 30_000, 'serve');
  return { webhook: { child, port: JSON.parse(line).port, ca: readFileSync(join(certDir, 'ca.crt'), 'utf8'), log: () => log }, startedMs };
}

/** The Go reference serving reviews (no cache) with the certificate `serve` wrote into `certDir`: the churn's other floor. */
async function startGoServer(goBinary: string, certDir: string): Promise<Webhook> {
  const child = spawn(goBinary, ['-cert-dir', certDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (c) => (log += c));
  child.stderr.on('data', (c) => (log += c));
  const line = await waitForLine(child, () => log, '"port"', 10_000, 'the Go reference');
  return { child, port: JSON.parse(line).port, ca: readFileSync(join(certDir, 'ca.crt'), 'utf8'), log: () => log };
}

/** An UPDATE of node-0-v4 that grows its range: the pair rules compare it with node-0-v6 in the cache. */
function reviewBody(uid: number): string {
  const old = poolObject(0);
  const object = { ...old, spec: { ...old.spec, ips: ['10.0.0.10-10.0.0.251'] } };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `u-${uid}`,
      kind: { group: 'spiderpool.spidernet.io', version: 'v2beta1', kind: 'SpiderIPPool' },
      resource: { group: 'spiderpool.spidernet.io', version: 'v2beta1', resource: 'spiderippools' },
      name: old.metadata.name,
      operation: 'UPDATE',
      userInfo: { username: 'bench' },
      object,
      oldObject: old,
    },
  });
}

/** Review latencies (ms, sorted) of each server for `seconds`, one review every 50 ms to each, all at once. */
function reviews(servers: readonly Webhook[], seconds: number): Promise<number[][]> {
  const end = Date.now() + seconds * 1000;
  return Promise.all(
    servers.map(async (w) => {
      const latencies: number[] = [];
      for (let uid = 0; Date.now() < end; uid++) {
        const answer = await webhookGet(w, '/validate-spiderippool', reviewBody(uid));
        if (answer.status !== 200) throw new Error(`review answered ${answer.status}: ${answer.body.slice(0, 200)}`);
        latencies.push(answer.ms);
        await sleep(50);
      }
      return latencies.sort((a, b) => a - b);
    }),
  );
}

/** p50/p99 of the same reviews, quiet and under churn, of a server the churn costs nothing. */
interface Floor {
  quietP50: number;
  quietP99: number;
  churnP50: number;
  churnP99: number;
}

/** The webhook's memory after sync, in MiB: `/proc/<pid>/smaps_rollup` and V8's heap spaces (used / committed) from prom-client. */
interface MemoryParts {
  anonMiB: number;
  fileMiB: number;
  heapCommittedMiB: number;
  externalMiB: number;
  spaces: Record<string, { usedMiB: number; committedMiB: number }>;
}

interface Row {
  pools: number;
  allocations: number;
  listJsonMiB: number;
  /** A bare client's paged read of the same list (each page buffered, `JSON.parse`d, nothing kept), in seconds: in all, and waiting for first bytes. */
  bareListS: number;
  bareWaitS: number;
  readyS: number;
  syncedS: number;
  rssMiB: number;
  heapMiB: number;
  churnRssMiB: number;
  churnPeakMiB: number;
  quietP50: number;
  quietP99: number;
  churnP50: number;
  churnP99: number;
  probeFailures: number;
  slowestProbeMs: number;
  /** Longest event-loop block from the first answer until 5 s after sync, and under churn, in ms. */
  loopMaxMs: number;
  churnLoopMaxMs: number;
  /** The webhook's CPU time per second of wall time, in ms: during the quiet reviews, and under churn (reviews and status writes). */
  quietCpuMsPerS: number;
  churnCpuMsPerS: number;
  /**
   * The status writes sent during the churn, and the CPU each cost the webhook beyond the quiet rate, in µs
   * (negative when the quiet window took more CPU than the churn: a neighbour's burst; the table prints —).
   */
  churnWrites: number;
  cpuUsPerWrite: number;
  /** The event loop's p99 delay (prom-client's `monitorEventLoopDelay`), quiet and under churn, in ms. */
  quietLoopP99Ms: number;
  churnLoopP99Ms: number;
  /** The same reviews at the same time against servers the churn costs nothing: the webhook with `--no-pool-cache`, the Go reference. */
  floors: { nodeNoCache: Floor; go?: Floor };
  memory: MemoryParts;
  /** The webhook's CPU time from its spawn to synced, in seconds: what the machine's load stretches into the sync's wall time. */
  syncCpuS: number;
  go?: { syncedS: number; rssMiB: number; syncCpuS: number };
}

/**
 * The webhook's live heap (MiB) and its longest event-loop block since the last scrape (ms:
 * prom-client's `monitorEventLoopDelay` maximum, which each scrape resets).
 */
async function scrape(w: Webhook): Promise<{ heapMiB: number; loopMaxMs: number; loopP99Ms: number; memory: MemoryParts }> {
  const lines = (await webhookGet(w, '/metrics')).body.split('\n');
  const value = (name: string) => Number(lines.find((l) => l.startsWith(`${name} `))?.split(' ')[1] ?? NaN);
  const spaces: MemoryParts['spaces'] = {};
  for (const l of lines) {
    const m = /^nodejs_heap_space_size_(used|total)_bytes\{space="(\w+)"\} (\S+)$/.exec(l);
    if (m === null || Number(m[3]) === 0) continue;
    const space = (spaces[m[2]!] ??= { usedMiB: 0, committedMiB: 0 });
    space[m[1] === 'used' ? 'usedMiB' : 'committedMiB'] = Number(m[3]) / 2 ** 20;
  }
  const rollup = readFileSync(`/proc/${w.child.pid!}/smaps_rollup`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`\\n${field}:\\s+(\\d+)`).exec(rollup)?.[1] ?? NaN);
  return {
    heapMiB: value('nodejs_heap_size_used_bytes') / 2 ** 20,
    loopMaxMs: value('nodejs_eventloop_lag_max_seconds') * 1000,
    loopP99Ms: value('nodejs_eventloop_lag_p99_seconds') * 1000,
    memory: {
      anonMiB: kib('Anonymous') / 1024,
      fileMiB: (kib('Rss') - kib('Anonymous')) / 1024,
      heapCommittedMiB: value('nodejs_heap_size_total_bytes') / 2 ** 20,
      externalMiB: value('nodejs_external_memory_bytes') / 2 ** 20,
      spaces,
    },
  };
}

async function measureWebhook(
  node: WebhookNode,
  client: Client,
  kubeconfig: string,
  n: number,
  k: number,
  churn: { rate: number; seconds: number },
  profileDir: string | undefined,
  goBinary: string | undefined,
): Promise<Omit<Row, 'go' | 'listJsonMiB' | 'bareListS' | 'bareWaitS'>> {
  const certDir = mkdtempSync(join(tmpdir(), 'bench-scale-'));
  const floorCertDir = mkdtempSync(join(tmpdir(), 'bench-scale-floor-'));
  const { webhook, startedMs } = await startWebhook(node, kubeconfig, certDir, profileDir);
  const floors: Webhook[] = [];
  const pid = webhook.child.pid!;
  // Resets the event-loop maximum: what follows covers serving (the list, the pass after it), not the process's start.
  await scrape(webhook);
  let readyAt: number | undefined;
  let syncedAt: number | undefined;
  let syncCpuMs = NaN;
  let failures = 0;
  let slowest = 0;
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const [live, ready] = await Promise.all([webhookGet(webhook, '/livez'), webhookGet(webhook, '/readyz')]);
      slowest = Math.max(slowest, live.ms, ready.ms);
      if (live.status !== 200) failures++;
      if (ready.status === 200) readyAt ??= Date.now();
      else if (readyAt !== undefined) failures++;
      await sleep(PROBE_EVERY_MS);
    }
  })();
  try {
    for (let i = 0; i < syncLimitS(n) * 20 && syncedAt === undefined; i++) {
      if (webhook.log().includes('SpiderIPPool cache listed')) {
        syncedAt = Date.now();
        syncCpuMs = cpuMs(pid);
      } else await sleep(50);
    }
    if (syncedAt === undefined) throw new Error(`not synced within ${syncLimitS(n)} s:\n${webhook.log().slice(-2000)}`);
    // The list's own account: how long it took once started, and the relists an expired continue token forced.
    const listed = webhook
      .log()
      .split('\n')
      .find((l) => l.includes('SpiderIPPool cache listed'));
    const relists = webhook
      .log()
      .split('\n')
      .filter((l) => l.includes('continue token expired')).length;
    console.error(
      `scale: ${n} × ${k}: the webhook's list took ${f1(Number(listed && JSON.parse(listed).durationMs) / 1000)} s, ${f1(syncCpuMs / 1000)} s of CPU from spawn to synced; relists after an expired continue token: ${relists}`,
    );
    for (let i = 0; i < 200 && readyAt === undefined; i++) await sleep(50);
    await sleep(5000);
    probing = false;
    await prober;
    const rss = rssMiB(webhook.child.pid!);
    // Its event-loop maximum covers the list and the pass after it, from the first answer on.
    const { heapMiB: heap, loopMaxMs, memory } = await scrape(webhook);
    // The floors start after the sync, so that the memory above is the webhook's alone.
    floors.push((await startWebhook(node, undefined, floorCertDir, undefined)).webhook);
    if (goBinary !== undefined) floors.push(await startGoServer(goBinary, floorCertDir));
    const quietStart = { cpu: cpuMs(pid), at: performance.now() };
    const [quiet = [], ...quietFloors] = await reviews([webhook, ...floors], churn.seconds);
    const quietCpuMsPerS = ((cpuMs(pid) - quietStart.cpu) / (performance.now() - quietStart.at)) * 1000;
    const quietLoopP99Ms = (await scrape(webhook)).loopP99Ms; // from here, the loop's figures cover the churn alone
    const churnStart = { cpu: cpuMs(pid), at: performance.now() };
    let writes = 0;
    // Churn: status writes at a fixed rate (an allocation more or less on successive pools), as Spiderpool's IPAM writes them.
    let churning = true;
    let peak = 0;
    const writer = (async () => {
      for (let w = 0; churning; w++) {
        const i = (w * 7919) % n;
        writes++;
        void client.request('PATCH', `${POOLS}/${poolObject(i).metadata.name}/status`, { status: statusOf(i, k + (w % 2)) }).catch(() => undefined);
        await sleep(1000 / churn.rate);
      }
    })();
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(webhook.child.pid!))), 250);
    const [busy = [], ...busyFloors] = await reviews([webhook, ...floors], churn.seconds);
    const churnSeconds = (performance.now() - churnStart.at) / 1000;
    const churnCpuMsPerS = (cpuMs(pid) - churnStart.cpu) / churnSeconds;
    const churnWrites = writes;
    const churnRss = rssMiB(webhook.child.pid!);
    const { loopMaxMs: churnLoopMaxMs, loopP99Ms: churnLoopP99Ms } = await scrape(webhook);
    const floor = (i: number): Floor => ({
      quietP50: quantile(quietFloors[i]!, 0.5),
      quietP99: quantile(quietFloors[i]!, 0.99),
      churnP50: quantile(busyFloors[i]!, 0.5),
      churnP99: quantile(busyFloors[i]!, 0.99),
    });
    churning = false;
    clearInterval(sampler);
    await writer;
    return {
      pools: n,
      allocations: k,
      quietLoopP99Ms,
      churnLoopP99Ms,
      floors: { nodeNoCache: floor(0), ...(floors.length > 1 ? { go: floor(1) } : {}) },
      memory,
      readyS: (readyAt! - startedMs) / 1000,
      syncedS: (syncedAt - startedMs) / 1000,
      rssMiB: rss,
      heapMiB: heap,
      churnRssMiB: churnRss,
      churnPeakMiB: Math.max(peak, churnRss),
      quietP50: quantile(quiet, 0.5),
      quietP99: quantile(quiet, 0.99),
      churnP50: quantile(busy, 0.5),
      churnP99: quantile(busy, 0.99),
      probeFailures: failures,
      syncCpuS: syncCpuMs / 1000,
      slowestProbeMs: slowest,
      loopMaxMs,
      churnLoopMaxMs,
      quietCpuMsPerS,
      churnCpuMsPerS,
      churnWrites,
      // Both windows carry the same reviews (one per 50 ms); what the churn adds is the writes'.
      cpuUsPerWrite: (((churnCpuMsPerS - quietCpuMsPerS) * churnSeconds) / churnWrites) * 1000,
    };
  } finally {
    probing = false;
    for (const w of [webhook, ...floors]) await stop(w.child);
    rmSync(certDir, { recursive: true, force: true });
    rmSync(floorCertDir, { recursive: true, force: true });
  }
}

async function measureGo(goBinary: string, kubeconfig: string, n: number): Promise<NonNullable<Row['go']>> {
  const started = Date.now();
  const child = spawn(goBinary, [`-pool-cache-kubeconfig=${kubeconfig}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  try {
    for (let i = 0; i < syncLimitS(n) * 20 && !out.includes('syncedMs'); i++) {
      if (exited(child)) throw new Error(`the Go reference exited:\n${out}`);
      await sleep(50);
    }
    if (!out.includes('syncedMs')) throw new Error(`the Go reference did not sync within ${syncLimitS(n)} s`);
    const syncedS = (Date.now() - started) / 1000;
    const syncCpuS = cpuMs(child.pid!) / 1000;
    console.error(`scale: the Go reference synced in ${f1(syncedS)} s, ${f1(syncCpuS)} s of CPU`);
    await sleep(5000);
    return { syncedS, rssMiB: rssMiB(child.pid!), syncCpuS };
  } finally {
    await stop(child);
  }
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '—');

export function scaleTable(rows: readonly Row[]): string {
  const lines = [
    '| pools × allocations | list JSON MiB | bare list s (first-byte waits) | ready s | synced s | RSS MiB | heap MiB | RSS churn (peak) MiB | review p50/p99 ms quiet | review p50/p99 ms churn | CPU ms/s quiet / churn | CPU µs per status write | probe failures (slowest ms) | loop block max ms start / churn | Go RSS MiB | Go synced s | RSS ratio | sync ratio |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.pools} × ${r.allocations} | ${f1(r.listJsonMiB)} | ${f1(r.bareListS)} (${f1(r.bareWaitS)}) | ${f1(r.readyS)} | ${f1(r.syncedS)} | ${f0(r.rssMiB)} | ${f0(r.heapMiB)} | ${f0(r.churnRssMiB)} (${f0(r.churnPeakMiB)}) | ` +
        `${f1(r.quietP50)} / ${f1(r.quietP99)} | ${f1(r.churnP50)} / ${f1(r.churnP99)} | ${f0(r.quietCpuMsPerS)} / ${f0(r.churnCpuMsPerS)} | ${r.cpuUsPerWrite >= 0 ? f0(r.cpuUsPerWrite) : '—'} | ${r.probeFailures} (${f0(r.slowestProbeMs)}) | ${f0(r.loopMaxMs)} / ${f0(r.churnLoopMaxMs)} | ` +
        `${r.go ? f0(r.go.rssMiB) : '—'} | ${r.go ? f1(r.go.syncedS) : '—'} | ${r.go ? (r.rssMiB / r.go.rssMiB).toFixed(2) : '—'} | ${r.go ? (r.syncedS / r.go.syncedS).toFixed(2) : '—'} |`,
    );
  }
  return lines.join('\n');
}

/** What sets the p99 under churn (the same reviews against the floors at the same time) and where the memory is, one row per N × K. */
export function churnAndMemoryTable(rows: readonly Row[]): string {
  const ratio = (f: Floor | undefined) => (f === undefined ? '—' : `${f1(f.quietP99)} → ${f1(f.churnP99)} (${(f.churnP99 / f.quietP99).toFixed(1)}×)`);
  const lines = [
    '| pools × allocations | webhook p99 ms quiet → churn | no-cache webhook p99 | Go reference p99 | loop p99 ms quiet / churn | RSS anon / file MiB | V8 heap used / committed MiB | new / old / code / large space committed MiB | external MiB |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const m = r.memory;
    const space = (name: string) => f0(m.spaces[name]?.committedMiB ?? 0);
    lines.push(
      `| ${r.pools} × ${r.allocations} | ${f1(r.quietP99)} → ${f1(r.churnP99)} (${(r.churnP99 / r.quietP99).toFixed(1)}×) | ${ratio(r.floors.nodeNoCache)} | ${ratio(r.floors.go)} | ${f1(r.quietLoopP99Ms)} / ${f1(r.churnLoopP99Ms)} | ` +
        `${f0(m.anonMiB)} / ${f0(m.fileMiB)} | ${f0(r.heapMiB)} / ${f0(m.heapCommittedMiB)} | ${space('new')} / ${space('old')} / ${space('code')} / ${space('large_object')} | ${f0(m.externalMiB)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The list as a bare client reads it, in pages of 500 as the cache asks for them: its JSON's
 * size (MiB), the read's duration and the part of it spent waiting for each page's first
 * byte (seconds): the API server's pace, beside which the webhook's sync is read.
 */
async function bareList(client: Client): Promise<{ listJsonMiB: number; bareListS: number; bareWaitS: number }> {
  let bytes = 0;
  let waitedMs = 0;
  let token = '';
  const started = performance.now();
  do {
    const page = await client.request('GET', `${POOLS}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    must('list the pools', page, [200]);
    bytes += Buffer.byteLength(page.body);
    waitedMs += page.waitedMs;
    token = (JSON.parse(page.body) as { metadata?: { continue?: string } }).metadata?.continue ?? '';
  } while (token);
  return { listJsonMiB: bytes / 2 ** 20, bareListS: (performance.now() - started) / 1000, bareWaitS: waitedMs / 1000 };
}

/**
 * Builds the e2e kube-apiserver (cached by its build.sh) and links it where the compiled
 * test/e2e/cluster/apiserver.js looks for it (beside itself, under dist-bench/).
 */
function linkApiServer(): void {
  const script = join(REPO_DIR, 'test/e2e/apiserver/build.sh');
  execFileSync('bash', [script], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (existsSync(APISERVER_BINARY)) return;
  mkdirSync(dirname(APISERVER_BINARY), { recursive: true });
  symlinkSync(join(REPO_DIR, 'test/e2e/apiserver/bin/apiserver'), APISERVER_BINARY);
}

export async function runScale(args: string[], goBinary: string | undefined): Promise<void> {
  linkApiServer();
  const { values } = parseArgs({
    args,
    options: {
      pools: { type: 'string', default: '1000,10000' },
      allocations: { type: 'string', default: '0,30,64' },
      'churn-rate': { type: 'string', default: '50' },
      'churn-s': { type: 'string', default: '15' },
      'cpu-prof': { type: 'string' },
      'machine-node': { type: 'boolean', default: false },
      'no-compile-cache': { type: 'boolean', default: false },
    },
  });
  const nodeDir = mkdtempSync(join(tmpdir(), 'bench-scale-node-'));
  const node = webhookNode(values['machine-node'], !values['no-compile-cache'], nodeDir);
  console.error(`scale: ${describeNode(node)}`);
  const profileRoot = values['cpu-prof'];
  const counts = values.pools.split(',').map(Number);
  const allocations = values.allocations.split(',').map(Number);
  const churn = { rate: Number(values['churn-rate']), seconds: Number(values['churn-s']) };
  const rows: Row[] = [];
  try {
    for (const n of counts) {
      const logDir = mkdtempSync(join(tmpdir(), 'bench-scale-apiserver-'));
      let api: ApiServer | undefined;
      try {
        api = await startApiServer(join(logDir, 'apiserver.log'));
        const client = await clientFor(api.kubeconfig);
        await installCrd(client);
        await setupStep(`${n} pools created`, n, api.pid, () => createPools(client, n));
        for (const [j, k] of allocations.entries()) {
          // K = 0 first: the pools as created, no status written (Spiderpool writes none before an allocation).
          if (j > 0 || k > 0) await setupStep(`${n} statuses written with ${k} allocations`, n, api.pid, () => writeStatuses(client, n, k));
          const bare = await bareList(client);
          console.error(
            `scale: ${n} × ${k}: list ${bare.listJsonMiB.toFixed(1)} MiB, read by a bare client in ${bare.bareListS.toFixed(1)} s (${bare.bareWaitS.toFixed(1)} s of it waiting for first bytes); measuring the webhook`,
          );
          const profileDir = profileRoot === undefined ? undefined : join(profileRoot, `${n}x${k}`);
          const row: Row = { ...bare, ...(await measureWebhook(node, client, api.kubeconfig, n, k, churn, profileDir, goBinary)) };
          if (goBinary !== undefined) row.go = await measureGo(goBinary, api.kubeconfig, n);
          rows.push(row);
          console.error(scaleTable([row]).split('\n').at(-1));
          console.error(churnAndMemoryTable([row]).split('\n').at(-1));
        }
      } finally {
        await api?.stop();
        rmSync(logDir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(nodeDir, { recursive: true, force: true });
  }
  const table = scaleTable(rows);
  console.log(`${describeNode(node)}\n\n${table}\n\n${churnAndMemoryTable(rows)}`);
  const webhook = { node: node.version, binary: node.binary, compileCache: node.compileCache !== undefined };
  writeFileSync(
    join(REPO_DIR, 'bench/results/scale.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, webhook, churn, rows }, null, 2)}\n`,
  );
}
