/**
 * What a hostile tenant runs inside the cluster (tenant.test.ts), as a program of its own
 * in a pod of the tenant namespace: Node builtins only, made a script by
 * test/helpers/attacker-process.ts (`moduleScript`) and mounted from a ConfigMap.
 *
 * - `writes`: Pods and Deployments with hostile pool annotations, created through the API
 *   server with the pod's ServiceAccount token, as server-side dry runs and real creates
 *   (issue text: backtracking wildcards, very long pattern lists, distinct ~240 KiB lists).
 * - `bodies`: hostile bodies posted straight to the webhook Service: deep `[[[…]]]`, wide
 *   `[{},{},…]`, and requests refused from their head (the body never sent).
 *
 * Every request is counted by its answer and one `TenantReport` JSON line is printed at
 * the end. Bounded: a fixed count per kind, at most `concurrency` at once per kind, none
 * started after `deadlineMs`, each abandoned after `requestTimeoutMs`.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';

/** `filepath.Match` pattern that a backtracking regular expression takes seconds on per pool name. */
export const BACKTRACKING_PATTERN = '*'.repeat(13) + '?'.repeat(64);
/** Under Kubernetes' 256 KiB limit on all of an object's annotations together. */
const DISTINCT_LIST_BYTES = 240 * 1024;
const LONG_LIST_PATTERNS = 8_000;
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export type WriteKind = 'wildcard' | 'long-list' | 'distinct-list';
export type BodyKind = 'deep' | 'wide' | 'early-refused';

interface Bounds {
  /** Requests in flight at once, per kind. */
  concurrency: number;
  /** No request is started after this many milliseconds from the start. */
  deadlineMs: number;
  requestTimeoutMs: number;
}

export interface WritesPlan extends Bounds {
  mode: 'writes';
  /** Requests per kind: Pods and Deployments in turn; every `realEvery`-th a real create, the others dry runs. */
  counts: Record<WriteKind, number>;
  realEvery: number;
}

export interface BodiesPlan extends Bounds {
  mode: 'bodies';
  /** The webhook Service (its ClusterIP), port and the name in its certificate. */
  host: string;
  port: number;
  servername: string;
  /** Review paths posted to, in turn. */
  paths: string[];
  counts: Record<BodyKind, number>;
  /** Size of each deep and wide body, in bytes. */
  bodyBytes: number;
  /** How long a head-refused connection is watched for the server to close it, in milliseconds. */
  closeWaitMs: number;
}

export type TenantPlan = WritesPlan | BodiesPlan;

/** What came back for one kind of request. */
export interface Tally {
  sent: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Transport errors and timeouts, by message. */
  errors: Record<string, number>;
  /** Answers with a Warning header (writes: the webhook's warnings come back so). */
  warned: number;
  /** Head-refused connections the server closed within `closeWaitMs` of its answer. */
  closedAfterAnswer: number;
  /** The first answer body of each status, shortened. */
  samples: Record<string, string>;
}

export interface TenantReport {
  final: true;
  mode: TenantPlan['mode'];
  ms: number;
  tallies: Record<string, Tally>;
}

const newTally = (): Tally => ({ sent: 0, statuses: {}, errors: {}, warned: 0, closedAfterAnswer: 0, samples: {} });

function countAnswer(tally: Tally, status: number, body: string): void {
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
  tally.samples[status] ??= body.slice(0, 300);
}

function countError(tally: Tally, err: Error): void {
  const key = err.message.slice(0, 100);
  tally.errors[key] = (tally.errors[key] ?? 0) + 1;
}

