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
 * serving the old certificate; one of the old CA alone, those serving the new.
 *
 * So a replica writes its own CA and keeps, of what is stored, every unexpired CA another
 * replica may still serve during a change: each CA it does not serve is kept for the overlap
 * from the moment this process saw it so (in the stored caBundle, or when it stopped serving
 * it itself), whoever put it there and whatever its `notBefore`. A CA's age says nothing
 * about when a change reached the cluster: a CA re-issued by cert-manager signs serving
 * certificates only from their next renewal, a provided CA may have been made months before
 * the `helm upgrade` that brings it, and `helm rollback` brings back an older one.
 *
 * - A CA absent from every stored caBundle for `forgetAfterMs` is forgotten: when it comes
 *   back (a rollback to it) it is a new change and gets a new overlap. While two replicas
 *   disagree, a CA is absent only between one's write and the other's, so a CA one of them
 *   keeps writing back does not get a new overlap from the other.
 * - A replica whose own CA has been left out of the stored caBundle, beside a CA newer than
 *   its own (a later `notBefore`, or the same second and a smaller fingerprint) whose overlap
 *   has passed, is behind and writes nothing: another replica has served the newer CA for
 *   longer than the overlap. Which of the two mounts is stale it cannot tell: its kubelet may
 *   not have brought it the new certificate, or, after a `helm rollback` to an older CA, the
 *   other replica's kubelet may not have brought it the one rolled back to. The newest CA
 *   wins, so two replicas that disagree past the overlap stop rewriting each other's bundle
 *   once the one behind has seen the newer CA for the overlap. The API server cannot call a
 *   replica behind, so it is not Ready while it is (manage.ts), until its CA is stored again
 *   or it serves another one.
 * - The memory is the process's own: a restarted pod keeps every stored CA for one overlap
 *   from its start, as a replica that may have missed a change must.
 *
 * A bundle with CAs kept beside its own is sorted newest first, one without is `ca.crt` as
 * it is, so replicas that agree write the same bytes and do not rewrite each other's.
 */
import { createHash, X509Certificate } from 'node:crypto';

/**
 * How long a replica keeps the CAs it does not serve (milliseconds): several times the
 * kubelet's default delay for a changed Secret (its 1 min sync period plus the 1 min of
 * its cache), so every replica serves the new CA before the old one leaves.
 */
export const CA_BUNDLE_OVERLAP_MS = 10 * 60_000;

/**
 * What one process remembers between rounds: per SHA-256 fingerprint (hex) of a stored CA it
 * does not serve, since when it saw it so and when it last saw it stored (epoch ms).
 */
export type CaMemory = ReadonlyMap<string, { readonly sinceMs: number; readonly lastSeenMs: number }>;

/** A process that has not seen any CA yet. */
export const NO_CA_MEMORY: CaMemory = new Map();

export interface OverlapInputs {
  /** The PEM bundle the server uses now (`ca.crt`: one or more certificates). */
  own: string;
  /** The stored caBundles, decoded to PEM (one per webhook; any may be empty or not PEM). */
  stored: readonly string[];
  /** What the previous rounds saw ({@link NO_CA_MEMORY} at the first). */
  memory: CaMemory;
  nowMs: number;
  /** How long a CA this process does not serve is kept, in milliseconds. */
  overlapMs: number;
  /** How long a CA must be absent from every stored caBundle to be forgotten, in milliseconds. */
  forgetAfterMs: number;
}

/** `bundle` (PEM) to write, or `behind`: why this replica writes nothing (one line). */
export type OverlapResult = { memory: CaMemory } & ({ bundle: string; behind?: undefined } | { behind: string; bundle?: undefined });

