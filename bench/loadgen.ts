/**
 * The load generator: a separate process (forked by run.ts with an IPC channel) so the
 * servers never share a core's event loop with their client. It runs one measurement
 * per message and answers with its figures:
 * - `throughput`: autocannon, closed loop, `connections` keep-alive HTTPS connections
 *   each sending the next request as soon as the previous answer arrives; requests/s.
 * - `paced`: an open loop at a fixed offered rate (request i is due at i/rate seconds);
 *   latency counts from the due time, so a stalled server is charged for the requests
 *   that queued behind it (no coordinated omission). autocannon's own rate limit sends
 *   each second's quota back to back and then idles, which measures bursts, not a rate.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { benchBodies, type BenchBody } from './bodies.js';
import { isolationBodies } from './isolation-bodies.js';
import { quantile } from './results.js';

export interface ThroughputJob {
  op: 'throughput';
  port: number;
  bodyId: string;
  connections: number;
  durationS: number;
}

export interface PacedJob {
  op: 'paced';
  port: number;
  bodyId: string;
  ratePerS: number;
  durationS: number;
}

export type LoadJob = ThroughputJob | PacedJob;

export interface ThroughputResult {
  requestsPerS: number;
  /** Requests answered with 2xx. */
  requests: number;
  /** Non-2xx answers, socket errors and timeouts: any is a failed measurement. */
  failures: number;
}

export interface PacedResult {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  count: number;
  failures: number;
}

const byId = (list: BenchBody[]) => new Map<string, BenchBody>(list.map((b) => [b.id, b]));
const bodies = byId(benchBodies());
/** The isolation bench's bodies (several MiB), built on first use. */
let isolation: Map<string, BenchBody> | undefined;

function bodyOf(id: string): BenchBody {
  const body = bodies.get(id) ?? (isolation ??= byId(isolationBodies())).get(id);
  if (body === undefined) throw new Error(`unknown body ${id}`);
  return body;
}

async function throughput(job: ThroughputJob): Promise<ThroughputResult> {
  const body = bodyOf(job.bodyId);
  const result = await autocannon({
    url: `https://127.0.0.1:${job.port}${body.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body.json,
    connections: job.connections,
    duration: job.durationS,
    timeout: 10,
  });
  return { requestsPerS: result['2xx'] / result.duration, requests: result['2xx'], failures: result.non2xx + result.errors + result.timeouts };
}

/** Connections opened before a paced run starts its clock. */
const PRIMED_CONNECTIONS = 4;

/** One POST whose answer is read and dropped: its HTTP status, or `undefined` on a socket error. */
function postOnce(agent: https.Agent, port: number, path: string, payload: Buffer): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = https.request(
      { agent, host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => res.resume().on('end', () => resolve(res.statusCode)),
    );
    req.on('error', () => resolve(undefined));
    req.end(payload);
  });
}

async function paced(job: PacedJob, ca: Buffer): Promise<PacedResult> {
  const body = bodyOf(job.bodyId);
  const payload = Buffer.from(body.json);
  // Enough sockets that a slow answer never delays the next due request.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca });
  const total = Math.max(1, Math.round(job.ratePerS * job.durationS));
  // Open a few connections first, so that TLS handshakes are not counted as review latency.
  await Promise.all(Array.from({ length: PRIMED_CONNECTIONS }, () => postOnce(agent, job.port, body.path, payload)));
  const latenciesMs: number[] = [];
  let failures = 0;
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    let settled = 0;
    const settle = () => {
      if (++settled === total) resolve();
    };
    const send = (dueMs: number) =>
      void postOnce(agent, job.port, body.path, payload).then((status) => {
        if (status === 200) latenciesMs.push(performance.now() - dueMs);
        else failures++;
        settle();
      });
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / job.ratePerS <= now) send(start + (sent++ * 1000) / job.ratePerS);
      if (sent < total) setTimeout(tick, Math.max(0, start + (sent * 1000) / job.ratePerS - performance.now()));
    };
    tick();
  });
  agent.destroy();
  latenciesMs.sort((x, y) => x - y);
  return {
    p50Ms: quantile(latenciesMs, 0.5),
    p99Ms: quantile(latenciesMs, 0.99),
    maxMs: latenciesMs.at(-1) ?? NaN,
    count: latenciesMs.length,
    failures,
  };
}

const certDir = process.argv[2];
if (certDir === undefined || process.send === undefined) throw new Error('loadgen is forked by run.ts with the certificate directory');
const ca = readFileSync(join(certDir, 'ca.crt'));
process.on('message', (job: LoadJob) => {
  const run = job.op === 'throughput' ? throughput(job) : paced(job, ca);
  run.then(
    (result) => process.send!({ ok: true, result }),
    (e: unknown) => process.send!({ ok: false, error: String(e) }),
  );
});
