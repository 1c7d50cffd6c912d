/**
 * The reloader on its own (no server): which version of a mounted Secret is read, and that
 * a throwing callback does not stop later reloads. Rotation on the real server is
 * test/server/reload.test.ts.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CertificateBundle } from '../../src/certs/generate.js';
import { writeServingDirectory } from '../../src/certs/files.js';
import { readTlsMaterial, watchCertificates, type ServedCertificate } from '../../src/certs/reload.js';
import { until } from '../helpers/until.js';
import { secretFiles, servingCertificate, writeSecretDir } from './secret-dir.js';

import { jest } from '@jest/globals';

// Three CAs and serving certificates are made first: seconds on a busy machine.
jest.setTimeout(60_000);

let dir: string;
let first: CertificateBundle;
let second: CertificateBundle;
let otherCa: CertificateBundle;

beforeAll(async () => {
  first = await servingCertificate();
  second = await servingCertificate(first);
  otherCa = await servingCertificate();
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-reloader-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readTlsMaterial', () => {
  it('reads both files of a mounted Secret from the version ..data points at', async () => {
    await writeSecretDir(dir, secretFiles(second));
    // Top-level names that would mix versions (as a read during the ..data swap can see):
    // the old certificate beside the new key.
    await rm(join(dir, 'tls.crt'));
    await writeFile(join(dir, 'tls.crt'), first.certPem);
    const read = await readTlsMaterial({ certDir: dir });
    expect([read.material.certPem, read.material.keyPem]).toEqual([second.certPem, second.keyPem]);
  });

  it('reads a plain directory (no ..data) directly', async () => {
    await writeFile(join(dir, 'tls.crt'), first.certPem);
    await writeFile(join(dir, 'tls.key'), first.keyPem);
    const read = await readTlsMaterial({ certDir: dir });
    expect(read.material.certPem).toBe(first.certPem);
  });
});

describe('watchCertificates', () => {
  it('keeps reloading after a callback throws', async () => {
    await writeSecretDir(dir, secretFiles(first));
    const applied: string[] = [];
    const failures: string[] = [];
    const reloader = watchCertificates({
      certDir: dir,
      initial: await readTlsMaterial({ certDir: dir }),
      intervalMs: 50,
      apply: (cert: ServedCertificate) => applied.push(cert.material.certPem),
      onReloaded: () => {
        throw new Error('a broken reload callback');
      },
      onFailure: (err) => failures.push(err.message),
    });
    try {
      await writeSecretDir(dir, secretFiles(second));
      await until(() => applied.length === 1, 'the second pair');
      await writeSecretDir(dir, secretFiles(first));
      await until(() => applied.length === 2, 'the first pair again, after the callback threw');
      expect(applied).toEqual([second.certPem, first.certPem]);
      expect(reloader.current().material.certPem).toBe(first.certPem);
      expect(failures[0]).toMatch(/certificate reload callback failed: a broken reload callback/);
    } finally {
      reloader.close();
    }
  });

  it('reports a ca.crt that changed beside the same pair (a CA joining the bundle), written by writeServingDirectory', async () => {
    await writeServingDirectory(dir, { certPem: first.certPem, keyPem: first.keyPem, caCertPem: first.caCertPem });
    const reloaded: ServedCertificate[] = [];
    const failures: string[] = [];
    const reloader = watchCertificates({
      certDir: dir,
      initial: await readTlsMaterial({ certDir: dir }),
      intervalMs: 50,
      apply: () => undefined,
      onReloaded: (cert) => reloaded.push(cert),
      onFailure: (err) => failures.push(err.message),
    });
    try {
      const bundle = `${first.caCertPem.trimEnd()}\n${otherCa.caCertPem.trimEnd()}\n`;
      await writeServingDirectory(dir, { certPem: first.certPem, keyPem: first.keyPem, caCertPem: bundle });
      await until(() => reloaded.length === 1, 'the new bundle', { describe: () => failures.join('; ') });
      expect(reloaded[0]!.material).toMatchObject({ certPem: first.certPem, caCertPem: bundle });
      // The earlier version is gone: only ..data and what it points at.
      const versions = (await readdir(dir)).filter((entry) => entry.startsWith('..'));
      expect(versions).toHaveLength(2);
      expect(versions).toEqual(expect.arrayContaining(['..data', expect.stringMatching(/^\.\.[0-9]+-[0-9a-f]+$/)]));
    } finally {
      reloader.close();
    }
  });
});
