import { X509Certificate } from 'node:crypto';
import { chmod, mkdtemp, readFile, readdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CERT_FILES, caBundleBase64, loadOrCreateCertificates, readServingCertificates, writeCertificates } from '../../src/certs/files.js';
import { generateCertificates, type CertificateBundle } from '../../src/certs/generate.js';

const OPTS = { serviceName: 'webhook', namespace: 'ns', extraDnsNames: ['localhost'] };

let bundle: CertificateBundle;
let root: string;
let dirCount = 0;

/** A fresh, not yet existing directory under this file's temp root. */
function freshDir(): string {
  return join(root, `case-${++dirCount}`, 'nested');
}

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'certs-test-'));
  bundle = await generateCertificates(OPTS);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('writeCertificates / readServingCertificates', () => {
  it('writes the TLS Secret layout plus ca.key, creating the directory', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    expect((await readdir(dir)).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(CERT_FILES).toEqual({ cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt', caKey: 'ca.key' });
    expect(await readFile(join(dir, 'tls.crt'), 'utf8')).toBe(bundle.certPem);
    expect(await readFile(join(dir, 'tls.key'), 'utf8')).toBe(bundle.keyPem);
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(bundle.caCertPem);
    expect(await readFile(join(dir, 'ca.key'), 'utf8')).toBe(bundle.caKeyPem);
  });

  it('round-trips', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    expect(await readServingCertificates(dir)).toEqual({
      certPem: bundle.certPem,
      keyPem: bundle.keyPem,
      caCertPem: bundle.caCertPem,
    });
  });

  it('writes keys with mode 0600, also over existing world-readable files', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    expect(await modeOf(join(dir, 'tls.key'))).toBe(0o600);
    expect(await modeOf(join(dir, 'ca.key'))).toBe(0o600);
    expect(await modeOf(join(dir, 'tls.crt'))).toBe(0o644);

    await chmod(join(dir, 'tls.key'), 0o644);
    await chmod(join(dir, 'ca.key'), 0o666);
    await writeCertificates(dir, bundle);
    expect(await modeOf(join(dir, 'tls.key'))).toBe(0o600);
    expect(await modeOf(join(dir, 'ca.key'))).toBe(0o600);
  });

  it('treats ca.crt as optional', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    await unlink(join(dir, 'ca.crt'));
    const read = await readServingCertificates(dir);
    expect(read).toEqual({ certPem: bundle.certPem, keyPem: bundle.keyPem });
    expect('caCertPem' in read).toBe(false);
  });

  it('names the missing file(s)', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    await unlink(join(dir, 'tls.key'));
    await expect(readServingCertificates(dir)).rejects.toThrow(`missing tls.key in certificate directory ${dir}`);
    await unlink(join(dir, 'tls.crt'));
    await expect(readServingCertificates(dir)).rejects.toThrow('missing tls.crt and tls.key');
    await expect(readServingCertificates(join(root, 'does-not-exist'))).rejects.toThrow('missing tls.crt and tls.key');
  });

  it('refuses a key that does not belong to the certificate', async () => {
    const dir = freshDir();
    await writeCertificates(dir, { ...bundle, keyPem: bundle.caKeyPem });
    await expect(readServingCertificates(dir)).rejects.toThrow(`${join(dir, 'tls.key')} does not match the certificate in ${join(dir, 'tls.crt')}`);
  });

  it('refuses files that are not PEM', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    await writeFile(join(dir, 'ca.crt'), 'garbage');
    await expect(readServingCertificates(dir)).rejects.toThrow(/ca\.crt is not a valid PEM certificate/);
    await writeFile(join(dir, 'tls.key'), 'garbage');
    await expect(readServingCertificates(dir)).rejects.toThrow(/tls\.key is not a valid unencrypted PEM private key/);
    await writeFile(join(dir, 'tls.crt'), 'garbage');
    await expect(readServingCertificates(dir)).rejects.toThrow(/tls\.crt is not a valid PEM certificate/);
  });
});

describe('loadOrCreateCertificates', () => {
  it('creates a full set in an empty (or missing) directory, then reads it back', async () => {
    const dir = freshDir();
    const first = await loadOrCreateCertificates(dir, OPTS);
    expect(first.created).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(await modeOf(join(dir, 'tls.key'))).toBe(0o600);
    const leaf = new X509Certificate(first.certPem);
    expect(leaf.checkHost('webhook.ns.svc')).toBe('webhook.ns.svc');
    expect(leaf.verify(new X509Certificate(first.caCertPem!).publicKey)).toBe(true);

    const second = await loadOrCreateCertificates(dir, OPTS);
    expect(second).toEqual({ ...first, created: false });
  });

  it('reads existing files rather than generating', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    expect(await loadOrCreateCertificates(dir, OPTS)).toEqual({
      certPem: bundle.certPem,
      keyPem: bundle.keyPem,
      caCertPem: bundle.caCertPem,
      created: false,
    });
  });

  it.each([['tls.crt'], ['tls.key']])('refuses to overwrite half a pair when only %s exists', async (present) => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    const absent = present === 'tls.crt' ? 'tls.key' : 'tls.crt';
    await unlink(join(dir, absent));
    const before = await readFile(join(dir, present), 'utf8');
    await expect(loadOrCreateCertificates(dir, OPTS)).rejects.toThrow(`has ${present} but no ${absent}; refusing to overwrite half a pair`);
    expect(await readFile(join(dir, present), 'utf8')).toBe(before);
    expect((await readdir(dir)).includes(absent)).toBe(false);
  });

  it('signs a new serving certificate with the CA already on disk', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    await unlink(join(dir, 'tls.crt'));
    await unlink(join(dir, 'tls.key'));
    const created = await loadOrCreateCertificates(dir, OPTS);
    expect(created.created).toBe(true);
    expect(created.caCertPem).toBe(bundle.caCertPem);
    expect(created.certPem).not.toBe(bundle.certPem);
    expect(new X509Certificate(created.certPem).verify(new X509Certificate(bundle.caCertPem).publicKey)).toBe(true);
    expect(await readFile(join(dir, 'ca.key'), 'utf8')).toBe(bundle.caKeyPem);
  });

  it('refuses to replace a CA of which only one half exists', async () => {
    const dir = freshDir();
    await writeCertificates(dir, bundle);
    await unlink(join(dir, 'tls.crt'));
    await unlink(join(dir, 'tls.key'));
    await unlink(join(dir, 'ca.key'));
    await expect(loadOrCreateCertificates(dir, OPTS)).rejects.toThrow('has ca.crt but no ca.key');
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(bundle.caCertPem);
  });

  it('propagates a mismatched key in an existing pair', async () => {
    const dir = freshDir();
    await writeCertificates(dir, { ...bundle, keyPem: bundle.caKeyPem });
    await expect(loadOrCreateCertificates(dir, OPTS)).rejects.toThrow(/does not match the certificate/);
  });

  it('validates the options before writing anything', async () => {
    const dir = freshDir();
    await expect(loadOrCreateCertificates(dir, { serviceName: 'Bad', namespace: 'ns' })).rejects.toThrow(/invalid service name "Bad"/);
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('caBundleBase64', () => {
  it('is the base64 of the PEM text', () => {
    const encoded = caBundleBase64(bundle.caCertPem);
    expect(encoded).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(encoded, 'base64').toString('utf8')).toBe(bundle.caCertPem);
    expect(encoded.startsWith(Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64').slice(0, 36))).toBe(true);
  });

  it('refuses something that is not a PEM certificate', () => {
    expect(() => caBundleBase64('not a cert')).toThrow(/not a PEM certificate/);
  });
});
