/**
 * The webhook as built in dist/, run with `serve` on 127.0.0.1, and the JSON lines it logs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { until } from '../../helpers/until.js';

/** The repository: the nearest folder above this file with a package.json (this file also runs compiled, from dist-bench/). */
export const ROOT = repositoryRoot(path.dirname(fileURLToPath(import.meta.url)));

function repositoryRoot(dir: string): string {
  if (existsSync(path.join(dir, 'package.json'))) return dir;
  const parent = path.dirname(dir);
  if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
  return repositoryRoot(parent);
}
/** The built command line (`npm run test:e2e` builds dist/ first). */
export const CLI = path.join(ROOT, 'dist/cli/main.js');

/** One pino log line of the webhook (`msg` and the fields it logged). */
export type LogLine = Record<string, unknown> & { msg?: string };

/**
 * A webhook server process. `start()` listens on a port the OS picks the first time and on
 * the same port after `stop()` (the registration names the port in its URL).
 */
export class WebhookProcess {
  /** Every line logged by every run of the process, in order. */
  readonly log: LogLine[] = [];
  port = 0;
  private child: ChildProcess | undefined;
  /** Where the current run's lines start in {@link log}. */
  private firstLineOfRun = 0;

  /**
   * @param kubeconfig the cluster whose SpiderIPPools `serve --kubeconfig` caches for the
   *   dual-stack pair checks.
   * @param extraArgs more `serve` flags, e.g. `--log-level=debug`.
   */
  constructor(
    private readonly certDir: string,
    private readonly kubeconfig: string,
    private readonly extraArgs: readonly string[] = [],
  ) {}

  /** The running process's id (to prove something did not restart). */
  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  /** Whether a process is running (started and not yet exited). */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts `serve` and resolves when it listens; does nothing while it is running.
   *
   * @throws Error with the run's log when it exits or does not listen within 30 s.
   */
  async start(): Promise<void> {
    if (this.running) return;
    const firstLine = this.log.length;
    this.firstLineOfRun = firstLine;
    const child = spawn(
      process.execPath,
      // debug: allowed reviews are logged only there, and the scenarios match every decision to its line.
      // --idle-timeout=5s: the CA rotation scenario needs the API server's idle connections, made
      // with the old certificate, to end between its attempts (the default outlasts Go's 90 s).
      [
        CLI,
        'serve',
        '--host=127.0.0.1',
        `--port=${this.port}`,
        `--cert-dir=${this.certDir}`,
        '--no-generate-certs',
        `--kubeconfig=${this.kubeconfig}`,
        '--log-level=debug',
        '--idle-timeout=5s',
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    let listening: LogLine | undefined;
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { msg: text };
      }
      this.log.push(line);
      if (line.msg === 'serving admission reviews over HTTPS') listening = line;
    });
    const started = await until(() => (child.exitCode !== null ? null : listening), 'the webhook to listen', { timeoutMs: 30_000 });
    if (started === null) {
      const output = this.log.slice(firstLine).map((line) => JSON.stringify(line));
      throw new Error(`the webhook exited (${child.exitCode}):\n${output.join('\n')}\n${stderr}`);
    }
    this.port = started['port'] as number;
  }

  /** SIGTERM (the server drains and exits), SIGKILL after 10 s; resolves once it exited. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  }

  /**
   * Resolves once the running process has listed SpiderIPPools (its pool cache synced),
   * which it retries with backoff while the CRD is not yet served.
   */
  async poolCacheSynced(): Promise<void> {
    await until(() => this.log.slice(this.firstLineOfRun).some((line) => line.msg === 'SpiderIPPool cache listed'), 'the webhook to list SpiderIPPools', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
  }

  /** The `admission review` lines logged for objects called `name`. */
  reviewsOf(name: string): LogLine[] {
    return this.log.filter((line) => line.msg === 'admission review' && line['name'] === name);
  }
}
