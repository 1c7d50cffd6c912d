/**
 * What the webhook keeps in its TLS Secret (`serve --tls-secret`) and when it renews it: the
 * decision only, from the Secret's PEM texts and the time; reading and writing the Secret is
 * the caller's (src/cluster/tls-secret.ts).
 *
 * The Secret (created empty by the install, src/cluster/tls-secret.ts) holds these keys:
 *
 * | key           | content                                                                 |
 * |---------------|-------------------------------------------------------------------------|
 * | `tls.crt`     | the serving certificate, signed by the CA of `ca.key`                    |
 * | `tls.key`     | its private key                                                          |
 * | `ca.crt`      | every CA trusted now (the webhooks' `caBundle`), PEM blocks one after another |
 * | `ca.key`      | the private key of the CA in `ca.crt` that signs serving certificates    |
 * | `ca-next.key` | during a CA change only: the key of the next CA, already in `ca.crt`     |
 *
 * A CA change has an overlap, so that no API server ever holds a caBundle that misses the
 * CA of a certificate some replica serves (the order cert-manager's docs and kubeadm's CA
 * rotation use): with a third of the CA's validity left, a new CA is added to `ca.crt`
 * (old and new both trusted, the serving certificate still from the old); with a sixth
 * left, serving certificates are signed by the new CA; the old leaves `ca.crt` when it
 * expires. A serving certificate is renewed with a third of its validity left, by the same
 * CA, so the bundle does not change.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { generateCertificates, type CertificateAuthority, type CertificateOptions } from './generate.js';

/** Data keys of the Secret. */
const SECRET_KEYS = { cert: 'tls.crt', key: 'tls.key', caBundle: 'ca.crt', caKey: 'ca.key', nextCaKey: 'ca-next.key' } as const;

/** The Secret's content as PEM texts by data key (decoded from base64). */
export type SecretPems = Partial<Record<(typeof SECRET_KEYS)[keyof typeof SECRET_KEYS], string>>;

/** Lifetimes and names of what is issued. */
export interface RotationPolicy {
  serviceName: string;
  namespace: string;
  /** Validity of a serving certificate, in milliseconds. */
  certValidityMs: number;
  /** Validity of a CA, in milliseconds; at least twice `certValidityMs`. */
  caValidityMs: number;
}

/** The content to keep: `reason` says what changed and is absent when nothing did. */
export interface RotationPlan {
  pems: Required<Omit<SecretPems, 'ca-next.key'>> & Pick<SecretPems, 'ca-next.key'>;
  reason?: string;
}

/** The Secret holds something this webhook cannot use or continue from. */
export class SecretContentError extends Error {}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;

/**
 * Refuses lifetimes that would renew on every check: a serving certificate renewed with a
 * third of its validity left must not be capped by a CA about to be replaced (which happens
 * with a sixth of the CA's validity left).
 *
 * @throws Error naming both values when `certValidityMs` is more than half `caValidityMs`.
 */
export function assertRotationPolicy(policy: RotationPolicy): void {
  if (!(policy.certValidityMs * 2 <= policy.caValidityMs)) {
    throw new Error(
      `the serving certificate's validity (${policy.certValidityMs / 1000}s) must be at most half the CA's (${policy.caValidityMs / 1000}s): ` +
        'raise the CA validity or lower the certificate validity',
    );
  }
}

interface Ca {
  cert: X509Certificate;
  pem: string;
  keyPem: string;
}

function parseCertificates(bundlePem: string): { cert: X509Certificate; pem: string }[] {
  const blocks = bundlePem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new SecretContentError(`${SECRET_KEYS.caBundle} holds no PEM certificate`);
  return blocks.map((block) => {
    const pem = endLine(block);
    try {
      return { cert: new X509Certificate(pem), pem };
    } catch (err) {
      throw new SecretContentError(`${SECRET_KEYS.caBundle} holds a block that is not a certificate: ${(err as Error).message}`);
    }
  });
}

function parseKey(name: string, pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new SecretContentError(`${name} is not an unencrypted PEM private key: ${(err as Error).message}`);
  }
}

/** The certificate of `bundle` that `keyPem` belongs to. */
function caOf(bundle: { cert: X509Certificate; pem: string }[], keyName: string, keyPem: string): Ca {
  const key = parseKey(keyName, keyPem);
  const match = bundle.find(({ cert }) => cert.ca && cert.checkPrivateKey(key));
  if (match === undefined) throw new SecretContentError(`${keyName} belongs to no CA certificate in ${SECRET_KEYS.caBundle}`);
  return { ...match, keyPem };
}

const notAfterMs = (cert: X509Certificate) => new Date(cert.validTo).getTime();
/** PEM blocks are joined into `ca.crt`: each must end its last line. */
const endLine = (pem: string) => (pem.endsWith('\n') ? pem : `${pem}\n`);

function issueOptions(policy: RotationPolicy): CertificateOptions {
  return { serviceName: policy.serviceName, namespace: policy.namespace, validityMs: policy.certValidityMs, caValidityMs: policy.caValidityMs };
}

async function newCa(policy: RotationPolicy): Promise<Ca> {
  const bundle = await generateCertificates(issueOptions(policy));
  return { cert: new X509Certificate(bundle.caCertPem), pem: endLine(bundle.caCertPem), keyPem: bundle.caKeyPem };
}

