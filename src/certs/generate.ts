/**
 * Self-signed CA + serving certificate for the webhook's HTTPS endpoint.
 *
 * kube-apiserver calls the webhook through its Service, so the serving certificate must
 * name the Service's DNS forms, and the apiserver must be given the CA (the caBundle of the
 * ValidatingWebhookConfiguration) to trust it.
 */
import { type KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';

/** PEM texts of a CA and of the serving certificate it signed. */
export interface CertificateBundle {
  caCertPem: string;
  caKeyPem: string;
  certPem: string;
  keyPem: string;
}

/** An existing CA to sign with, as PEM texts (e.g. `ca.crt` / `ca.key` kept on disk). */
export interface CertificateAuthority {
  caCertPem: string;
  caKeyPem: string;
}

export interface CertificateOptions {
  /** Kubernetes Service name (DNS-1123 label). */
  serviceName: string;
  /** Namespace of the Service (DNS-1123 label). */
  namespace: string;
  /** More DNS SANs, e.g. `localhost` for a local `npm start`. */
  extraDnsNames?: string[];
  /** IP SANs (IPv4 or IPv6), e.g. `127.0.0.1`. */
  extraIpAddresses?: string[];
  /** Validity of the certificates in days from now; default 365. */
  validityDays?: number;
  /** Validity of the serving certificate in milliseconds from now, instead of `validityDays` (e.g. minutes, to test renewal). */
  validityMs?: number;
  /** Validity of a new CA in milliseconds from now; default ten years, or the serving certificate's if longer. */
  caValidityMs?: number;
}

const DEFAULT_VALIDITY_DAYS = 365;
/**
 * A new CA lasts ten years (kubeadm's choice for cluster CAs) or as long as the leaf if that
 * is longer, so that renewing the serving certificate for years keeps the same caBundle.
 */
const CA_VALIDITY_DAYS = 3650;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Backdate notBefore so an apiserver whose clock is slightly behind accepts a fresh cert. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
const KEY_SIZE = 2048;
/** selfsigned defaults to SHA-1, which Go's crypto/x509 (kube-apiserver) refuses to verify. */
const SIGNATURE_ALGORITHM = 'sha256';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Hostname with an optional leading wildcard label; case-insensitive as DNS is. */
const DNS_NAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/i;

function assertDns1123Label(what: string, value: string): void {
  if (typeof value !== 'string' || value.length > 63 || !DNS1123_LABEL.test(value)) {
    throw new Error(
      `invalid ${what} ${JSON.stringify(value)}: must be a DNS-1123 label ` +
        '(lowercase a-z, 0-9 and "-", starting and ending alphanumeric, at most 63 characters)',
    );
  }
}

/**
 * The four names a Service is reachable by inside the cluster, shortest first:
 * `[svc, svc.ns, svc.ns.svc, svc.ns.svc.cluster.local]`. kube-apiserver dials
 * `svc.ns.svc`; the others cover clients using search domains or the full name.
 *
 * @throws Error if `serviceName` or `namespace` is not a DNS-1123 label.
 */
export function serviceDnsNames(serviceName: string, namespace: string): string[] {
  assertDns1123Label('service name', serviceName);
  assertDns1123Label('namespace', namespace);
  const base = `${serviceName}.${namespace}`;
  return [serviceName, base, `${base}.svc`, `${base}.svc.cluster.local`];
}

/** RFC 5280 §4.1.2.5: GeneralizedTime ends at 9999-12-31T23:59:59Z; later dates cannot be written. */
const LAST_X509_TIME = Date.UTC(9999, 11, 31, 23, 59, 59);

/** Shortest validity in milliseconds: less could expire before a server has read it. */
const MIN_VALIDITY_MS = 1000;

function validityMsOf(name: 'validityMs' | 'caValidityMs', value: number): number {
  if (!Number.isSafeInteger(value) || value < MIN_VALIDITY_MS) {
    throw new Error(`invalid ${name} ${JSON.stringify(value)}: must be a whole number of milliseconds, at least ${MIN_VALIDITY_MS}`);
  }
  return value;
}

/** The serving certificate's validity in milliseconds, and how to name it in an error. */
function leafValidityOf(opts: CertificateOptions): { ms: number; described: string } {
  if (opts.validityMs !== undefined) return { ms: validityMsOf('validityMs', opts.validityMs), described: `validityMs ${opts.validityMs}` };
  const days = opts.validityDays ?? DEFAULT_VALIDITY_DAYS;
  if (!Number.isInteger(days) || days < 1) {
    throw new Error(`invalid validityDays ${JSON.stringify(days)}: must be a positive whole number of days`);
  }
  return { ms: days * DAY_MS, described: `validityDays ${days}` };
}

function subjectAltNames(opts: CertificateOptions): { type: 2 | 7; value?: string; ip?: string }[] {
  const dns = serviceDnsNames(opts.serviceName, opts.namespace);
  for (const name of opts.extraDnsNames ?? []) {
    if (typeof name !== 'string' || name.length > 253 || !DNS_NAME.test(name)) {
      throw new Error(`invalid extra DNS name ${JSON.stringify(name)}: must be a DNS hostname`);
    }
    if (!dns.includes(name)) dns.push(name);
  }
  const ips: string[] = [];
  for (const ip of opts.extraIpAddresses ?? []) {
    if (typeof ip !== 'string' || isIP(ip) === 0) {
      throw new Error(`invalid extra IP address ${JSON.stringify(ip)}: must be an IPv4 or IPv6 address`);
    }
    if (!ips.includes(ip)) ips.push(ip);
  }
  return [...dns.map((value) => ({ type: 2 as const, value })), ...ips.map((ip) => ({ type: 7 as const, ip }))];
}

/**
 * Refuse a CA that could only produce certificates nobody trusts.
 * @returns the CA's notAfter, which caps the leaf's: a leaf outliving its CA fails to verify.
 */
function assertUsableCa(ca: CertificateAuthority): Date {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(ca.caCertPem);
  } catch (err) {
    throw new Error(`CA certificate is not a valid PEM certificate: ${(err as Error).message}`);
  }
  if (!cert.ca) throw new Error(`CA certificate (${cert.subject}) is not a CA (basicConstraints CA:false)`);
  let key: KeyObject;
  try {
    key = createPrivateKey(ca.caKeyPem);
  } catch (err) {
    throw new Error(`CA private key is not a valid unencrypted PEM key: ${(err as Error).message}`);
  }
  // selfsigned imports the CA key with the leaf's key type, which is always RSA here.
  if (key.asymmetricKeyType !== 'rsa') {
    throw new Error(`CA private key is ${key.asymmetricKeyType ?? 'of an unknown type'}, only RSA is supported`);
  }
  if (!cert.checkPrivateKey(key)) throw new Error('CA private key does not match the CA certificate');
  const notAfter = new Date(cert.validTo);
  if (notAfter.getTime() <= Date.now()) throw new Error(`CA certificate expired on ${cert.validTo}`);
  return notAfter;
}

