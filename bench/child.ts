/**
 * The bench's child processes (the webhook, the Go reference): waiting for a line they
 * print, and stopping them, both bounded, so that a failed start leaves no server running
 * and a stop never waits forever.
 */
import type { ChildProcess } from 'node:child_process';

/** How long a child may take to exit after SIGTERM before it gets SIGKILL, in milliseconds: the webhook's own shutdown grace (10 s) and some. */
export const STOP_GRACE_MS = 15_000;

/** Whether `child` has ended: with an exit code, or by a signal (its `exitCode` stays `null` then). */
export const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/** SIGTERM, then SIGKILL after `graceMs`; resolves once `child` has exited (at once for one that already has). */
export async function stop(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([gone.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
  clearTimeout(timer);
  if (late) {
    child.kill('SIGKILL');
    await gone;
  }
}

/**
 * Waits up to `limitMs` for a line of `log()` (the child's output so far) that holds
 * `marker`, and returns it.
 *
 * @throws Error naming `what`, with the output's tail, when the child exits first or the
 *   time runs out; the child is stopped first, so that no server is left running.
 */
export async function waitForLine(child: ChildProcess, log: () => string, marker: string, limitMs: number, what: string): Promise<string> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const line = log()
      .split('\n')
      .find((l) => l.includes(marker));
    if (line !== undefined) return line;
    if (exited(child)) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}):\n${log().slice(-2000)}`);
    if (performance.now() > deadline) {
      await stop(child);
      throw new Error(`${what} did not print ${JSON.stringify(marker)} within ${limitMs / 1000} s:\n${log().slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
