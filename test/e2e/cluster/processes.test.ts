/**
 * runProcess (processes.ts): a command that exits without reading its standard input is
 * a result, not a crash. Writing to the closed pipe fails with EPIPE; unhandled, that
 * error escaped as an uncaught exception and failed the whole jest file (seen on the
 * cluster test: `iptables-save` in the node, polled by policy/enforcer.ts, exited
 * before its empty stdin was closed).
 */
import { runProcess } from './processes.js';

describe('runProcess', () => {
  it('gives the exit code and output of a command that never reads its stdin (EPIPE on the write)', async () => {
    // 4 MiB: more than a pipe holds, so the write is still pending when the command exits.
    const stdin = 'x'.repeat(4 * 1024 * 1024);
    for (let i = 0; i < 5; i++) {
      await expect(runProcess('sh', ['-c', 'echo out; echo err >&2; exit 3'], { stdin })).resolves.toEqual({
        code: 3,
        signal: null,
        stdout: 'out\n',
        stderr: 'err\n',
      });
    }
  });

  it('still passes stdin to a command that reads it', async () => {
    await expect(runProcess('cat', [], { stdin: 'a\nb\n' })).resolves.toMatchObject({ code: 0, stdout: 'a\nb\n' });
  });
});
