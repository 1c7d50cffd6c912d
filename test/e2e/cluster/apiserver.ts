/**
 * The real kube-apiserver (with embedded etcd) built from test/e2e/apiserver by its
 * build.sh, which `npm run test:e2e` runs before jest.
 *
 * The Go program exits when its standard input closes, so it dies with this Node process
 * even when jest is killed; `stop()` closes stdin and, should that not be enough, kills it.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './processes.js';
import { ROOT } from './webhook.js';

/** bin/apiserver, the link build.sh leaves to the cached build. */
export const APISERVER_BINARY = path.join(ROOT, 'test/e2e/apiserver/bin/apiserver');

/** A cold start (etcd, CRD and RBAC bootstrap) on two busy cores is well under this. */
const STARTUP_TIMEOUT_MS = 180_000;

export interface ApiServer {
  /** kubeconfig with the admin token and the serving CA (inside the server's own temp dir). */
  kubeconfig: string;
  /** https://127.0.0.1:PORT */
  server: string;
  pid: number;
  /** Stops the process and waits for it to exit; its temp dir goes with it. */
  stop(): Promise<void>;
}

/** Attempts when the port the OS reported free is taken before the API server binds it. */
const PORT_ATTEMPTS = 3;

/**
 * Starts the API server on a free loopback port and resolves once `/readyz` is ok.
 *
 * @param logFile where the API server's and etcd's output goes.
 * @param extraArgs more kube-apiserver flags (e.g. `--audit-log-path=…`), after the program's own.
 * @throws Error when the binary has not been built, or the server exits or is not ready
 *   within 3 minutes (the error carries the last lines of its log).
 */
export async function startApiServer(logFile: string, extraArgs: readonly string[] = []): Promise<ApiServer> {
  if (!existsSync(APISERVER_BINARY)) {
    throw new Error(`${APISERVER_BINARY} is missing: run test/e2e/apiserver/build.sh (npm run test:e2e does)`);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(await freePort(), logFile, extraArgs);
    } catch (e) {
      // Other test runs on this machine open ports too; a lost race is not a failure.
      if (attempt === PORT_ATTEMPTS || !/address already in use/.test((e as Error).message)) throw e;
    }
  }
}

async function startOnce(port: number, logFile: string, extraArgs: readonly string[]): Promise<ApiServer> {
  // main.go hands the arguments after `--` to the kube-apiserver.
  const child = spawn(APISERVER_BINARY, [`--port=${port}`, ...(extraArgs.length > 0 ? ['--', ...extraArgs] : [])], { stdio: ['pipe', 'pipe', 'pipe'] });
  const log = createWriteStream(logFile);
  child.stderr.pipe(log);
  let tail = '';
  child.stderr.on('data', (b: Buffer) => (tail = (tail + b.toString('utf8')).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  let workDir: string | undefined;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    // The program removes its directory itself, unless it had to be killed.
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  };

  const ready = new Promise<{ kubeconfig: string; server: string }>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line) as { kubeconfig: string; server: string });
      } catch {
        reject(new Error(`unexpected first line from the API server: ${line}`));
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`the API server exited (${code ?? signal}) before it was ready:\n${tail}`)));
    child.once('error', reject);
    setTimeout(() => reject(new Error(`the API server was not ready after ${STARTUP_TIMEOUT_MS} ms:\n${tail}`)), STARTUP_TIMEOUT_MS).unref();
  });
  try {
    const { kubeconfig, server } = await ready;
    workDir = path.dirname(kubeconfig);
    return { kubeconfig, server, pid: child.pid!, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
