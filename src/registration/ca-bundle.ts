/**
 * The caBundle a replica writes when its CA comes from a Secret the kubelet mounts
 * (cert-manager's Certificate, or the operator's PEMs) rather than one it keeps itself.
 *
 * A CA change there has no overlap of its own: cert-manager's CA issuer signs with the new
 * CA at once and writes `ca.crt` = that CA alone into the serving Certificate's Secret
 * (cert-manager keeps no trust history: cert-manager/cert-manager#2478, its CA issuer's
 * documentation points to trust-manager for it), and the kubelet brings the new files to
 * each pod at its own moment, up to its sync period plus its Secret cache's delay later
 * (about a minute each by default). A bundle of the new CA alone refuses the replicas still
 * serving the old certificate; one of the old CA alone, those serving the new. So a replica
 * writes its own CA and keeps, of what is stored, every unexpired CA that another replica
 * may still serve:
 *
 * - a CA newer than its own (a later `notBefore`): the others are ahead of it;
 * - any other CA while its own CA is younger than the overlap: the others may be behind.
 *
 * Once a replica has served its CA for the overlap, the older CAs leave. A bundle with CAs
 * kept beside its own is sorted newest first, one without is `ca.crt` as it is, so replicas
 * that agree write the same bytes and do not rewrite each other's.
 */
import { createHash, X509Certificate } from 'node:crypto';

/**
 * How long a replica keeps the CAs it does not serve (milliseconds): several times the
 * kubelet's default delay for a changed Secret (its 1 min sync period plus the 1 min of
 * its cache), so every replica serves the new CA before the old one leaves.
 */
export const CA_BUNDLE_OVERLAP_MS = 10 * 60_000;

export interface OverlapInputs {
  /** The PEM bundle the server uses now (`ca.crt`: one or more certificates). */
  own: string;
  /** The stored caBundles, decoded to PEM (one per webhook; any may be empty or not PEM). */
  stored: readonly string[];
  /** When `own` was first seen with its current content, in epoch milliseconds (the process start at the latest). */
  ownSinceMs: number;
  nowMs: number;
  overlapMs: number;
}

interface Ca {
  pem: string;
  fingerprint: string;
  notBeforeMs: number;
  notAfterMs: number;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text that parse; others are skipped. */
function certificates(pem: string): Ca[] {
  const found: Ca[] = [];
  for (const block of pem.match(PEM_BLOCK) ?? []) {
    try {
      const cert = new X509Certificate(block);
      found.push({ pem: cert.toString(), fingerprint: createHash('sha256').update(cert.raw).digest('hex'), notBeforeMs: Date.parse(cert.validFrom), notAfterMs: Date.parse(cert.validTo) });
    } catch {
      // Not a certificate: nothing the API server could verify with either.
    }
  }
  return found;
}

/**
 * The bundle to write (PEM), per the rules above: `own` as it is when no other CA is kept
 * (or none of it parses as a certificate: the server trusts nothing else either), else
 * every chosen certificate, newest first.
 */
export function overlappedBundle(inputs: OverlapInputs): string {
  const own = certificates(inputs.own);
  if (own.length === 0) return inputs.own;
  const newestOwn = Math.max(...own.map((c) => c.notBeforeMs));
  const young = inputs.nowMs - inputs.ownSinceMs < inputs.overlapMs;
  const chosen = new Map(own.map((c) => [c.fingerprint, c]));
  let kept = false;
  for (const ca of inputs.stored.flatMap(certificates)) {
    if (chosen.has(ca.fingerprint) || ca.notAfterMs <= inputs.nowMs) continue;
    if (young || ca.notBeforeMs > newestOwn) {
      chosen.set(ca.fingerprint, ca);
      kept = true;
    }
  }
  if (!kept) return inputs.own;
  return [...chosen.values()]
    .sort((a, b) => b.notBeforeMs - a.notBeforeMs || a.fingerprint.localeCompare(b.fingerprint))
    .map((c) => c.pem)
    .join('');
}
