/** `-f/--filename` and standard input: kubectl's way of naming input, and no silent wait on a terminal. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { stringify } from 'yaml';
import { inputPaths, NO_CONFIG_INPUT, NO_INPUT, readInput, readStdin } from '../../src/cli/input.js';
import { reviewFromArguments } from '../../src/cli/review.js';
import { MAX_INPUT_BYTES } from '../../src/kubernetes/manifests.js';
import { spiderIPPool } from '../helpers/pools.js';

const terminal = () => Object.assign(Readable.from([]), { isTTY: true });
const args = { pools: [] as string[], configmapName: 'spiderpool-conf' };

describe('input of review and validate-config', () => {
  it('a bare review on a terminal is refused at once with one line, not a silent wait', async () => {
    await expect(readStdin(terminal())).rejects.toThrow(NO_INPUT);
    expect(await reviewFromArguments(inputPaths([], []), args, () => readStdin(terminal()))).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `error: ${NO_INPUT}\n`,
    });
  });

  it('validate-config - on a terminal names its own input, conf.yml or its ConfigMap, not manifests with -f', async () => {
    await expect(readInput('-', terminal())).rejects.toThrow(NO_CONFIG_INPUT);
    expect(NO_CONFIG_INPUT).not.toContain('repeatable');
    expect(await readInput('-', Readable.from([Buffer.from('enableIPv4: true\n')]))).toBe('enableIPv4: true\n');
  });

  it('piped standard input is read whole', async () => {
    expect(await readStdin(Readable.from([Buffer.from('a: 1\n'), Buffer.from('b: 2\n')]))).toBe('a: 1\nb: 2\n');
  });

  it('endless standard input stops at MAX_INPUT_BYTES with one line naming STDIN', async () => {
    const endless = async function* () {
      for (;;) yield Buffer.alloc(1024 * 1024);
    };
    await expect(readStdin(Readable.from(endless()))).rejects.toThrow(`STDIN: holds more than ${MAX_INPUT_BYTES} bytes`);
  });

  it('FILE arguments and -f values together, in order; - once at most; none is standard input', () => {
    expect(inputPaths([], [])).toEqual(['-']);
    expect(inputPaths(['a.yaml'], ['b/', '-'])).toEqual(['a.yaml', 'b/', '-']);
    expect(() => inputPaths(['-'], ['-'])).toThrow('- (standard input) may be given once');
  });

  it('-f repeated: the files together are the cluster state, so a pair split across two files is judged', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'input-'));
    try {
      const common = { provider: 'cloud', nic: 'eth0', nodeName: ['worker-1'] };
      await writeFile(path.join(dir, 'v4.yaml'), stringify(spiderIPPool('v4', { ...common, pair: 'v6', version: 4, ips: ['10.6.0.10-10.6.0.20'] })));
      await writeFile(path.join(dir, 'v6.yaml'), stringify(spiderIPPool('v6', { ...common, pair: 'v4', version: 6, ips: ['fd00::1'] })));
      const result = await reviewFromArguments(inputPaths([], [path.join(dir, 'v4.yaml'), path.join(dir, 'v6.yaml')]), args, () => readStdin(terminal()));
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toMatch(/^The SpiderIPPool "v6" is invalid: /m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
