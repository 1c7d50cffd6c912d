/**
 * The one-node cluster brought up by test/kube/cluster.sh (test/kube/run.sh passes its
 * directory as $KUBE_E2E_DIR), seen from the test runner on the host: the release's own
 * kubectl with the loopback kubeconfig, and plain HTTPS to the API server for the load
 * loop of the fault test.
 *
 * Every kubectl call is appended to `kubectl-transcript.txt` in the cluster's directory
 * and to $E2E_KUBECTL_TRANSCRIPT when set, so the exact output can be quoted.
 */
import { readFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import path from 'node:path';
import { parse } from 'yaml';
import { runProcess, type Finished } from '../e2e/cluster/processes.js';

/** The cluster's directory; throws when the suite is not run through run.sh. */
export function clusterDir(): string {
  const dir = process.env['KUBE_E2E_DIR'];
  if (!dir) throw new Error('KUBE_E2E_DIR is not set: run these tests with `npm run test:cluster` (test/kube/run.sh)');
  return dir;
}

/** Runs the release's kubectl against the cluster; exit code and output are the result. */
export async function kubectl(args: readonly string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<Finished> {
  const dir = clusterDir();
  const result = await runProcess(
    path.join(dir, 'kubectl'),
    [`--kubeconfig=${path.join(dir, 'kubeconfig')}`, `--cache-dir=${path.join(dir, 'kube-cache')}`, ...args],
    opts,
  );
  const entry = `$ kubectl ${args.join(' ')}\n${opts.stdin ? `# stdin:\n${opts.stdin}` : ''}${result.stdout}${result.stderr}# exit ${result.code}\n\n`;
  await appendFile(path.join(dir, 'kubectl-transcript.txt'), entry);
  if (process.env['E2E_KUBECTL_TRANSCRIPT']) await appendFile(process.env['E2E_KUBECTL_TRANSCRIPT'], entry);
  return result;
}

/** {@link kubectl}, throwing with its output unless it exits 0; returns stdout. */
export async function mustKubectl(args: readonly string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<string> {
  const result = await kubectl(args, opts);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (exit ${result.code}):\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** `kubectl get -o json` of one object, or of a list when `name` is omitted. */
export async function getJson(resource: string, name?: string, namespace?: string): Promise<any> {
  return JSON.parse(await mustKubectl(['get', resource, ...(name ? [name] : []), '-o', 'json', ...(namespace ? ['-n', namespace] : [])]));
}

/** The answer of one raw API request. */
export interface ApiResponse {
  status: number;
  body: string;
  /** Warning headers (`299 - "…"`), as the API server sends them. */
  warnings: string[];
}

/**
 * A keep-alive HTTPS client for the API server with the admin credentials of the
 * cluster's kubeconfig (its CA and bearer token), for loops too fast for a kubectl
 * process per call.
 */
export class ApiClient {
  private readonly agent: Agent;
  private readonly server: URL;
  private readonly token: string;

  /**
   * `maxSockets` bounds the calls in flight; beyond it calls queue in the client. A load
   * that meets a dead replica needs room for every call hanging its `timeoutSeconds`.
   */
  constructor({ maxSockets = 4 }: { maxSockets?: number } = {}) {
    const config = parse(readFileSync(path.join(clusterDir(), 'kubeconfig'), 'utf8'));
    const cluster = config.clusters[0].cluster;
    this.server = new URL(cluster.server);
    this.token = config.users[0].user.token;
    this.agent = new Agent({ keepAlive: true, maxSockets, ca: Buffer.from(cluster['certificate-authority-data'], 'base64') });
  }

  /** Sends one request; resolves with any HTTP answer, rejects on a transport error or after `timeoutMs`. */
  send(method: string, apiPath: string, body?: unknown, contentType = 'application/json', timeoutMs = 30_000): Promise<ApiResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.server.hostname,
          port: this.server.port,
          method,
          path: apiPath,
          agent: this.agent,
          timeout: timeoutMs,
          headers: { authorization: `Bearer ${this.token}`, accept: 'application/json', ...(payload ? { 'content-type': contentType } : {}) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const warning = res.headers['warning'];
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              warnings: warning === undefined ? [] : Array.isArray(warning) ? warning : [warning],
            });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** `name{labels} value` lines of a Prometheus text page, summed per metric name. */
export function metric(text: string, name: string): number | undefined {
  const values = text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
}
