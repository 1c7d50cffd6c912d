/**
 * Serving-certificate hot reload. A mounted Secret is updated by the kubelet with an atomic
 * swap of the `..data` symlink in the mount directory (k8s.io/kubernetes
 * pkg/volume/util/atomic_writer.go), so the directory is watched rather than the files, and
 * re-checked on a timer as well: inotify on a symlink swap is not reliable on every
 * filesystem (controller-runtime's certwatcher polls beside fsnotify for the same reason).
 */
import { X509Certificate } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readServingCertificates, type ServingCertificates } from './files.js';

/** The PEM texts a TLS context is built from. */
export interface TlsMaterial extends ServingCertificates {
  /** CA bundle client certificates are verified against (`--client-ca-file`), if any. */
  clientCaPem?: string;
}

/** What is known about the certificate being served. */
export interface ServedCertificate {
  material: TlsMaterial;
  /** Hex serial number, as `X509Certificate.serialNumber`. */
  serialNumber: string;
  validFrom: Date;
  validTo: Date;
}

export interface CertificateSource {
  /** Directory with `tls.crt` and `tls.key` (a mounted Secret). */
  certDir: string;
  /** PEM file of CAs for client certificates; absent when they are not verified. */
  clientCaFile?: string;
}

/** Events by watch, debounced: a Secret update renames several entries at once. */
const DEBOUNCE_MS = 100;
/**
 * Wait before the one re-read of files that could not be read: the kubelet removes the old
 * timestamped directory right after swapping `..data`, so a read that resolved the old one
 * just before the swap finds it gone. Reading again after the swap is not a failure.
 */
const REREAD_DELAY_MS = 100;

/**
 * The directory to read the pair from: the target of `certDir/..data` when `certDir` is a
 * mounted Secret, so `tls.crt` and `tls.key` come from the same version even if `..data` is
 * swapped between the two reads (reading `certDir/tls.crt` and `certDir/tls.key` could mix an
 * old certificate with a new key); `certDir` itself for a plain directory.
 *
 * @throws Error when `..data` exists but cannot be resolved for another reason than absence.
 */
