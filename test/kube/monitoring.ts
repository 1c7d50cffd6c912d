/**
 * A real Prometheus beside the one-node cluster (built from Prometheus' Go module by
 * test/e2e/monitoring/build.sh, which it calls), evaluating the alerts of
 * deploy/components/monitoring/prometheusrule.yaml in their shortened variant
 * (`shortenedRuleGroups`: every `for:` and range divided by 30, ranges at least 10 s), so
 * an alert fires in seconds. It scrapes every 2 s, through the API server with the
 * cluster's admin token: the API server's own `/metrics`, and the webhook pods' `/metrics`
 * through the Service proxy (`…/services/https:spiderpool-iaas-webhook:https/proxy/metrics`,
 * the Service's port as the ServiceMonitor names it; a scrape reaches one pod). It
 * listens on a free loopback port, keeps its data in the cluster's directory, and is
 * stopped by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { until } from '../helpers/until.js';
import { shortenedRuleGroups } from '../deploy/monitoring.js';
import { freePort, runProcess } from '../e2e/cluster/processes.js';
import { ROOT } from '../e2e/cluster/webhook.js';
import { clusterDir } from './kube.js';

/** How much shorter the test variant's `for:` and ranges are than the rule file's. */
export const SHORTEN_BY = 30;
const SCRAPE_INTERVAL = '2s';
const MIN_RANGE_MS = 10_000;

/** An alert as Prometheus' `/api/v1/alerts` lists it (pending or firing). */
export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

export interface TestPrometheus {
  /** The active alerts named `alertname`. */
  alerts(alertname: string): Promise<ActiveAlert[]>;
  /** Each scrape target's job and health (`up`, `down`, `unknown`) with its last error. */
  targets(): Promise<{ job: string; health: string; lastError: string }[]>;
  /** The values of an instant query, one per series. */
  query(expr: string): Promise<number[]>;
  /** The series of an instant query: their labels and values. */
  series(expr: string): Promise<{ labels: Record<string, string>; value: number }[]>;
  /** Rule groups' evaluation errors (none when every rule evaluates). */
  ruleErrors(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(namespace: string): Promise<TestPrometheus> {
  const built = await runProcess('bash', [path.join(ROOT, 'test/e2e/monitoring/build.sh')], { timeoutMs: 3_000_000 });
  if (built.code !== 0) throw new Error(`test/e2e/monitoring/build.sh failed:\n${built.stderr}`);
  const binary = path.join(built.stdout.trim(), 'prometheus');

  const dir = path.join(clusterDir(), 'prometheus');
  await mkdir(path.join(dir, 'data'), { recursive: true });
  const kubeconfig = parse(await readFile(path.join(clusterDir(), 'kubeconfig'), 'utf8'));
  const cluster = kubeconfig.clusters[0].cluster;
  await writeFile(path.join(dir, 'ca.crt'), Buffer.from(cluster['certificate-authority-data'], 'base64'));
  await writeFile(path.join(dir, 'token'), kubeconfig.users[0].user.token, { mode: 0o600 });
  await writeFile(path.join(dir, 'rules.yaml'), stringify({ groups: shortenedRuleGroups(SHORTEN_BY, MIN_RANGE_MS) }));
  const viaApiServer = {
    scheme: 'https',
    authorization: { credentials_file: path.join(dir, 'token') },
    tls_config: { ca_file: path.join(dir, 'ca.crt') },
    static_configs: [{ targets: [new URL(cluster.server).host] }],
  };
  await writeFile(
    path.join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: SCRAPE_INTERVAL, scrape_timeout: SCRAPE_INTERVAL, evaluation_interval: SCRAPE_INTERVAL },
      rule_files: [path.join(dir, 'rules.yaml')],
      scrape_configs: [
        { job_name: 'apiserver', ...viaApiServer },
        {
          job_name: 'spiderpool-iaas-webhook',
          metrics_path: `/api/v1/namespaces/${namespace}/services/https:spiderpool-iaas-webhook:https/proxy/metrics`,
          ...viaApiServer,
        },
      ],
    }),
  );

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = createWriteStream(path.join(dir, 'prometheus.log'));
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const api = async (what: string): Promise<any> => {
    const res = await fetch(`${base}/api/v1/${what}`);
    if (!res.ok) throw new Error(`Prometheus ${what}: HTTP ${res.status}`);
    return ((await res.json()) as { data: any }).data;
  };
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    log.end();
  };
  try {
    await until(
      async () =>
        child.exitCode === null &&
        (await fetch(`${base}/-/ready`).then(
          (r) => r.ok,
          () => false,
        )),
      'Prometheus to be ready',
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        describe: () => `exit code ${child.exitCode}; see ${path.join(dir, 'prometheus.log')}`,
      },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    alerts: async (alertname) => ((await api('alerts')).alerts as ActiveAlert[]).filter((a) => a.labels['alertname'] === alertname),
    targets: async () =>
      ((await api('targets')).activeTargets as any[]).map((t) => ({
        job: t.labels.job as string,
        health: t.health as string,
        lastError: t.lastError as string,
      })),
    query: async (expr) => ((await api(`query?query=${encodeURIComponent(expr)}`)).result as any[]).map((r) => Number(r.value[1])),
    series: async (expr) =>
      ((await api(`query?query=${encodeURIComponent(expr)}`)).result as any[]).map((r) => ({ labels: r.metric, value: Number(r.value[1]) })),
    ruleErrors: async () =>
      ((await api('rules')).groups as any[]).flatMap((g) => (g.rules as any[]).filter((r) => r.health === 'err').map((r) => `${r.name}: ${r.lastError}`)),
    stop,
  };
}
