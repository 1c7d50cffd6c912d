/**
 * Small process helpers for the cluster e2e: run a command to completion, ask the OS for a
 * free loopback port, and poll a condition with a bounded deadline.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A finished command: exit `code` (null when killed by `signal`) and its output. */
export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` with `args` to completion; a non-zero exit is a result, not an error.
 *
 * @param opts.stdin text written to standard input (closed afterwards; closed at once without it).
 * @param opts.timeoutMs the process is killed (SIGKILL) after this long; default 120 s.
 * @throws Error only when the command cannot be started, or its stdin fails otherwise than
 *   by the command closing it unread (EPIPE, a result like any other).
 */
export function runProcess(
  command: string,
  args: readonly string[],
  opts: { stdin?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    // A command may exit without reading its stdin: the write then fails with EPIPE, and
    // its exit code and output are still the result.
    child.stdin.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') reject(e);
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/** A port on 127.0.0.1 that the OS reports free (released again before it is returned). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
