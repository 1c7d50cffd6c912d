/**
 * Runs the Go oracle in test/e2e/oracle (a small Go program that answers with Go's own
 * time.ParseDuration, time.Duration.String, gopkg.in/yaml.v2 and gopkg.in/yaml.v3).
 *
 * The program is built once per test process into a temporary directory, with the
 * user's normal Go caches, so only the first build on a machine is slow. Each
 * askOracle call runs one process: all questions go in as JSON lines on stdin, one
 * answer per line comes back on stdout, in order.
 *
 * Go is test tooling only. Without `go` on PATH the oracle fails with a clear error:
 * the e2e suite must fail, not skip.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Go module's directory: test/e2e/oracle. */
export const ORACLE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'oracle');

/** A question: `{op: 'duration', in}`, `{op: 'format', ns}`, `{op: 'confyml', in}` or `{op: 'url', in}`. */
export type OracleCase = { op: 'duration'; in: string } | { op: 'format'; ns: string } | { op: 'confyml'; in: string } | { op: 'url'; in: string };

/** Go's `url.Parse` verdict. */
export interface UrlAnswer {
  ok: boolean;
  scheme?: string;
  host?: string;
  error?: string;
}

/** Go's answer to `duration` and `format`. */
export interface DurationAnswer {
  ok: boolean;
  ns?: string;
  string?: string;
  error?: string;
}

/** One Go decoder's reading of a conf.yml document. */
export interface Decoding {
  ok: boolean;
  error?: string;
  serverUrl: string;
  httpRequestTimeout: string;
  /** The exact bytes of the strings, in hex (JSON turns invalid UTF-8 into U+FFFD). */
  serverUrlHex: string;
  httpRequestTimeoutHex: string;
  /** Whether both strings are valid UTF-8 (and so exact as JSON strings). */
  utf8: boolean;
  /**
   * The start-time checks' failure on what this decoder read (absent when they pass): the
   * IaaS client's ValidateConfig when serverUrl is set, then the networkResourcePlugin checks.
   */
  startError?: string;
  /** The failure only the agent meets on what this decoder read: its unix socket path (sun_path). */
  agentStartError?: string;
}

/** Go's answer to `confyml`: the controller's decoder (v2) and the agent's (v3). */
export interface ConfYmlAnswer {
  v2: Decoding;
  v3: Decoding;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], opts: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    // The child may exit early (e.g. a crash); its stdin then errors with EPIPE. The
    // exit status tells what happened, so this error is not the one to report.
    child.stdin.on('error', () => undefined);
    child.on('close', (code, signal) => resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(opts.input ?? '');
  });
}

let built: Promise<{ binary: string; dir: string }> | undefined;

/**
 * Builds the oracle once per process (`go build` in test/e2e/oracle).
 * @throws Error with a clear message when `go` is missing or the build fails.
 */
export function buildOracle(): Promise<{ binary: string; dir: string }> {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spiderpool-iaas-webhook-oracle-'));
    const binary = join(dir, process.platform === 'win32' ? 'oracle.exe' : 'oracle');
    let result: Run;
    try {
      result = await run('go', ['build', '-o', binary, '.'], { cwd: ORACLE_DIR });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new Error(
          'The e2e Go oracle needs the Go toolchain (go 1.26 or newer), but `go` is not on PATH. ' +
            'Install Go (https://go.dev/dl/) and make sure `go version` works, then re-run the e2e tests.',
        );
      }
      throw e;
    }
    if (result.code !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`\`go build\` of the e2e Go oracle in ${ORACLE_DIR} failed (exit ${result.code}):\n${result.stderr}`);
    }
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return { binary, dir };
  })();
  return built;
}

/** Removes the built binary (call from afterAll); a later askOracle builds again. */
export async function disposeOracle(): Promise<void> {
  const b = built;
  built = undefined;
  if (b !== undefined) {
    const { dir } = await b.catch(() => ({ dir: undefined }));
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Asks Go every case in one process.
 * @returns one answer per case, in order.
 * @throws Error when Go is unavailable, the oracle crashes, or answers do not line up.
 */
export async function askOracle(cases: readonly object[]): Promise<object[]> {
  const { binary } = await buildOracle();
  if (cases.length === 0) return [];
  // JSON.stringify writes a lone surrogate as "\udXXX"; Go's decoder reads it as U+FFFD.
  const input = `${cases.map((c) => JSON.stringify(c)).join('\n')}\n`;
  const result = await run(binary, [], { input });
  if (result.code !== 0) {
    throw new Error(`the Go oracle failed (exit ${result.code ?? result.signal}):\n${result.stderr.slice(0, 4000)}`);
  }
  const lines = result.stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length !== cases.length) {
    throw new Error(`the Go oracle gave ${lines.length} answers to ${cases.length} questions:\n${result.stderr.slice(0, 4000)}`);
  }
  return lines.map((line) => JSON.parse(line) as object);
}

/** Typed shorthands. */
export async function askDurations(inputs: readonly string[]): Promise<DurationAnswer[]> {
  const cases: OracleCase[] = inputs.map((s) => ({ op: 'duration', in: s }));
  return (await askOracle(cases)) as DurationAnswer[];
}

export async function askFormats(ns: readonly bigint[]): Promise<DurationAnswer[]> {
  const cases: OracleCase[] = ns.map((n) => ({ op: 'format', ns: n.toString() }));
  return (await askOracle(cases)) as DurationAnswer[];
}

export async function askConfYml(docs: readonly string[]): Promise<ConfYmlAnswer[]> {
  const cases: OracleCase[] = docs.map((d) => ({ op: 'confyml', in: d }));
  return (await askOracle(cases)) as ConfYmlAnswer[];
}

export async function askUrls(inputs: readonly string[]): Promise<UrlAnswer[]> {
  const cases: OracleCase[] = inputs.map((s) => ({ op: 'url', in: s }));
  return (await askOracle(cases)) as UrlAnswer[];
}
