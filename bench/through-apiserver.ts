/**
 * `npm run bench -- --through-apiserver [--quick]`: the latency a webhook adds to an allowed
 * SpiderIPPool UPDATE through the e2e kube-apiserver (test/e2e/apiserver, built by
 * `npm run test:e2e`'s pretest; Spiderpool's own CRD from ../shared/spiderpool/crds/), for
 * this webhook (dist/, `serve` as `npm start` runs it) and the controller-runtime Go
 * reference (bench/go-reference; once more with HTTP/2 off, `GODEBUG=http2server=0`), the
 * express floor and the Node ceiling (which split the gap: see through-apiserver-summary.ts),
 * each registered by `register --url` from the same ValidatingWebhookConfiguration of
 * deploy/ (same rules, matchConditions, timeout, failurePolicy; only the URL differs), beside
 * no webhook at all (the floor).
 *
 * Each round runs the settings in a rotating order; in each, `concurrency` writers
 * each PUT a label change on their own stored IaaS node pool in a closed loop, every answer
 * must be 200. The PUTs are server-side dry runs (`dryRun=All`): admission, webhooks
 * included (`sideEffects: None`), runs as for a stored write, but etcd's write, whose tail
 * on this shared disk swamped the webhooks' p99 (floor p99 45–120 ms), is left out. Reported (bench/results/through-apiserver.json, not with --quick): p50/p99 per
 * setting over all rounds, what each server adds to the floor, ours ÷ each other server, each
 * process's CPU time per UPDATE (`/proc/<pid>/stat`), and the protocol each settles on by ALPN
 * when offered `h2` and `http/1.1`, as the API server's client offers them. With two CPUs or
 * more, each webhook runs on a CPU of its own (`CpuPlacement`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus as machineCpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { apiClient, type ApiClient } from '../test/e2e/cluster/api-client.js';
import { startApiServer, type ApiServer } from '../test/e2e/cluster/apiserver.js';
import { POOLS_PATH } from '../test/e2e/cluster/guards.js';
import { CRD_FILE, CRD_NAME } from '../test/e2e/cluster/harness.js';
import { runProcess } from '../test/e2e/cluster/processes.js';
import { until } from '../test/helpers/until.js';
import { makeCertificates } from './harness.js';
import { serverSpecs, startBenchServer, type BenchServer, type ServerId, type ServerSpec } from './servers.js';
import {
  type CpuPlacement,
  cpuPlacement,
  PROBED,
  SETTINGS,
  switchesTo,
  throughApiServerFigures,
  throughApiServerTable,
  type Probed,
  type Setting,
  type ThroughApiServerPlan,
  type Webhook,
  WEBHOOKS,
  type ThroughApiServerResults,
} from './through-apiserver-summary.js';

const PLAN: Record<'full' | 'quick', ThroughApiServerPlan> = {
  full: { rounds: 10, concurrency: 4, requests: 400, warmup: 40 },
  quick: { rounds: 1, concurrency: 2, requests: 40, warmup: 10 },
};
const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';

const iaasPool = (name: string, index: number, nodeName: string[]) => ({
  apiVersion: 'spiderpool.spidernet.io/v2beta1',
  kind: 'SpiderIPPool',
  metadata: { name, annotations: { 'ipam.spidernet.io/iaas-provider': 'cloud', 'ipam.spidernet.io/parent-nic': 'eth0' } },
  spec: { subnet: `10.7.${index}.0/24`, ips: [`10.7.${index}.10-10.7.${index}.20`], nodeName },
});
/** Dry-run probes telling the settings apart: only a webhook refuses the ConfigMap, only ours this pool (two nodes). */
const CONF_PROBE = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
  data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://probe:80\n  httpRequestTimeout: not-a-duration\n' },
};
const POOL_PROBE = iaasPool('bench-probe', 250, ['w1', 'w2']);

/** The setting the API server applies now, as far as the two probes tell; undefined for any other answer. */
async function inForce(api: ApiClient): Promise<Probed | undefined> {
  const conf = await api.request('POST', '/api/v1/namespaces/kube-system/configmaps?dryRun=All', CONF_PROBE);
  if (conf.status === 201) return 'floor';
  if (conf.status !== 422) return undefined;
  const pool = await api.request('POST', `${POOLS_PATH}?dryRun=All`, POOL_PROBE);
  return pool.status === 422 ? 'webhook' : pool.status === 201 ? 'go' : undefined;
}

