/**
 * Certificates on disk in the layout of a Kubernetes TLS Secret (`tls.crt`, `tls.key`,
 * `ca.crt`), so a mounted Secret (e.g. from cert-manager) and a locally generated directory
 * are read the same way. The server reads them at start and again whenever they change
 * (reload.ts). `ca.key` is kept beside them so the CA can sign a new serving
 * certificate without invalidating the caBundle already registered with the apiserver.
 */
import { type KeyObject, X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { generateCertificates, type CertificateAuthority, type CertificateBundle, type CertificateOptions } from './generate.js';

/** File names inside a certificate directory. */
export const CERT_FILES = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt', caKey: 'ca.key' } as const;

/** PEM texts a TLS server needs; `caCertPem` only when `ca.crt` exists. */
export interface ServingCertificates {
  certPem: string;
  keyPem: string;
  caCertPem?: string;
}

/** `tls.crt` and/or `tls.key` are absent from a certificate directory. */
export class MissingCertificateError extends Error {
  constructor(
    readonly dir: string,
    readonly files: readonly string[],
  ) {
    super(`missing ${files.join(' and ')} in certificate directory ${dir}`);
  }
}

const KEY_MODE = 0o600;
const CERT_MODE = 0o644;

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** `undefined` when the file is absent; other errors (permissions, ...) propagate. */
async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * chmod before writing: `writeFile`'s mode applies only to new files, and an existing
 * world-readable file must not receive a private key.
 */
async function writeWithMode(path: string, data: string, mode: number): Promise<void> {
  const handle = await open(path, 'w', mode);
  try {
    await handle.chmod(mode);
    await handle.writeFile(data, 'utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Writes `bundle` into `dir` (created with parents if missing) as `ca.crt`, `ca.key`,
 * `tls.key`, `tls.crt`, overwriting existing files. Keys get mode 0600, certificates 0644.
 * `tls.crt` is written last so an interrupted write leaves a half pair, which
 * {@link loadOrCreateCertificates} refuses rather than silently replacing.
 *
 * @throws the filesystem error if the directory or a file cannot be written.
 */
export async function writeCertificates(dir: string, bundle: CertificateBundle): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeWithMode(join(dir, CERT_FILES.ca), bundle.caCertPem, CERT_MODE);
  await writeWithMode(join(dir, CERT_FILES.caKey), bundle.caKeyPem, KEY_MODE);
  await writeWithMode(join(dir, CERT_FILES.key), bundle.keyPem, KEY_MODE);
  await writeWithMode(join(dir, CERT_FILES.cert), bundle.certPem, CERT_MODE);
}

/**
 * Writes the served files into `dir` the way the kubelet updates a mounted Secret
 * (k8s.io/kubernetes pkg/volume/util/atomic_writer.go): into a new `..<time>-<random>`
 * directory, then one rename of the `..data` symlink to it, with `tls.crt`, `tls.key` and
 * `ca.crt` in `dir` as links through `..data`. A reader of `..data` (reload.ts) so never
 * sees a certificate of one version with the key of another. Earlier versions are removed.
 *
 * @throws the filesystem error if `dir` or a file cannot be written.
 */
export async function writeServingDirectory(dir: string, pems: Required<ServingCertificates>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const version = `..${Date.now()}-${randomBytes(4).toString('hex')}`;
  const target = join(dir, version);
  await mkdir(target, { mode: 0o755 });
  await writeWithMode(join(target, CERT_FILES.key), pems.keyPem, KEY_MODE);
  await writeWithMode(join(target, CERT_FILES.cert), pems.certPem, CERT_MODE);
  await writeWithMode(join(target, CERT_FILES.ca), pems.caCertPem, CERT_MODE);
  const link = join(dir, '..data_tmp');
  await rm(link, { force: true });
  await symlink(version, link);
  await rename(link, join(dir, '..data'));
  for (const file of [CERT_FILES.cert, CERT_FILES.key, CERT_FILES.ca]) {
    if (!(await exists(join(dir, file)))) await symlink(join('..data', file), join(dir, file));
  }
  const versions = (await readdir(dir)).filter((entry) => /^\.\.[0-9]+-[0-9a-f]+$/.test(entry) && entry !== basename(target));
  await Promise.all(versions.map((entry) => rm(join(dir, entry), { recursive: true, force: true })));
}

/**
 * Reads the serving pair `tls.crt` + `tls.key` (and `ca.crt` if present) from `dir`, and
 * checks they are usable before a server starts with them.
 *
 * `ca.crt` is only checked to be a certificate, not to have issued `tls.crt`: with an
 * intermediate CA, `ca.crt` is the root and `tls.crt` holds the chain.
 *
 * @throws MissingCertificateError naming the missing file(s) when `tls.crt` and/or `tls.key`
 *   are absent; Error when a
 *   file is not valid PEM, or when `tls.key` does not belong to `tls.crt`.
 */
export async function readServingCertificates(dir: string): Promise<ServingCertificates> {
  const certPath = join(dir, CERT_FILES.cert);
  const keyPath = join(dir, CERT_FILES.key);
  const caPath = join(dir, CERT_FILES.ca);
  const [certPem, keyPem, caCertPem] = await Promise.all([readIfPresent(certPath), readIfPresent(keyPath), readIfPresent(caPath)]);
  if (certPem === undefined || keyPem === undefined) {
    const missing = [certPem === undefined ? [CERT_FILES.cert] : [], keyPem === undefined ? [CERT_FILES.key] : []].flat();
    throw new MissingCertificateError(dir, missing);
  }

  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new Error(`${certPath} is not a valid PEM certificate: ${(err as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new Error(`${keyPath} is not a valid unencrypted PEM private key: ${(err as Error).message}`);
  }
  if (!cert.checkPrivateKey(key)) {
    throw new Error(`${keyPath} does not match the certificate in ${certPath} (${cert.subject})`);
  }
  if (caCertPem !== undefined) {
    try {
      new X509Certificate(caCertPem);
    } catch (err) {
      throw new Error(`${caPath} is not a valid PEM certificate: ${(err as Error).message}`);
    }
  }
  return caCertPem === undefined ? { certPem, keyPem } : { certPem, keyPem, caCertPem };
}

/**
 * Serving certificates for a local or first start: reads them from `dir`, or, when neither
 * `tls.crt` nor `tls.key` exists, generates them for `opts` and writes the whole bundle.
 * If `ca.crt` and `ca.key` are already there, the new serving certificate is signed by that
 * CA, so a caBundle registered earlier keeps working.
 *
 * Never overwrites half of something: it throws instead of generating when only one of
 * `tls.crt`/`tls.key` exists, or (when generating) only one of `ca.crt`/`ca.key`.
 *
 * @returns the PEM texts and `created: true` if they were generated by this call.
 * @throws Error on a half pair, on the errors of {@link readServingCertificates} and
 *   {@link generateCertificates}, or when files cannot be written.
 */
export async function loadOrCreateCertificates(dir: string, opts: CertificateOptions): Promise<ServingCertificates & { created: boolean }> {
  const [hasCert, hasKey] = await Promise.all([exists(join(dir, CERT_FILES.cert)), exists(join(dir, CERT_FILES.key))]);
  if (hasCert || hasKey) {
    if (!(hasCert && hasKey)) {
      const [present, absent] = hasCert ? [CERT_FILES.cert, CERT_FILES.key] : [CERT_FILES.key, CERT_FILES.cert];
      throw new Error(
        `certificate directory ${dir} has ${present} but no ${absent}; ` + `refusing to overwrite half a pair: restore ${absent} or remove ${present}`,
      );
    }
    return { ...(await readServingCertificates(dir)), created: false };
  }

  const ca = await readCertificateAuthority(dir);
  const bundle = await generateCertificates(opts, ca);
  await writeCertificates(dir, bundle);
  return { certPem: bundle.certPem, keyPem: bundle.keyPem, caCertPem: bundle.caCertPem, created: true };
}

/**
 * The CA kept in `dir` (`ca.crt` + `ca.key`), so a new serving certificate can be signed
 * without changing the caBundle the API server already trusts.
 *
 * @returns the CA, or `undefined` when neither file exists.
 * @throws Error when only one of the two exists (never replace half a CA silently).
 */
export async function readCertificateAuthority(dir: string): Promise<CertificateAuthority | undefined> {
  const [caCertPem, caKeyPem] = await Promise.all([readIfPresent(join(dir, CERT_FILES.ca)), readIfPresent(join(dir, CERT_FILES.caKey))]);
  if ((caCertPem === undefined) !== (caKeyPem === undefined)) {
    const [present, absent] = caCertPem !== undefined ? [CERT_FILES.ca, CERT_FILES.caKey] : [CERT_FILES.caKey, CERT_FILES.ca];
    throw new Error(
      `certificate directory ${dir} has ${present} but no ${absent}, so no serving certificate can be ` +
        `signed without replacing the CA: restore ${absent} or remove ${present}`,
    );
  }
  return caCertPem !== undefined && caKeyPem !== undefined ? { caCertPem, caKeyPem } : undefined;
}

/**
 * The value for `ValidatingWebhookConfiguration.webhooks[].clientConfig.caBundle`: base64 of
 * the PEM text itself (not of the DER), which is what the apiserver decodes.
 *
 * @throws Error if `caCertPem` contains no PEM certificate.
 */
export function caBundleBase64(caCertPem: string): string {
  if (!caCertPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error('caBundle input is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)');
  }
  return Buffer.from(caCertPem, 'utf8').toString('base64');
}
