/**
 * The servers under test (the full run's four; `--paired` adds the answer floor), started
 * as separate processes on ephemeral loopback ports: how each is launched, when it counts
 * as ready, and its memory and CPU time from `/proc/<pid>/status` and `/proc/<pid>/stat`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_CONNECTIONS } from '../src/server/limits.js';

export type ServerId = 'webhook' | 'floor' | 'ceiling' | 'go';

export interface ServerSpec<Id extends string = ServerId> {
  id: Id;
  title: string;
  command: string;
  args: string[];
  /** Answers every review allowed (the reference servers that only parse it). */
  allowsAll: boolean;
  /** Environment of the process; the parent's when absent. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The parent's environment without any way to a cluster (no `KUBECONFIG`, no in-cluster
 * variables, `HOME` in `home`), so the webhook runs as a local `npm start` without a
 * cluster does, whatever the machine has in `~/.kube`: no SpiderIPPool cache.
 */
function withoutCluster(home: string): NodeJS.ProcessEnv {
  const { KUBECONFIG: _kubeconfig, KUBERNETES_SERVICE_HOST: _host, KUBERNETES_SERVICE_PORT: _port, ...env } = process.env;
  return { ...env, HOME: home };
}

/**
 * The Node flags `npm start` runs the webhook with: the words between `node` and
 * `dist/cli/main.js` in package.json's `start` script (the image's ENTRYPOINT has the same,
 * test/deploy checks).
 *
 * @throws Error when the script does not start with `node … dist/cli/main.js`.
 */
export function startNodeFlags(repoDir: string): string[] {
  const start: unknown = JSON.parse(readFileSync(join(repoDir, 'package.json'), 'utf8')).scripts?.start;
  const words = typeof start === 'string' ? start.trim().split(/\s+/) : [];
  const main = words.indexOf('dist/cli/main.js');
  if (words[0] !== 'node' || main < 0) throw new Error(`package.json's start script is not "node [flags] dist/cli/main.js ...": ${JSON.stringify(start)}`);
  return words.slice(1, main);
}

/**
 * `webhook` is started as `npm start` starts it (its Node flags, `serve --host 127.0.0.1 --no-pool-cache`, log level
 * info: a JSON log line per denial, none per allowed review) but on port 0, without npm in between (the process
 * measured is the server itself) and without a cluster; its log goes to a file, as a
 * container's stdout ends up on disk. `extraNodeArgs` go to every Node server (`--cpu-prof`).
 */
export function serverSpecs(repoDir: string, certDir: string, goBinary: string, extraNodeArgs: string[] = []): ServerSpec[] {
  return [
    ...nodeServerSpecs(repoDir, certDir, extraNodeArgs),
    { id: 'go', title: 'Go reference', command: goBinary, args: ['-cert-dir', certDir], allowsAll: false },
  ];
}

/** The three Node servers of {@link serverSpecs}: this webhook, the express floor, the Node ceiling. */
export function nodeServerSpecs(repoDir: string, certDir: string, extraNodeArgs: string[] = []): ServerSpec[] {
  return [
    {
      id: 'webhook',
      title: 'this webhook',
      command: process.execPath,
      // The load comes from one address, as an API server's calls do; the per-address share
      // (fairness against neighbours, tested in test/server/fairness.test.ts) would cut it
      // to a quarter of the cap, so the bench gives that one address the whole cap.
      args: [
        ...startNodeFlags(repoDir),
        ...extraNodeArgs,
        join(repoDir, 'dist/cli/main.js'),
        'serve',
        '--host',
        '127.0.0.1',
        '--no-pool-cache',
        '--port',
        '0',
        '--cert-dir',
        certDir,
        `--max-connections-per-address=${DEFAULT_MAX_CONNECTIONS}`,
      ],
      env: withoutCluster(certDir),
      allowsAll: false,
    },
    {
      id: 'floor',
      title: 'express floor',
      command: process.execPath,
      args: [...extraNodeArgs, join(repoDir, 'dist-bench/bench/express-floor.js'), certDir],
      allowsAll: true,
    },
    {
      id: 'ceiling',
      title: 'Node ceiling',
      command: process.execPath,
      args: [...extraNodeArgs, join(repoDir, 'dist-bench/bench/node-ceiling.js'), certDir],
      allowsAll: true,
    },
  ];
}

export interface Memory {
  /** Resident set now (`VmRSS`), MiB. */
  rssMiB: number;
  /** Highest resident set since start (`VmHWM`), MiB. */
  peakMiB: number;
}

export interface BenchServer<Id extends string = ServerId> {
  spec: ServerSpec<Id>;
  port: number;
  /** From spawn to the first 200 from `GET /readyz`, milliseconds. */
  readyMs: number;
  memory(): Memory;
  /** CPU time the process used so far (user + system, all threads), seconds. */
  cpuSeconds(): number;
  /** SIGTERM, then waits for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

const POLL_MS = 2;
const START_TIMEOUT_MS = 30_000;

function readyzAnswers(port: number, ca: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/readyz', ca, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts `spec`, finds its port in the first `"port":N` it prints (every server
 * prints one), and waits for `/readyz`. stdout and stderr go to `<logDir>/<id>.log`.
 *
 * @throws Error when the process exits or is not ready within 30 s.
 */
export async function startBenchServer<Id extends string>(spec: ServerSpec<Id>, logDir: string, ca: Buffer): Promise<BenchServer<Id>> {
  const logFile = join(logDir, `${spec.id}.log`);
  const fd = openSync(logFile, 'w');
  const started = performance.now();
  const child = spawn(spec.command, spec.args, { stdio: ['ignore', fd, fd], env: spec.env ?? process.env });
  closeSync(fd);
  const stop = async () => {
    const done = exited(child);
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(force);
  };
  try {
    let port: number | undefined;
    while (performance.now() - started < START_TIMEOUT_MS) {
      if (child.exitCode !== null) throw new Error(`${spec.title} exited with ${child.exitCode}; see ${logFile}`);
      port ??= Number(/"port":(\d+)/.exec(readFileSync(logFile, 'utf8'))?.[1] ?? NaN) || undefined;
      if (port !== undefined && (await readyzAnswers(port, ca))) {
        const readyMs = performance.now() - started;
        const pid = child.pid!;
        return { spec, port, readyMs, memory: () => memoryOf(pid), cpuSeconds: () => cpuSecondsOf(pid), stop };
      }
      await sleep(POLL_MS);
    }
    throw new Error(`${spec.title} was not ready within ${START_TIMEOUT_MS} ms; see ${logFile}`);
  } catch (e) {
    await stop();
    throw e;
  }
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kiB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kiB('VmRSS') / 1024, peakMiB: kiB('VmHWM') / 1024 };
}

/** Linux's USER_HZ, the unit of `utime` and `stime` in `/proc/<pid>/stat` (100 on every Linux architecture Node runs on). */
const CLOCK_TICKS_PER_S = 100;

function cpuSecondsOf(pid: number): number {
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}
