/**
 * What every benchmark mode needs around the servers: the certificates, the load
 * generator process (loadgen.ts), a single POST and the check of a server's answer.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import type { BenchBody } from './bodies.js';
import type { LoadJob } from './loadgen.js';
import type { BenchServer } from './servers.js';

/** A load-generator process; `run` queues a job on it and resolves with its result. */
export interface LoadGenerator {
  run<R>(job: LoadJob): Promise<R>;
  child: ChildProcess;
}

/** A CA and a serving certificate for 127.0.0.1, made by the webhook's own `certs` command. */
export function makeCertificates(repoDir: string, dir: string): Buffer {
  const certs = spawnSync(process.execPath, [join(repoDir, 'dist/cli/main.js'), 'certs', '--out', dir, '--ip', '127.0.0.1', '--dns-name', 'localhost'], {
    encoding: 'utf8',
  });
  if (certs.status !== 0) throw new Error(`certs failed: ${certs.stderr}`);
  return readFileSync(join(dir, 'ca.crt'));
}

/** The load generator process and a function to run one job on it. */
export function startLoadGenerator(repoDir: string, certDir: string): LoadGenerator {
  const child = fork(join(repoDir, 'dist-bench/bench/loadgen.js'), [certDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let queue = Promise.resolve();
  const run = <R>(job: LoadJob): Promise<R> => {
    const next = queue.then(
      () =>
        new Promise<R>((resolve, reject) => {
          const exited = (code: number | null) => reject(new Error(`the load generator exited (${code}) during ${job.op} of body (${job.bodyId})`));
          child.once('exit', exited);
          child.once('message', (m: { ok: boolean; result?: R; error?: string }) => {
            child.off('exit', exited);
            if (m.ok) resolve(m.result!);
            else reject(new Error(m.error));
          });
          child.send(job);
        }),
    );
    queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  };
  return { run, child };
}

/** One POST of `body`, answered with the HTTP status and the parsed body (when 200). */
export function post(port: number, body: BenchBody, ca: Buffer): Promise<{ status: number; review?: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: body.path, method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve(status === 200 ? { status, review: JSON.parse(Buffer.concat(chunks).toString('utf8')) } : { status });
        });
      },
    );
    req.on('error', reject);
    req.end(body.json);
  });
}

/**
 * Checks that `server` answers `body` as it should: HTTP 200, `response.uid` echoed,
 * `allowed` as expected (the floor and the ceiling allow everything), a denial with code 422;
 * resolves with the answer.
 *
 * @throws Error naming the server, the body and what was wrong.
 */
export async function checkAnswer(server: BenchServer<string>, body: BenchBody, ca: Buffer): Promise<{ status: number; review?: any }> {
  const { status, review } = await post(server.port, body, ca);
  const expectAllowed = server.spec.allowsAll || body.expectAllowed;
  const response = review?.response;
  const problem =
    status !== 200
      ? `HTTP ${status}`
      : response?.uid !== body.uid
        ? `response.uid ${JSON.stringify(response?.uid)}, expected ${JSON.stringify(body.uid)}`
        : response.allowed !== expectAllowed
          ? `allowed ${response.allowed}, expected ${expectAllowed}`
          : !expectAllowed && response.status?.code !== 422
            ? `denial code ${response.status?.code}, expected 422`
            : undefined;
  if (problem) throw new Error(`${server.spec.title} answered body (${body.id}) ${body.title} wrongly: ${problem}`);
  return { status, review };
}