async function resolvedCertDir(certDir: string): Promise<string> {
  try {
    return await realpath(join(certDir, '..data'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return certDir;
    throw new Error(`cannot resolve ${join(certDir, '..data')}: ${(err as Error).message}`);
  }
}

/**
 * Reads the serving pair (and the client CA) and describes the certificate. In a mounted
 * Secret the pair is read from the one version `..data` points at (see `resolvedCertDir`).
 *
 * @throws Error as {@link readServingCertificates} does, or when the client CA file cannot
 *   be read or holds no certificate.
 */
export async function readTlsMaterial(source: CertificateSource): Promise<ServedCertificate> {
  const pair = await readServingCertificates(await resolvedCertDir(source.certDir));
  let material: TlsMaterial = pair;
  if (source.clientCaFile !== undefined) {
    let clientCaPem: string;
    try {
      clientCaPem = await readFile(source.clientCaFile, 'utf8');
      new X509Certificate(clientCaPem);
    } catch (err) {
      throw new Error(`client CA file ${source.clientCaFile} is not a readable PEM certificate: ${(err as Error).message}`);
    }
    material = { ...pair, clientCaPem };
  }
  const cert = new X509Certificate(pair.certPem);
  return { material, serialNumber: cert.serialNumber, validFrom: new Date(cert.validFrom), validTo: new Date(cert.validTo) };
}

/**
 * Why `cert` should not be served at `now`, or `undefined` when it may be. Used both to
 * refuse a new pair and for the `/readyz` check of the pair in use.
 */
export function certificateValidityProblem(cert: ServedCertificate, now: Date): string | undefined {
  if (now >= cert.validTo) return `the serving certificate expired at ${cert.validTo.toISOString()}`;
  if (now < cert.validFrom) return `the serving certificate is not valid before ${cert.validFrom.toISOString()}`;
  return undefined;
}

/**
 * Identifies the content of the files, to tell a change from a re-read of the same bytes.
 * `ca.crt` counts: a CA added to it (the start of a CA change) must reach `onReloaded`,
 * which keeps the webhooks' caBundle equal to it, although the pair served is the same.
 */
const contentKey = (m: TlsMaterial) => [m.certPem, m.keyPem, m.caCertPem ?? '', m.clientCaPem ?? ''].join('\0');

export interface ReloaderOptions extends CertificateSource {
  /** The pair served now (read at start). */
  initial: ServedCertificate;
  /** How often to re-read the files even without a watch event, in milliseconds. */
  intervalMs: number;
  /** Puts a new, verified pair into service (e.g. `server.setSecureContext`). May throw. */
  apply(cert: ServedCertificate): void;
  onReloaded(cert: ServedCertificate): void;
  /**
   * Called once per distinct unusable content of the files (the old pair stays in use), and
   * when `onReloaded` throws.
   */
  onFailure(err: Error): void;
}

export interface CertificateReloader {
  /** The certificate in use. */
  current(): ServedCertificate;
  /** Stops watching and polling. */
  close(): void;
}

/**
 * Watches `certDir` (and the client CA's directory) and re-reads on every change and every
 * `intervalMs`. A new pair is applied only when it parses, the key matches the certificate
 * and it is valid now; otherwise the pair in use is kept and `onFailure` reports why (once
 * for each bad content, not on every poll). Content refused is still checked on every poll:
 * a certificate whose notBefore is a moment ahead (cert-manager issues with notBefore = now,
 * so clock skew between nodes is enough) is applied as soon as it becomes valid. Unreadable
 * files are re-read once after a short delay before that counts as a failure (the `..data`
 * swap race, see `REREAD_DELAY_MS`).
 */
export function watchCertificates(options: ReloaderOptions): CertificateReloader {
  let current = options.initial;
  /** What the last failure was about (file content, or the read error), so it is reported once. */
  let lastFailureKey: string | undefined;
  let running: Promise<void> = Promise.resolve();
  let debounce: NodeJS.Timeout | undefined;

  const fail = (key: string, err: Error) => {
    const repeated = key === lastFailureKey;
    lastFailureKey = key;
    if (!repeated) options.onFailure(err);
  };
  const read = async (): Promise<ServedCertificate> => {
    try {
      return await readTlsMaterial(options);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, REREAD_DELAY_MS));
      return readTlsMaterial(options);
    }
  };
  const reload = async (): Promise<void> => {
    let next: ServedCertificate;
    try {
      next = await read();
    } catch (err) {
      return fail(`read error: ${(err as Error).message}`, err as Error);
    }
    const key = contentKey(next.material);
    if (key === contentKey(current.material)) {
      lastFailureKey = undefined;
      return;
    }
    // No shortcut for content that failed before: its validity depends on the time.
    const problem = certificateValidityProblem(next, new Date());
    try {
      if (problem !== undefined) throw new Error(`refusing the new certificate in ${options.certDir}: ${problem}`);
      options.apply(next);
    } catch (err) {
      return fail(key, err as Error);
    }
    current = next;
    lastFailureKey = undefined;
    options.onReloaded(next);
  };
  /** A throwing callback must not leave `running` rejected: every later check would fail. */
  const reloadReportingErrors = () =>
    reload().catch((err: unknown) => {
      try {
        options.onFailure(new Error(`certificate reload callback failed: ${(err as Error).message}`));
      } catch {
        // onFailure itself threw: nothing left to report to; the next check runs regardless.
      }
    });
  // One re-read at a time, in order: a slow read must not apply after a newer one.
  const check = (): Promise<void> => (running = running.then(reloadReportingErrors));
  const schedule = () => {
    debounce ??= setTimeout(() => {
      debounce = undefined;
      void check();
    }, DEBOUNCE_MS);
  };

  const dirs = new Set([options.certDir, ...(options.clientCaFile === undefined ? [] : [dirname(options.clientCaFile)])]);
  const watchers: FSWatcher[] = [];
  for (const dir of dirs) {
    try {
      // An error later (the directory removed) leaves the timer to notice changes.
      watchers.push(watch(dir, { persistent: false }, schedule).on('error', () => undefined));
    } catch {
      // No inotify (exhausted watches, some filesystems): polling alone still reloads.
    }
  }
  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();

  return {
    current: () => current,
    close() {
      clearInterval(timer);
      clearTimeout(debounce);
      for (const w of watchers) w.close();
    },
  };
}