/** Runs `send(i)` for i below `count`, `concurrency` at once, starting none after `deadline` (epoch ms). */
async function bounded(count: number, concurrency: number, deadline: number, send: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count && Date.now() < deadline) await send(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** The pool annotations of request `i` of `kind`; every list differs from every other request's. */
export function hostileAnnotations(kind: WriteKind, i: number): Record<string, string> {
  if (kind === 'wildcard') {
    const names = [BACKTRACKING_PATTERN, `tenant-${i}`];
    return i % 2 === 0
      ? { 'ipam.spidernet.io/ippool': JSON.stringify({ ipv4: names }) }
      : { 'ipam.spidernet.io/ippools': JSON.stringify([{ interface: 'eth0', ipv4: names }]) };
  }
  if (kind === 'long-list') {
    const patterns = Array.from({ length: LONG_LIST_PATTERNS }, (_, k) => `*?*?*?*${i}-${k}`);
    return { 'ipam.spidernet.io/ippools': JSON.stringify([{ interface: 'eth0', ipv4: patterns }]) };
  }
  const names: string[] = [];
  let bytes = '{"ipv4":[]}'.length;
  while (bytes < DISTINCT_LIST_BYTES) {
    const name = `r${i}-${names.length}-${'x'.repeat(40)}`;
    names.push(name);
    bytes += name.length + 3; // quotes and comma
  }
  return { 'ipam.spidernet.io/ippool': JSON.stringify({ ipv4: names }) };
}

/** A Pod (even `i`) or a Deployment of no replicas, never run: no scheduler takes `schedulerName`. */
export function hostileObject(i: number, annotations: Record<string, string>): { path: string; object: unknown } {
  const spec = { schedulerName: 'tenant-unscheduled', containers: [{ name: 'c', image: 'tenant/never-runs:1' }] };
  if (i % 2 === 0) return { path: 'pods', object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'hostile-', annotations }, spec } };
  const labels = { app: 'hostile' };
  const template = { metadata: { labels, annotations }, spec };
  return {
    path: 'deployments',
    object: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { generateName: 'hostile-' },
      spec: { replicas: 0, selector: { matchLabels: labels }, template },
    },
  };
}

interface Answer {
  status: number;
  body: string;
  warned: boolean;
}