/** The protocol `port` settles on by ALPN when offered `h2` and `http/1.1` (the API server's webhook client offers both); 'none' when it picks none. */
function negotiated(port: number, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
      resolve(socket.alpnProtocol || 'none');
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** Runs `command` with `args`; @throws Error naming `what`, with its output, when it exits non-zero. */
async function succeed(what: string, command: string, args: string[]): Promise<void> {
  const result = await runProcess(command, args);
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}): ${result.stdout}${result.stderr}`);
}

interface Bench {
  apiServer: ApiServer;
  api: ApiClient;
  servers: Record<Webhook, BenchServer<string>>;
  certDir: string;
}

/** Registers the webhook configuration at `setting`'s server (or removes it) and waits until the probes see it applied (60 s at most). */
async function switchTo(bench: Bench, setting: Setting, cli: string): Promise<void> {
  const kubeconfig = `--kubeconfig=${bench.apiServer.kubeconfig}`;
  if (setting === 'floor') await succeed('unregister', process.execPath, [cli, 'unregister', kubeconfig]);
  else {
    const url = `--url=https://127.0.0.1:${bench.servers[setting].port}`;
    await succeed('register', process.execPath, [cli, 'register', kubeconfig, `--ca-file=${join(bench.certDir, 'ca.crt')}`, url]);
  }
  let last: Probed | undefined;
  await until(async () => (last = await inForce(bench.api)) === PROBED[setting], `${setting} in force`, {
    timeoutMs: 60_000,
    intervalMs: 200,
    describe: () => `the probes' answers match ${last ?? 'no setting'}`,
  });
}

/** `count` label changes of the pool `stored` in a row; the latencies (ms) and the pool as last answered. @throws on a status other than 200. */
async function writeLabels(api: ApiClient, stored: any, count: number): Promise<{ latenciesMs: number[]; stored: any }> {
  const latenciesMs: number[] = [];
  for (let i = 0; i < count; i++) {
    const next = {
      ...stored,
      metadata: { ...stored.metadata, labels: { 'bench.example.com/write': String(Number(stored.metadata.labels?.['bench.example.com/write'] ?? 0) + 1) } },
    };
    const started = performance.now();
    const answer = await api.request('PUT', `${POOLS_PATH}/${stored.metadata.name}?dryRun=All`, next);
    latenciesMs.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`UPDATE of ${stored.metadata.name}: ${answer.status} ${JSON.stringify(answer.body?.message ?? answer.body)}`);
    stored = answer.body;
  }
  return { latenciesMs, stored };
}

/** `count` UPDATEs shared by the writers, all at once; their latencies (ms). */
async function phase(api: ApiClient, pools: any[], count: number): Promise<number[]> {
  const done = await Promise.all(pools.map((p) => writeLabels(api, p, Math.ceil(count / pools.length))));
  done.forEach((d, i) => (pools[i] = d.stored));
  return done.flatMap((d) => d.latenciesMs);
}

/**
 * Where the processes run ({@link cpuPlacement}): null when `taskset` is missing or this
 * process may not use every CPU (their numbers would not be 0 to N-1).
 */
async function placement(): Promise<CpuPlacement | null> {
  const all = machineCpus().length;
  const taskset = await runProcess('taskset', ['-V']).catch(() => undefined);
  if (availableParallelism() !== all || taskset?.code !== 0) return null;
  return cpuPlacement(all);
}

/** `spec` run on `cpus` (a `taskset` list), or as it is when `cpus` is undefined. */
const onCpus = <T extends ServerSpec<string>>(spec: T, cpus: string | undefined): T =>
  cpus === undefined ? spec : { ...spec, command: 'taskset', args: ['-c', cpus, spec.command, ...spec.args] };

/** The servers of bench/servers.ts by setting (on `cpus`, when given), and the Go reference once more with HTTP/2 off. */
function webhookSpecs(repoDir: string, certDir: string, goBinary: string, cpus: string | undefined): Record<Webhook, ServerSpec<string>> {
  const byId = Object.fromEntries(serverSpecs(repoDir, certDir, goBinary).map((s) => [s.id, onCpus(s, cpus)])) as Record<ServerId, ServerSpec>;
  return {
    webhook: byId.webhook,
    go: byId.go,
    goHttp1: { ...byId.go, id: 'go-http1', title: 'Go reference, HTTP/1.1', env: { ...process.env, GODEBUG: 'http2server=0' } },
    expressFloor: byId.floor,
    nodeCeiling: byId.ceiling,
  };
}

/**
 * Starts the API server, the CRD, every server and the pools, on their CPUs (this process
 * first, so that the API server and every command it runs inherit its CPUs); `run` with
 * them; stops everything, whatever happens.
 */
