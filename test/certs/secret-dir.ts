/**
 * Test helpers: certificates signed by a test CA, written the way the kubelet writes a
 * mounted Secret (k8s.io/kubernetes pkg/volume/util/atomic_writer.go): the files live in a
 * timestamped directory, `..data` is a symlink to it, each name (`tls.crt`) is a symlink
 * into `..data`, and an update swaps `..data` with one rename.
 */
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { generateCertificates, type CertificateAuthority, type CertificateBundle } from '../../src/certs/generate.js';

let generation = 0;

/**
 * Replaces the content of `dir` atomically with `files` (name → text), as a Secret
 * update does; creates the layout on first use.
 */
export async function writeSecretDir(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const version = `..${Date.now()}_${process.pid}_${generation++}`;
  await mkdir(join(dir, version));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, version, name), text);
  let previous: string | undefined;
  try {
    previous = await readlink(join(dir, '..data'));
  } catch {
    previous = undefined;
  }
  await symlink(version, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const name of Object.keys(files)) {
    await symlink(join('..data', name), join(dir, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
  }
  if (previous !== undefined) await rm(join(dir, previous), { recursive: true, force: true });
}

/** A serving certificate for `localhost`/127.0.0.1, signed by `ca` (a new CA when absent). */
export function servingCertificate(ca?: CertificateAuthority): Promise<CertificateBundle> {
  return generateCertificates({ serviceName: 'webhook', namespace: 'test', extraDnsNames: ['localhost'], extraIpAddresses: ['127.0.0.1'] }, ca);
}

/** The Secret files for `bundle`. */
export const secretFiles = (bundle: CertificateBundle) => ({ 'tls.crt': bundle.certPem, 'tls.key': bundle.keyPem, 'ca.crt': bundle.caCertPem });

/**
 * A certificate signed by `ca`, valid only between the two dates: for an expired serving
 * certificate, or (with `clientAuth`) a client certificate like the API server's.
 */
export async function certificateSignedBy(
  ca: CertificateAuthority,
  opts: { commonName: string; notBefore: Date; notAfter: Date; clientAuth?: boolean },
): Promise<{ certPem: string; keyPem: string }> {
  const pems = await generate([{ name: 'commonName', value: opts.commonName }], {
    notBeforeDate: opts.notBefore,
    notAfterDate: opts.notAfter,
    keySize: 2048,
    algorithm: 'sha256',
    ca: { cert: ca.caCertPem, key: ca.caKeyPem },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      opts.clientAuth ? { name: 'extKeyUsage', clientAuth: true } : { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { certPem: pems.cert, keyPem: pems.private };
}
