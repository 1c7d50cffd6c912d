/**
 * `certs`: a serving certificate signed by the CA in `--out` (kept, so the caBundle stays
 * the same during a rollout; created when absent or with `--new-ca`), and the base64
 * caBundle on stdout.
 */
import { X509Certificate } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { caBundleBase64, readCertificateAuthority, writeCertificates } from '../certs/files.js';
import { generateCertificates } from '../certs/generate.js';
import { UsageError } from './cluster-state.js';

/** `certs`'s options as the command line parses them. */
export interface CertsArguments {
  service: string;
  namespace: string;
  out: string;
  newCa?: boolean;
  dnsName: string[];
  ip: string[];
  days: number;
}

/**
 * Writes the files and prints the caBundle.
 *
 * @throws UsageError when `--out` is a file, or lies under one (one line, not `ENOTDIR`).
 */
export async function writeCerts(opts: CertsArguments): Promise<void> {
  await checkOutFolder(opts.out);
  // Keeping the CA keeps the caBundle: old and new pods are trusted alike during a rollout.
  const ca = opts.newCa ? undefined : await readCertificateAuthority(opts.out);
  const bundle = await generateCertificates(
    {
      serviceName: opts.service,
      namespace: opts.namespace,
      extraDnsNames: opts.dnsName,
      extraIpAddresses: opts.ip,
      validityDays: opts.days,
    },
    ca,
  );
  await writeCertificates(opts.out, bundle);
  const what = ca
    ? `a new serving certificate (tls.crt, tls.key) to ${opts.out}, signed by the CA already there`
    : `a new CA (ca.crt, ca.key) and serving certificate (tls.crt, tls.key) to ${opts.out}`;
  process.stderr.write(`wrote ${what}; caBundle:\n`);
  const servingEnds = new Date(new X509Certificate(bundle.certPem).validTo);
  if (servingEnds.getTime() < Date.now() + (opts.days - 1) * 24 * 60 * 60 * 1000) {
    process.stderr.write(
      `warning: the serving certificate ends with the CA on ${servingEnds.toISOString()}, before --days; replace the CA with --new-ca before then\n`,
    );
  }
  process.stdout.write(`${caBundleBase64(bundle.caCertPem)}\n`);
}

/** `--out` must be a folder, or a path where one can be made. */
async function checkOutFolder(out: string): Promise<void> {
  const found = await stat(out).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    if (e.code === 'ENOTDIR') throw new UsageError(`--out ${out}: a part of the path is a file, not a folder; give a folder (it is created when absent)`);
    throw e;
  });
  if (found !== undefined && !found.isDirectory())
    throw new UsageError(`--out ${out}: is a file, not a folder; give a folder for tls.crt, tls.key, ca.crt and ca.key (it is created when absent)`);
}