async function issueLeaf(policy: RotationPolicy, ca: Ca): Promise<{ certPem: string; keyPem: string }> {
  const authority: CertificateAuthority = { caCertPem: ca.pem, caKeyPem: ca.keyPem };
  const { certPem, keyPem } = await generateCertificates(issueOptions(policy), authority);
  return { certPem, keyPem };
}

/** Why the serving pair must be replaced now, or `undefined` when it may stay. */
function leafProblem(pems: SecretPems, signing: Ca, policy: RotationPolicy, nowMs: number): string | undefined {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(pems['tls.crt'] ?? '');
    if (!leaf.checkPrivateKey(createPrivateKey(pems['tls.key'] ?? ''))) return `${SECRET_KEYS.key} does not belong to ${SECRET_KEYS.cert}`;
  } catch {
    return `${SECRET_KEYS.cert} or ${SECRET_KEYS.key} is missing or not PEM`;
  }
  if (!leaf.verify(signing.cert.publicKey)) return 'it was not signed by the current CA';
  const host = `${policy.serviceName}.${policy.namespace}.svc`;
  if (leaf.checkHost(host) === undefined) return `it does not name ${host}`;
  const left = notAfterMs(leaf) - nowMs;
  if (left <= policy.certValidityMs / 3) return left <= 0 ? `it expired on ${leaf.validTo}` : `it ends on ${leaf.validTo}, within a third of its validity`;
  return undefined;
}

/**
 * The Secret content to keep at `now`, from `current` (`undefined`: no Secret yet). Makes a
 * CA and a serving certificate when there is none, or when the signing CA has expired (no
 * overlap is possible then); otherwise takes the next step of a CA change that is due, and
 * renews the serving certificate when it is due, is not the current CA's or does not name
 * the Service. Generating takes a few hundred milliseconds per key.
 *
 * @throws SecretContentError when `current` lacks `ca.crt` or `ca.key`, or they do not fit
 *   together (a Secret this webhook did not write: it is never overwritten).
 */
export async function planRotation(current: SecretPems | undefined, policy: RotationPolicy, now: Date): Promise<RotationPlan> {
  const nowMs = now.getTime();
  const fresh = async (reason: string): Promise<RotationPlan> => {
    const ca = await newCa(policy);
    const leaf = await issueLeaf(policy, ca);
    return { pems: { 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem, 'ca.crt': ca.pem, 'ca.key': ca.keyPem }, reason };
  };
  if (current === undefined) return fresh('created a CA and a serving certificate');
  const bundlePem = current['ca.crt'];
  const keyPem = current['ca.key'];
  if (bundlePem === undefined || keyPem === undefined) {
    const absent = [bundlePem === undefined ? SECRET_KEYS.caBundle : [], keyPem === undefined ? SECRET_KEYS.caKey : []].flat().join(' and ');
    throw new SecretContentError(`it has no ${absent}, so it was not written by this webhook`);
  }
  const bundle = parseCertificates(bundlePem);
  let signing = caOf(bundle, SECRET_KEYS.caKey, keyPem);
  let next = current['ca-next.key'] === undefined ? undefined : caOf(bundle, SECRET_KEYS.nextCaKey, current['ca-next.key']);
  if (notAfterMs(signing.cert) <= nowMs) return fresh(`the CA expired on ${signing.cert.validTo}: created a new CA and serving certificate`);

  const reasons: string[] = [];
  let trusted = bundle.filter(({ cert }) => notAfterMs(cert) > nowMs);
  if (trusted.length < bundle.length) reasons.push('removed expired CAs from the bundle');
  const caLeftMs = notAfterMs(signing.cert) - nowMs;
  if (next !== undefined && caLeftMs <= policy.caValidityMs / 6) {
    signing = next;
    next = undefined;
    trusted = [signing, ...trusted.filter(({ pem }) => pem !== signing.pem)];
    reasons.push('signed by the new CA from now on (the old one stays trusted until it expires)');
  } else if (next === undefined && caLeftMs <= policy.caValidityMs / 3) {
    next = await newCa(policy);
    trusted = [...trusted, next];
    reasons.push(`added a new CA to the bundle (the current one ends on ${signing.cert.validTo})`);
  }
  let leaf = { certPem: current['tls.crt'] ?? '', keyPem: current['tls.key'] ?? '' };
  const problem = leafProblem(current, signing, policy, nowMs);
  if (problem !== undefined) {
    leaf = await issueLeaf(policy, signing);
    reasons.push(`renewed the serving certificate (${problem})`);
  }
  const pems: RotationPlan['pems'] = {
    'tls.crt': leaf.certPem,
    'tls.key': leaf.keyPem,
    // Unchanged text when the CAs are: a rewrite would look like a new bundle to every reader.
    'ca.crt': trusted.length === bundle.length && trusted.every(({ pem }, i) => pem === bundle[i]!.pem) ? bundlePem : trusted.map(({ pem }) => pem).join(''),
    'ca.key': signing.keyPem,
    ...(next === undefined ? {} : { 'ca-next.key': next.keyPem }),
  };
  return reasons.length === 0 ? { pems } : { pems, reason: reasons.join('; ') };
}
