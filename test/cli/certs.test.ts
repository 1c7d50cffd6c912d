/** `certs --out`: a folder (created when absent); a file in the way is one plain line, not `ENOTDIR`. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeCerts } from '../../src/cli/certs.js';
import { UsageError } from '../../src/cli/cluster-state.js';

const ARGS = { service: 'spiderpool-iaas-webhook', namespace: 'spiderpool-iaas-webhook', dnsName: [], ip: [], days: 30 };

describe('certs --out', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'certs-out-'));
    await writeFile(path.join(dir, 'a-file'), 'x');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    [
      'is a file',
      'a-file',
      /^--out .*a-file: is a file, not a folder; give a folder for tls\.crt, tls\.key, ca\.crt and ca\.key \(it is created when absent\)$/,
    ],
    ['lies under a file', 'a-file/tls', /^--out .*a-file\/tls: a part of the path is a file, not a folder; give a folder \(it is created when absent\)$/],
  ])('refuses an --out that %s with one line naming it', async (_what, out, message) => {
    const error = await writeCerts({ ...ARGS, out: path.join(dir, out) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('ENOTDIR');
  });
});