/**
 * Creates an RSA-2048, SHA-256 serving certificate for the webhook Service, signed by a new
 * self-signed CA (CN `<serviceName>-ca`), or by `ca` when given so an already-registered
 * caBundle stays valid.
 *
 * The leaf has CN `<svc>.<ns>.svc`, SANs = {@link serviceDnsNames} + `extraDnsNames` (DNS) +
 * `extraIpAddresses` (IP), extKeyUsage serverAuth and CA:false. The leaf is valid from a
 * few minutes ago (clock skew) until `validityMs` (else `validityDays` days) from now, but no
 * later than its CA; a new CA is valid for `caValidityMs`, by default ten years or the
 * leaf's validity if longer.
 *
 * Takes a few hundred milliseconds: RSA key generation.
 *
 * @returns PEM texts; `caCertPem`/`caKeyPem` are `ca`'s own when `ca` is given.
 * @throws Error if the service name or namespace is not a DNS-1123 label, an extra name or
 *   address is malformed, `validityDays` is not a positive integer, `validityMs` or
 *   `caValidityMs` is not a whole number of milliseconds of at least one second, or `ca` is unusable
 *   (not a CA, expired, not RSA, or its key does not match).
 */
export async function generateCertificates(opts: CertificateOptions, ca?: CertificateAuthority): Promise<CertificateBundle> {
  // Loaded on first use: selfsigned and its X.509 stack cost a server that only reads its
  // certificates ~80 ms of start and ~15 MiB of RSS (measured with bench/).
  const { generate } = await import('selfsigned');
  const altNames = subjectAltNames(opts);
  const leafValidity = leafValidityOf(opts);
  const caValidityMs = opts.caValidityMs === undefined ? Math.max(leafValidity.ms, CA_VALIDITY_DAYS * DAY_MS) : validityMsOf('caValidityMs', opts.caValidityMs);
  const now = Date.now();
  const validity = { notBeforeDate: new Date(now - CLOCK_SKEW_MS), notAfterDate: new Date(now + leafValidity.ms) };
  if (!(validity.notAfterDate.getTime() <= LAST_X509_TIME)) {
    throw new Error(`invalid ${leafValidity.described}: the certificate would end after 9999-12-31, the last date X.509 can encode`);
  }

  let authority: CertificateAuthority;
  if (ca) {
    const caNotAfter = assertUsableCa(ca);
    if (caNotAfter < validity.notAfterDate) validity.notAfterDate = caNotAfter;
    authority = ca;
  } else {
    const caNotAfter = new Date(Math.min(now + caValidityMs, LAST_X509_TIME));
    if (caNotAfter < validity.notAfterDate) validity.notAfterDate = caNotAfter;
    const generated = await generate([{ name: 'commonName', value: `${opts.serviceName}-ca` }], {
      notBeforeDate: validity.notBeforeDate,
      notAfterDate: caNotAfter,
      keySize: KEY_SIZE,
      algorithm: SIGNATURE_ALGORITHM,
      // Passing extensions replaces selfsigned's defaults (which describe a leaf) entirely.
      extensions: [
        { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    });
    authority = { caCertPem: generated.cert, caKeyPem: generated.private };
  }

  const leaf = await generate([{ name: 'commonName', value: `${opts.serviceName}.${opts.namespace}.svc` }], {
    ...validity,
    keySize: KEY_SIZE,
    algorithm: SIGNATURE_ALGORITHM,
    ca: { cert: authority.caCertPem, key: authority.caKeyPem },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });

  return { ...authority, certPem: leaf.cert, keyPem: leaf.private };
}