/** One HTTPS request; rejects on a transport error or after `timeoutMs`. */
function send(options: https.RequestOptions, body: string, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request({ ...options, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.length < 4 && chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), warned: res.headers['warning'] !== undefined }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function tallied(tally: Tally, request: () => Promise<Answer>): Promise<void> {
  tally.sent++;
  try {
    const answer = await request();
    countAnswer(tally, answer.status, answer.body);
    if (answer.warned) tally.warned++;
  } catch (e) {
    countError(tally, e as Error);
  }
}

/** The hostile writes through the API server, with this pod's ServiceAccount. */
async function runWrites(plan: WritesPlan, tallies: Record<string, Tally>): Promise<void> {
  const token = readFileSync(`${SA_DIR}/token`, 'utf8');
  const namespace = readFileSync(`${SA_DIR}/namespace`, 'utf8');
  const agent = new https.Agent({ keepAlive: true, maxSockets: 3 * plan.concurrency, ca: readFileSync(`${SA_DIR}/ca.crt`) });
  const deadline = Date.now() + plan.deadlineMs;
  await Promise.all(
    (Object.keys(plan.counts) as WriteKind[]).map((kind) => {
      const tally = (tallies[kind] = newTally());
      return bounded(plan.counts[kind], plan.concurrency, deadline, (i) => {
        const { path, object } = hostileObject(i, hostileAnnotations(kind, i));
        const group = path === 'pods' ? '/api/v1' : '/apis/apps/v1';
        const dryRun = (i + 1) % plan.realEvery === 0 ? '' : '?dryRun=All';
        const options = {
          host: process.env['KUBERNETES_SERVICE_HOST'],
          port: process.env['KUBERNETES_SERVICE_PORT'],
          method: 'POST',
          path: `${group}/namespaces/${namespace}/${path}${dryRun}`,
          agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        };
        return tallied(tally, () => send(options, JSON.stringify(object), plan.requestTimeoutMs));
      });
    }),
  );
  agent.destroy();
}

/** Objects in a wide body: just under the server's 1 Mi token bound, so it is parsed. */
const WIDE_OBJECTS = 1_000_000;

/**
 * `[[[…]]]` of `bytes` bytes, or a wide body the server parses: `{"x":[{},{},…],"pad":"…"}`
 * of `bytes` bytes, {@link WIDE_OBJECTS} empty objects padded with a string.
 */
export function hostileBody(kind: 'deep' | 'wide', bytes: number): string {
  if (kind === 'deep') return '['.repeat(bytes / 2) + ']'.repeat(bytes / 2);
  const head = `{"x":[${'{},'.repeat(WIDE_OBJECTS - 1)}{}],"pad":"`;
  return `${head}${'p'.repeat(Math.max(0, bytes - head.length - 2))}"}`;
}

/**
 * A review head with no body that the server refuses from the head alone (415 for the
 * content type, 413 for the declared length): the answer's status, and whether the server
 * closed the connection within `closeWaitMs` after it.
 */
function headRefused(plan: BodiesPlan, path: string, i: number): Promise<{ status: number; closed: boolean }> {
  const [type, length] = i % 2 === 0 ? ['text/plain', 1024] : ['application/json', 8 * 1024 * 1024];
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: plan.host, port: plan.port, servername: plan.servername, rejectUnauthorized: false });
    let status = 0;
    let timer: NodeJS.Timeout | undefined;
    const give = setTimeout(() => socket.destroy(new Error(`no answer within ${plan.requestTimeoutMs} ms`)), plan.requestTimeoutMs);
    socket.once('secureConnect', () =>
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${plan.servername}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`),
    );
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(give);
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0);
      timer = setTimeout(() => (socket.destroy(), resolve({ status, closed: false })), plan.closeWaitMs);
    });
    socket.on('error', (e) => (status === 0 ? reject(e) : undefined));
    socket.once('close', () => {
      clearTimeout(give);
      clearTimeout(timer);
      if (status !== 0) resolve({ status, closed: true });
      else reject(new Error('closed before an answer'));
    });
  });
}

/** The hostile bodies straight to the webhook Service. */
async function runBodies(plan: BodiesPlan, tallies: Record<string, Tally>): Promise<void> {
  const deadline = Date.now() + plan.deadlineMs;
  const pathOf = (i: number) => plan.paths[i % plan.paths.length]!;
  const post = (body: string) => (i: number) =>
    send(
      {
        host: plan.host,
        port: plan.port,
        servername: plan.servername,
        rejectUnauthorized: false,
        agent: false,
        method: 'POST',
        path: pathOf(i),
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      body,
      plan.requestTimeoutMs,
    );
  const early = async (i: number): Promise<Answer> => {
    const { status, closed } = await headRefused(plan, pathOf(i), i);
    if (closed) tallies['early-refused']!.closedAfterAnswer++;
    return { status, body: '', warned: false };
  };
  const senders: Record<BodyKind, (i: number) => Promise<Answer>> = {
    deep: post(hostileBody('deep', plan.bodyBytes)),
    wide: post(hostileBody('wide', plan.bodyBytes)),
    'early-refused': early,
  };
  await Promise.all(
    (Object.keys(plan.counts) as BodyKind[]).map((kind) => {
      const tally = (tallies[kind] = newTally());
      return bounded(plan.counts[kind], plan.concurrency, deadline, (i) => tallied(tally, () => senders[kind](i)));
    }),
  );
}

/** Runs `plan` and prints its `TenantReport` as one JSON line. */
export async function runTenant(plan: TenantPlan, print: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const started = Date.now();
  const tallies: Record<string, Tally> = {};
  if (plan.mode === 'writes') await runWrites(plan, tallies);
  else await runBodies(plan, tallies);
  print(JSON.stringify({ final: true, mode: plan.mode, ms: Date.now() - started, tallies } satisfies TenantReport));
}
