import { spawn, type ChildProcess } from 'node:child_process';
import { exited, stop, waitForLine } from '../../bench/child.js';

/** A Node child running `script`, its output collected. */
function child(script: string): { process: ChildProcess; log: () => string } {
  const process_ = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  process_.stdout!.on('data', (c) => (log += c));
  process_.stderr!.on('data', (c) => (log += c));
  return { process: process_, log: () => log };
}

const printsThenWaits = (line: string) => `process.stdout.write(${JSON.stringify(`${line}\n`)}); setInterval(() => {}, 1000);`;
const ignoresSigterm = `process.on('SIGTERM', () => {}); process.stdout.write('up\\n'); setInterval(() => {}, 1000);`;

describe("the bench's children", () => {
  it('waitForLine returns the line holding the marker', async () => {
    const c = child(printsThenWaits('{"port":1234}'));
    try {
      expect(await waitForLine(c.process, c.log, '"port"', 10_000, 'the child')).toBe('{"port":1234}');
      expect(exited(c.process)).toBe(false);
    } finally {
      await stop(c.process);
    }
  });

  it('waitForLine stops a child that does not print the marker in time, then throws', async () => {
    const c = child(printsThenWaits('something else'));
    await waitForLine(c.process, c.log, 'something else', 10_000, 'the child'); // a loaded machine may take longer than the limit below to start Node
    await expect(waitForLine(c.process, c.log, '"port"', 300, 'the child')).rejects.toThrow(
      /the child did not print "\\"port\\"" within 0.3 s:\nsomething else/,
    );
    expect(exited(c.process)).toBe(true);
  });

  it('waitForLine throws, naming the exit, for a child that exits first', async () => {
    const c = child(`console.error('cannot start'); process.exit(2)`);
    await expect(waitForLine(c.process, c.log, '"port"', 10_000, 'the child')).rejects.toThrow(/the child exited \(2\):\ncannot start/);
  });

  it('stop returns at once for a child already killed by a signal (exitCode null, signalCode set)', async () => {
    const c = child(printsThenWaits('up'));
    await waitForLine(c.process, c.log, 'up', 10_000, 'the child');
    c.process.kill('SIGKILL');
    await new Promise((resolve) => c.process.once('exit', resolve));
    expect(c.process.exitCode).toBeNull();
    expect(c.process.signalCode).toBe('SIGKILL');
    expect(exited(c.process)).toBe(true);
    await stop(c.process, 60_000); // would wait for an 'exit' that already came, forever
  });

  it('stop sends SIGKILL to a child that ignores SIGTERM, after the grace', async () => {
    const c = child(ignoresSigterm);
    await waitForLine(c.process, c.log, 'up', 10_000, 'the child');
    await stop(c.process, 200);
    expect(c.process.signalCode).toBe('SIGKILL');
  });

  it('stop lets a child that obeys SIGTERM exit by itself', async () => {
    const c = child(printsThenWaits('up'));
    await waitForLine(c.process, c.log, 'up', 10_000, 'the child');
    await stop(c.process, 60_000);
    expect(c.process.signalCode).toBe('SIGTERM');
  });
});
