/**
 * Requests straight to the e2e API server over HTTPS keep-alive, with the admin token and
 * CA of its kubeconfig: for tests and benchmarks that send thousands of writes, where a
 * kubectl process per write would take most of the time.
 *
 *   const api = await apiClient(cluster.apiServer.kubeconfig);
 *   const { status, body } = await api.request('PUT', '/apis/…/spiderippools/p?dryRun=All', pool);
 *   api.close();
 */
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { parse } from 'yaml';

export interface ApiResponse {
  status: number;
  /** The JSON body (a Status for a refusal), or `undefined` when it is not JSON. */
  body: any;
  /** The `Warning` headers' texts. */
  warnings: string[];
}

export interface ApiClient {
  /** @throws Error on a connection failure (never for an HTTP status). */
  request(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  close(): void;
}

/**
 * A client for the cluster of `kubeconfig` (its first cluster and user: a token, and the CA
 * as a file or inline data), at most `connections` requests in flight.
 */
export async function apiClient(kubeconfig: string, connections = 16): Promise<ApiClient> {
  const config = parse(await readFile(kubeconfig, 'utf8'));
  const cluster = config.clusters[0].cluster;
  const ca = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64')
    : await readFile(cluster['certificate-authority']);
  const token: string = config.users[0].user.token;
  const server = new URL(cluster.server);
  const agent = new Agent({ ca, keepAlive: true, maxSockets: connections });
  return {
    request: (method, path, body) =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
        const req = request(
          {
            host: server.hostname,
            port: server.port,
            method,
            path,
            agent,
            headers: {
              authorization: `Bearer ${token}`,
              accept: 'application/json',
              ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let parsed: unknown;
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = undefined;
              }
              const header = res.headers['warning'];
              const warnings = (Array.isArray(header) ? header : header ? [header] : []).map((w) => w.replace(/^299 - "(.*)"$/, '$1'));
              resolve({ status: res.statusCode ?? 0, body: parsed, warnings });
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(payload);
      }),
    close: () => agent.destroy(),
  };
}

/** Runs `task` over `items` with at most `limit` at a time; results in the order of `items`. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