async function withBench<T>(
  repoDir: string,
  goBinary: string,
  concurrency: number,
  cpus: CpuPlacement | null,
  run: (bench: Bench, pools: any[]) => Promise<T>,
): Promise<T> {
  const work = mkdtempSync(join(tmpdir(), 'webhook-bench-apiserver-'));
  const started: { stop(): Promise<void> | void }[] = [];
  try {
    if (cpus !== null) await succeed('taskset', 'taskset', ['--all-tasks', '--cpu-list', '--pid', cpus.apiServer, String(process.pid)]);
    const apiServer = await startApiServer(join(work, 'apiserver.log'));
    started.push(apiServer);
    const kubectl = [`--kubeconfig=${apiServer.kubeconfig}`, `--cache-dir=${join(work, 'kube-cache')}`];
    await succeed('applying the CRD', KUBECTL, [...kubectl, 'apply', '-f', CRD_FILE]);
    await succeed('waiting for the CRD', KUBECTL, [...kubectl, 'wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']);
    const certDir = join(work, 'certs');
    const ca = makeCertificates(repoDir, certDir);
    const specs = webhookSpecs(repoDir, certDir, goBinary, cpus?.webhooks);
    const servers: Partial<Record<Webhook, BenchServer<string>>> = {};
    for (const id of WEBHOOKS) started.push((servers[id] = await startBenchServer(specs[id], work, ca)));
    const api = await apiClient(apiServer.kubeconfig, concurrency);
    started.push({ stop: () => api.close() });
    const pools = [];
    for (let i = 0; i < concurrency; i++) {
      const created = await api.request('POST', POOLS_PATH, iaasPool(`bench-pool-${i}`, i, ['w1']));
      if (created.status !== 201) throw new Error(`creating bench-pool-${i}: ${created.status} ${JSON.stringify(created.body)}`);
      pools.push(created.body);
    }
    return await run({ apiServer, api, servers: servers as Record<Webhook, BenchServer<string>>, certDir }, pools);
  } finally {
    for (const s of started.reverse()) await s.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The protocol of each server, then `plan.rounds` rounds of every setting in a rotating order: the latencies (ms) per setting and round, each server's CPU µs per UPDATE per round. */
async function measureRounds(bench: Bench, pools: any[], plan: ThroughApiServerPlan, cli: string) {
  const latenciesMs = Object.fromEntries(SETTINGS.map((s) => [s, [] as number[][]])) as Record<Setting, number[][]>;
  const cpuUsPerRequest = Object.fromEntries(WEBHOOKS.map((s) => [s, [] as number[]])) as Record<Webhook, number[]>;
  const ca = readFileSync(join(bench.certDir, 'ca.crt'));
  const protocols = {} as Record<Webhook, string>;
  for (const id of WEBHOOKS) protocols[id] = await negotiated(bench.servers[id].port, ca);
  let current: Setting | undefined;
  for (let round = 0; round < plan.rounds; round++) {
    const k = round % SETTINGS.length;
    for (const setting of [...SETTINGS.slice(k), ...SETTINGS.slice(0, k)]) {
      for (const step of switchesTo(current, setting)) await switchTo(bench, step, cli);
      current = setting;
      await phase(bench.api, pools, plan.warmup);
      const server = setting === 'floor' ? undefined : bench.servers[setting];
      const cpuBeforeS = server?.cpuSeconds() ?? 0;
      const measured = await phase(bench.api, pools, plan.requests);
      latenciesMs[setting].push(measured);
      if (setting !== 'floor') cpuUsPerRequest[setting].push(((server!.cpuSeconds() - cpuBeforeS) * 1e6) / measured.length);
    }
  }
  return { latenciesMs, cpuUsPerRequest, protocols };
}

/** Runs the benchmark; prints the table, and writes `resultsDir`/through-apiserver.json unless `quick`. @throws on a failed UPDATE or setup step. */
export async function measureThroughApiServer({
  repoDir,
  goBinary,
  go,
  quick,
  resultsDir,
}: {
  repoDir: string;
  goBinary: string;
  go: string;
  quick: boolean;
  resultsDir: string;
}): Promise<void> {
  const plan = quick ? PLAN.quick : PLAN.full;
  const loadBefore = loadavg()[0]!;
  const cli = join(repoDir, 'dist/cli/main.js');
  const cpus = await placement();
  const measured = await withBench(repoDir, goBinary, plan.concurrency, cpus, (bench, pools) => measureRounds(bench, pools, plan, cli));
  const results: ThroughApiServerResults = {
    date: new Date().toISOString(),
    loadAverage: [loadBefore, loadavg()[0]!],
    cpus,
    node: process.version,
    go,
    plan,
    protocols: measured.protocols,
    ...throughApiServerFigures(measured.latenciesMs, measured.cpuUsPerRequest),
  };
  console.log(throughApiServerTable(results));
  if (!quick) {
    const file = join(resultsDir, 'through-apiserver.json');
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`\nWritten to ${file}.`);
  }
}