interface Ca {
  readonly pem: string;
  readonly fingerprint: string;
  readonly subject: string;
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The last PEM blocks parsed (block text -> its certificate, or `null` when it is none), so
 * a round does not parse again the CAs it parsed in the previous rounds: the stored ones and
 * its own change rarely, a round comes every 10 s. At most {@link PARSED_LIMIT} entries,
 * the oldest dropped first, so a caBundle filled with many certificates cannot grow it.
 */
const parsed = new Map<string, Ca | null>();
const PARSED_LIMIT = 64;

function parse(block: string): Ca | null {
  try {
    const cert = new X509Certificate(block);
    return {
      pem: cert.toString(),
      fingerprint: createHash('sha256').update(cert.raw).digest('hex'),
      subject: cert.subject.replace(/\n/g, ', ').slice(0, 80),
      notBeforeMs: Date.parse(cert.validFrom),
      notAfterMs: Date.parse(cert.validTo),
    };
  } catch {
    // Not a certificate: nothing the API server could verify with either.
    return null;
  }
}

/** The certificates of a PEM text that parse; others are skipped. */
function certificates(pem: string): Ca[] {
  const found: Ca[] = [];
  for (const block of pem.match(PEM_BLOCK) ?? []) {
    let ca = parsed.get(block);
    if (ca === undefined) {
      ca = parse(block);
      if (parsed.size >= PARSED_LIMIT) parsed.delete(parsed.keys().next().value!);
      parsed.set(block, ca);
    }
    if (ca !== null) found.push(ca);
  }
  return found;
}

/**
 * The bundle's order, and what "newer" means between two CAs: the later `notBefore` first,
 * then the smaller fingerprint. `notBefore` has whole seconds, so two CAs made in one second
 * (a current and a next CA from one script) still have an order every replica agrees on.
 */
function newestFirst(a: Ca, b: Ca): number {
  return b.notBeforeMs - a.notBeforeMs || (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0);
}

/**
 * One round, per the rules above: the bundle to write (`own` as it is when no other CA is
 * kept, or none of it parses as a certificate: the server trusts nothing else either; else
 * every chosen certificate, newest first) or why this replica is behind, and the memory for
 * the next round. Pure: the caller keeps the memory.
 */
export function overlappedBundle(inputs: OverlapInputs): OverlapResult {
  const { nowMs, memory } = inputs;
  const own = [...new Map(certificates(inputs.own).map((c) => [c.fingerprint, c])).values()];
  if (own.length === 0) return { memory, bundle: inputs.own };
  const ownFingerprints = new Set(own.map((c) => c.fingerprint));
  const stored = new Map(inputs.stored.flatMap(certificates).map((c) => [c.fingerprint, c]));

  // A CA served until the last round has no entry yet: its overlap starts as it stops being served.
  const next = new Map<string, { sinceMs: number; lastSeenMs: number }>();
  for (const [fingerprint, seen] of memory) {
    if (!ownFingerprints.has(fingerprint) && nowMs - seen.lastSeenMs < inputs.forgetAfterMs) next.set(fingerprint, seen);
  }
  for (const fingerprint of stored.keys()) {
    if (!ownFingerprints.has(fingerprint)) next.set(fingerprint, { sinceMs: next.get(fingerprint)?.sinceMs ?? nowMs, lastSeenMs: nowMs });
  }

  const live = [...stored.values()].filter((ca) => !ownFingerprints.has(ca.fingerprint) && ca.notAfterMs > nowMs);
  const kept = live.filter((ca) => nowMs - next.get(ca.fingerprint)!.sinceMs < inputs.overlapMs);
  const newestOwn = own.reduce((a, b) => (newestFirst(a, b) <= 0 ? a : b));
  const ahead = live.find((ca) => newestFirst(ca, newestOwn) < 0 && !kept.includes(ca));
  if (ahead !== undefined && !own.some((c) => stored.has(c.fingerprint))) {
    const minutes = Math.round(inputs.overlapMs / 60_000);
    return {
      memory: next,
      behind: `this pod's CA was left out of caBundle for a newer one another replica serves (${ahead.subject}, sha256 ${ahead.fingerprint.slice(0, 16)}) for over ${minutes} min: writing nothing (the newest CA wins)`,
    };
  }
  if (kept.length === 0) return { memory: next, bundle: inputs.own };
  return {
    memory: next,
    bundle: [...own, ...kept]
      .sort(newestFirst)
      .map((c) => c.pem)
      .join(''),
  };
}

/** A replica judged behind: why (one line) and the CA bundle (PEM) it served when judged. */
export interface Behind {
  readonly why: string;
  readonly ownPem: string;
}

/**
 * Why a replica judged `behind` is still behind while it serves `ownPem`, or `undefined`:
 * the judgement holds only for the CA it was made on, since a new CA from the kubelet is
 * the very thing it waits for (the next round judges that one).
 */
export function stillBehind(behind: Behind | undefined, ownPem: string | undefined): string | undefined {
  return behind !== undefined && behind.ownPem === ownPem ? behind.why : undefined;
}
