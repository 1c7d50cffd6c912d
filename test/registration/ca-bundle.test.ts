import { X509Certificate } from 'node:crypto';
import { jest } from '@jest/globals';
import { generateCertificates } from '../../src/certs/generate.js';
import {
  CA_BUNDLE_OVERLAP_MS,
  NO_CA_MEMORY,
  overlappedBundle,
  stillBehind,
  type Behind,
  type CaMemory,
  type OverlapInputs,
} from '../../src/registration/ca-bundle.js';

jest.setTimeout(60_000);

const HOUR_MS = 3_600_000;
const OVERLAP_MS = CA_BUNDLE_OVERLAP_MS;
/** As manage.ts passes it: six rounds of 10 s. */
const FORGET_MS = 60_000;
const ROUND_MS = 10_000;

/** A CA made `hoursLater` hours after now, valid `validityMs` (ten years by default). */
async function caMadeAt(hoursLater: number, validityMs?: number): Promise<string> {
  const at = Date.now() + hoursLater * HOUR_MS;
  const clock = jest.spyOn(Date, 'now').mockReturnValue(at);
  try {
    return (await generateCertificates({ serviceName: 'svc', namespace: 'ns', ...(validityMs === undefined ? {} : { caValidityMs: validityMs }) })).caCertPem;
  } finally {
    clock.mockRestore();
  }
}
const fingerprints = (pem: string) =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b).fingerprint256);

/** Two CAs made in one second (a current and a next CA from one script): the same notBefore. */
async function sameSecondCas(): Promise<[string, string]> {
  const at = Math.floor(Date.now() / 1000) * 1000 + 500;
  const clock = jest.spyOn(Date, 'now').mockReturnValue(at);
  try {
    const made = await Promise.all([0, 1].map(() => generateCertificates({ serviceName: 'svc', namespace: 'ns' })));
    return [made[0]!.caCertPem, made[1]!.caCertPem];
  } finally {
    clock.mockRestore();
  }
}

let oldCa: string;
let newCa: string;
let planted: string;
beforeAll(async () => {
  oldCa = await caMadeAt(0);
  newCa = await caMadeAt(1);
  planted = await caMadeAt(2);
});

/** The start of every scenario: after the three CAs were made. */
const T0 = Date.now() + 3 * HOUR_MS;
const round = (inputs: Partial<OverlapInputs> & Pick<OverlapInputs, 'own' | 'stored'>) =>
  overlappedBundle({ memory: NO_CA_MEMORY, nowMs: T0, overlapMs: OVERLAP_MS, forgetAfterMs: FORGET_MS, ...inputs });
/** Rounds every 10 s with the same inputs from `inputs.nowMs` (default T0) until `untilMs`, from `inputs.memory`: the last one. */
const roundsUntil = (untilMs: number, inputs: Pick<OverlapInputs, 'own' | 'stored'> & Partial<OverlapInputs>) => {
  const fromMs = inputs.nowMs ?? T0;
  let result = round({ ...inputs, nowMs: fromMs });
  for (let t = fromMs + ROUND_MS; t < untilMs; t += ROUND_MS) result = round({ ...inputs, memory: result.memory, nowMs: t });
  return untilMs > fromMs ? round({ ...inputs, memory: result.memory, nowMs: untilMs }) : result;
};
const bundleOf = (result: ReturnType<typeof overlappedBundle>) => {
  if (result.bundle === undefined) throw new Error(`expected a bundle, got behind: ${result.behind}`);
  return result.bundle;
};

describe('overlappedBundle, one round', () => {
  it('keeps every stored CA it does not serve beside its own at its first round, newest first', () => {
    expect(fingerprints(bundleOf(round({ own: newCa, stored: [oldCa] })))).toEqual(fingerprints(newCa + oldCa));
    expect(fingerprints(bundleOf(round({ own: oldCa, stored: [newCa] })))).toEqual(fingerprints(newCa + oldCa));
  });

  it('drops a stored CA it has seen for the overlap, older or newer than its own, leaving ca.crt as it is', () => {
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS - 1, { own: newCa, stored: [oldCa] }))).not.toBe(newCa);
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS, { own: newCa, stored: [oldCa, newCa + oldCa] }))).toBe(newCa);
    // A newer CA nobody serves any more (the CA a rollback backed out): gone after the overlap too.
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS - 1, { own: oldCa, stored: [newCa + oldCa] }))).not.toBe(oldCa);
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS, { own: oldCa, stored: [newCa + oldCa] }))).toBe(oldCa);
  });

  it('keeps the CA it served until now for the overlap from the moment it stopped serving it', () => {
    const before = roundsUntil(T0, { own: oldCa, stored: [oldCa], nowMs: T0 - HOUR_MS });
    const switched = round({ own: newCa, stored: [oldCa], memory: before.memory });
    expect(fingerprints(bundleOf(switched))).toEqual(fingerprints(newCa + oldCa));
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS - 1, { own: newCa, stored: [newCa + oldCa], memory: switched.memory, nowMs: T0 + ROUND_MS }))).not.toBe(newCa);
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS, { own: newCa, stored: [newCa + oldCa], memory: switched.memory, nowMs: T0 + ROUND_MS }))).toBe(newCa);
  });

  it('does not put back a CA it does not serve once it left the stored caBundle', () => {
    const switched = round({ own: newCa, stored: [oldCa], memory: round({ own: oldCa, stored: [oldCa], nowMs: T0 - 1 }).memory });
    expect(bundleOf(round({ own: newCa, stored: [newCa], memory: switched.memory, nowMs: T0 + 1000 }))).toBe(newCa);
  });

  it('forgets a CA absent for forgetAfterMs: when it comes back, it gets a new overlap', () => {
    const seen = roundsUntil(T0 + OVERLAP_MS, { own: newCa, stored: [newCa + oldCa] });
    expect(bundleOf(seen)).toBe(newCa);
    const absentUntil = (ms: number) =>
      roundsUntil(T0 + OVERLAP_MS + ms, { own: newCa, stored: [newCa], memory: seen.memory, nowMs: T0 + OVERLAP_MS + ROUND_MS });
    // Back after less than forgetAfterMs: the same sighting, whose overlap has passed.
    const within = absentUntil(FORGET_MS - ROUND_MS);
    expect(bundleOf(round({ own: newCa, stored: [newCa + oldCa], memory: within.memory, nowMs: T0 + OVERLAP_MS + FORGET_MS - 1 }))).toBe(newCa);
    // Back after it: a new change.
    const back = round({ own: newCa, stored: [newCa + oldCa], memory: absentUntil(FORGET_MS).memory, nowMs: T0 + OVERLAP_MS + FORGET_MS + ROUND_MS });
    expect(fingerprints(bundleOf(back))).toEqual(fingerprints(newCa + oldCa));
  });

  it('a round after a long pause (the API server unreachable) keeps what it sees for a new overlap', () => {
    const seen = roundsUntil(T0 + OVERLAP_MS, { own: newCa, stored: [newCa + oldCa] });
    expect(fingerprints(bundleOf(round({ own: newCa, stored: [newCa + oldCa], memory: seen.memory, nowMs: T0 + OVERLAP_MS + FORGET_MS })))).toEqual(
      fingerprints(newCa + oldCa),
    );
  });

  it('writes nothing when the stored caBundle has left its CA out for a newer one it has seen for the overlap', () => {
    expect(fingerprints(bundleOf(round({ own: oldCa, stored: [newCa] })))).toEqual(fingerprints(newCa + oldCa));
    expect(roundsUntil(T0 + OVERLAP_MS - 1, { own: oldCa, stored: [newCa] }).bundle).toBeDefined();
    const late = roundsUntil(T0 + OVERLAP_MS, { own: oldCa, stored: [newCa] });
    expect(late.bundle).toBeUndefined();
    // What is known, and no more: which of the two mounts is stale it cannot tell (after a rollback, the other's).
    expect(late.behind).toMatch(
      /^this pod's CA was left out of caBundle for a newer one another replica serves \(CN=svc-ca, sha256 [0-9a-f]{16}\) for over 10 min: writing nothing \(the newest CA wins\)$/,
    );
    expect(late.behind!.length).toBeLessThan(200);
    // Its own CA still stored: it writes (the newer CA is then one nobody may serve any more).
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS, { own: oldCa, stored: [newCa + oldCa] }))).toBe(oldCa);
    // An older CA left in its place is no reason to stop: it writes its own back.
    expect(bundleOf(roundsUntil(T0 + OVERLAP_MS, { own: newCa, stored: [oldCa] }))).toBe(newCa);
  });

  it('drops expired CAs and what is not a certificate, even at its first round', async () => {
    const expiring = await caMadeAt(-3, HOUR_MS);
    const fake = '-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n';
    expect(bundleOf(round({ own: newCa, stored: [expiring + fake, 'not PEM'] }))).toBe(newCa);
  });

  it('the same bundle whatever order the stored ones come in, and the same as a replica whose ca.crt holds its own CA only', () => {
    const a = bundleOf(round({ own: newCa, stored: [oldCa + newCa] }));
    expect(bundleOf(round({ own: newCa, stored: [newCa, oldCa] }))).toBe(a);
    expect(bundleOf(round({ own: oldCa, stored: [newCa] }))).toBe(a);
    expect(bundleOf(round({ own: newCa + newCa, stored: [oldCa] }))).toBe(a);
    expect(fingerprints(a)).toEqual(fingerprints(newCa + oldCa));
  });

  it('the same results with more distinct PEM blocks than it keeps parsed (its cache drops the oldest)', () => {
    const junk = Array.from(
      { length: 150 },
      (_, i) => `-----BEGIN CERTIFICATE-----\n${Buffer.from(`junk ${i}`).toString('base64')}\n-----END CERTIFICATE-----\n`,
    ).join('');
    for (let i = 0; i < 3; i++) {
      expect(fingerprints(bundleOf(round({ own: newCa, stored: [junk + oldCa + junk] })))).toEqual(fingerprints(newCa + oldCa));
      expect(bundleOf(round({ own: junk + newCa, stored: [junk] }))).toBe(junk + newCa);
    }
  });

  it('returns its own bundle as it is when none of it is a certificate, remembering nothing', () => {
    const result = round({ own: 'garbage', stored: [oldCa] });
    expect(result).toEqual({ memory: NO_CA_MEMORY, bundle: 'garbage' });
  });
});

/**
 * Replicas against one stored caBundle, as manage.ts runs them: every 10 s, and when the
 * server loaded a new certificate, each reads it and writes its bundle when it differs; a
 * replica judged behind is not Ready until a round judges otherwise or it serves another CA.
 * The API server calls every Ready replica: a call to one fails while the stored caBundle
 * has none of its CAs, and every call fails while no replica is Ready.
 */
class Cluster {
  writes = 0;
  /** The replica the API server could not call (`NO_ENDPOINT`: none was Ready), at each half round it could not. */
  failures: { atMs: number; replica: string }[] = [];
  /** The replica out of the Service's endpoints, at each half round it was. */
  unready: { atMs: number; replica: string }[] = [];
  readonly behind = new Map<string, string>();
  /** While set, every read of the configuration fails (an API-server hiccup): rounds end before judging. */
  readsFail = false;
  private readonly replicas = new Map<string, { own: string; memory: CaMemory; judged?: Behind }>();
  private readonly fingerprintsOf = new Map<string, string[]>();
  constructor(
    public nowMs: number,
    public stored: string,
  ) {}
  /** A replica (re)started: its memory is gone. */
  start(name: string, own: string): void {
    this.replicas.set(name, { own, memory: NO_CA_MEMORY });
    this.round(name);
  }
  stop(name: string): void {
    this.replicas.delete(name);
  }
  /** The kubelet brought `own` to the replica: the server reloads it and syncs, the process runs on. */
  serve(name: string, own: string): void {
    this.replicas.get(name)!.own = own;
    this.round(name);
  }
  /** Whether the replica passes its `webhook-ca-bundle` readiness check now. */
  ready(name: string): boolean {
    const replica = this.replicas.get(name)!;
    return stillBehind(replica.judged, replica.own) === undefined;
  }
  /** Runs the replicas for `ms`, a round each every 10 s, one after the other 5 s apart. */
  run(ms: number): void {
    for (const end = this.nowMs + ms; this.nowMs < end; this.nowMs += ROUND_MS / 2) {
      const turn = Math.round(this.nowMs / (ROUND_MS / 2)) % 2;
      [...this.replicas.keys()].forEach((name, index) => index % 2 === turn && this.round(name));
      const trusted = new Set(this.fingerprints(this.stored));
      const ready = [...this.replicas.keys()].filter((name) => this.ready(name));
      if (ready.length === 0) this.failures.push({ atMs: this.nowMs, replica: NO_ENDPOINT });
      for (const [name, replica] of this.replicas) {
        if (!ready.includes(name)) this.unready.push({ atMs: this.nowMs, replica: name });
        else if (!this.fingerprints(replica.own).some((f) => trusted.has(f))) this.failures.push({ atMs: this.nowMs, replica: name });
      }
    }
  }
  private round(name: string): void {
    if (this.readsFail) return;
    const replica = this.replicas.get(name)!;
    const result = overlappedBundle({
      own: replica.own,
      stored: [this.stored],
      memory: replica.memory,
      nowMs: this.nowMs,
      overlapMs: OVERLAP_MS,
      forgetAfterMs: FORGET_MS,
    });
    replica.memory = result.memory;
    replica.judged = result.behind === undefined ? undefined : { why: result.behind, ownPem: replica.own };
    if (result.behind !== undefined) this.behind.set(name, result.behind);
    else if (result.bundle !== this.stored) {
      this.stored = result.bundle;
      this.writes++;
    }
  }
  private fingerprints(pem: string): string[] {
    if (!this.fingerprintsOf.has(pem)) this.fingerprintsOf.set(pem, fingerprints(pem));
    return this.fingerprintsOf.get(pem)!;
  }
}

const NO_ENDPOINT = '(no Ready replica)';
const KUBELET_DELAY_MS = 67_000;

describe('overlappedBundle, replicas through a change', () => {
  /** Two replicas that have served `ca` for an hour, the stored caBundle equal to it. */
  const settledOn = (ca: string) => {
    const cluster = new Cluster(T0, ca);
    cluster.start('a', ca);
    cluster.start('b', ca);
    cluster.run(HOUR_MS);
    expect(cluster.stored).toBe(ca);
    return cluster;
  };
  /** The kubelet brings `ca` to a, then to b 67 s later (the delay measured on the one-node cluster). */
  const change = (cluster: Cluster, ca: string) => {
    cluster.serve('a', ca);
    cluster.run(KUBELET_DELAY_MS);
    cluster.serve('b', ca);
  };

  /**
   * A change from `from` to `to` on a settled cluster: both trusted until the overlap after b
   * switched, then `to` alone, an hour later still; two writes, no failed call, nobody behind.
   */
  const expectChange = (cluster: Cluster, from: string, to: string) => {
    cluster.writes = 0;
    cluster.failures = [];
    change(cluster, to);
    cluster.run(OVERLAP_MS - KUBELET_DELAY_MS - ROUND_MS);
    expect(fingerprints(cluster.stored).sort()).toEqual(fingerprints(from + to).sort());
    cluster.run(KUBELET_DELAY_MS + 2 * ROUND_MS);
    expect(cluster.stored).toBe(to);
    cluster.run(HOUR_MS);
    expect(cluster.stored).toBe(to);
    expect(cluster.failures).toEqual([]);
    expect(cluster.writes).toBe(2);
    expect(cluster.behind.size).toBe(0);
    expect(cluster.unready).toEqual([]);
  };

  it('a CA change (cert-manager: a CA made hours before its first serving certificate): no failed call, then the new CA alone', () => {
    expectChange(settledOn(oldCa), oldCa, newCa);
  });

  it('helm rollback to the older CA half an hour after an upgrade: no failed call, and the CA backed out leaves after the overlap', () => {
    const cluster = settledOn(oldCa);
    change(cluster, newCa);
    cluster.run(30 * 60_000);
    expect(cluster.stored).toBe(newCa);
    expectChange(cluster, newCa, oldCa);
  });

  it('helm rollback within the overlap of the upgrade: no failed call, one CA at the end', () => {
    const cluster = settledOn(oldCa);
    change(cluster, newCa);
    cluster.run(4 * 60_000);
    change(cluster, oldCa);
    cluster.run(OVERLAP_MS + ROUND_MS);
    expect(cluster.stored).toBe(oldCa);
    expect(cluster.failures).toEqual([]);
  });

  it('the limit: a rollback reaching one pod in the minute after the CA it returns to left caBundle fails its calls only between two writes, until the other pod has it', () => {
    const cluster = settledOn(oldCa);
    const upgradedMs = cluster.nowMs;
    change(cluster, newCa);
    cluster.run(620_000 - KUBELET_DELAY_MS);
    expect(cluster.stored).toBe(newCa);
    cluster.failures = [];
    const rolledBackMs = cluster.nowMs;
    change(cluster, oldCa);
    cluster.run(OVERLAP_MS + ROUND_MS);
    expect(cluster.stored).toBe(oldCa);
    // Checked every 5 s: at most 15 s in all, each between b's write and a's next one.
    expect(cluster.failures.length).toBeGreaterThan(0);
    expect(cluster.failures.length).toBeLessThanOrEqual(3);
    expect(new Set(cluster.failures.map((f) => f.replica))).toEqual(new Set(['a']));
    for (const { atMs } of cluster.failures) expect(atMs - rolledBackMs).toBeLessThanOrEqual(KUBELET_DELAY_MS);
    // The minute after the old CA left (at the overlap after a switched), before it is forgotten.
    expect(rolledBackMs - upgradedMs).toBeGreaterThan(OVERLAP_MS);
    expect(rolledBackMs - upgradedMs).toBeLessThan(OVERLAP_MS + FORGET_MS);
  });

  it('a CA someone added to caBundle (newer than the served one) leaves after the overlap; a caBundle replaced by it is restored at once', () => {
    const cluster = settledOn(oldCa);
    cluster.stored = planted + oldCa;
    cluster.run(OVERLAP_MS - ROUND_MS);
    expect(fingerprints(cluster.stored)).toEqual(fingerprints(planted + oldCa));
    cluster.run(2 * ROUND_MS);
    expect(cluster.stored).toBe(oldCa);

    cluster.run(HOUR_MS);
    cluster.stored = planted;
    cluster.run(ROUND_MS);
    expect(fingerprints(cluster.stored)).toEqual(fingerprints(planted + oldCa));
    cluster.run(OVERLAP_MS + ROUND_MS);
    expect(cluster.stored).toBe(oldCa);
    expect(cluster.behind.size).toBe(0);
  });

  it('a replica still on the old CA long after the other switched (its kubelet stalled): no write war, the newer CA wins, and it leaves the endpoints', () => {
    const cluster = settledOn(oldCa);
    const switchedMs = cluster.nowMs;
    cluster.serve('a', newCa);
    cluster.run(OVERLAP_MS + 2 * ROUND_MS);
    expect(cluster.stored).toBe(newCa);
    const writes = cluster.writes;
    cluster.run(HOUR_MS);
    expect(cluster.writes).toBe(writes);
    expect(cluster.stored).toBe(newCa);
    expect(cluster.behind.get('b')).toMatch(/: writing nothing \(the newest CA wins\)$/);
    // Calls failed only as the overlap ended: between b's write of its own CA alone (the newer
    // one it saw first kept no longer) and a's next one, then until b's next round took it out.
    expect(cluster.failures.length).toBeGreaterThan(0);
    for (const { atMs } of cluster.failures) expect(atMs - switchedMs).toBeGreaterThanOrEqual(OVERLAP_MS);
    for (const { atMs } of cluster.failures) expect(atMs - switchedMs).toBeLessThan(OVERLAP_MS + ROUND_MS);
    expect(cluster.ready('a')).toBe(true);
    expect(cluster.ready('b')).toBe(false);
    expect(cluster.unready.every((u) => u.replica === 'b')).toBe(true);
    expect(cluster.unready.at(-1)!.atMs - cluster.unready[0]!.atMs).toBeGreaterThanOrEqual(HOUR_MS);
    // The API server unreachable for a while: nobody is judged, so nobody comes in or goes out.
    cluster.failures = [];
    cluster.readsFail = true;
    cluster.run(OVERLAP_MS);
    expect([cluster.ready('a'), cluster.ready('b')]).toEqual([true, false]);
    // The kubelet brings b the new CA: Ready at once, before any read succeeds.
    cluster.serve('b', newCa);
    expect(cluster.ready('b')).toBe(true);
    cluster.readsFail = false;
    cluster.unready = [];
    cluster.run(HOUR_MS);
    expect(cluster.stored).toBe(newCa);
    expect(cluster.failures).toEqual([]);
    expect(cluster.unready).toEqual([]);
  });

  it('helm rollback with a stalled replica: the pod on the CA rolled back to is the one left out, until the other has it; no call fails past a round', () => {
    const cluster = settledOn(newCa);
    const rolledBackMs = cluster.nowMs;
    cluster.serve('a', oldCa);
    cluster.run(OVERLAP_MS + 2 * ROUND_MS);
    // The newest CA wins: b's, whose kubelet has not brought it the older one.
    expect(cluster.stored).toBe(newCa);
    expect(cluster.behind.get('a')).toMatch(/^this pod's CA was left out of caBundle for a newer one another replica serves /);
    expect([cluster.ready('a'), cluster.ready('b')]).toEqual([false, true]);
    for (const { atMs } of cluster.failures) expect(atMs - rolledBackMs).toBeGreaterThanOrEqual(OVERLAP_MS);
    for (const { atMs } of cluster.failures) expect(atMs - rolledBackMs).toBeLessThan(OVERLAP_MS + 2 * ROUND_MS);
    cluster.failures = [];
    cluster.run(HOUR_MS);
    expect(cluster.failures).toEqual([]);
    expect(cluster.ready('a')).toBe(false);
    // b's kubelet catches up: b keeps the CA it served beside the one it now serves, and a comes back.
    cluster.serve('b', oldCa);
    cluster.run(ROUND_MS);
    expect(cluster.ready('a')).toBe(true);
    cluster.run(OVERLAP_MS + ROUND_MS);
    expect(cluster.stored).toBe(oldCa);
    expect(cluster.failures).toEqual([]);
  });

  /** Two replicas settled on oldCa, a switched to newCa, b (its kubelet stalled) behind since the overlap passed. */
  const stalledBehind = () => {
    const cluster = settledOn(oldCa);
    cluster.serve('a', newCa);
    cluster.run(OVERLAP_MS + 2 * ROUND_MS);
    expect(cluster.ready('b')).toBe(false);
    return cluster;
  };

  it('a replica behind left alone (the other evicted): no Ready endpoint, every call fails until its kubelet or a new pod brings the newer CA', () => {
    const cluster = stalledBehind();
    cluster.stop('a');
    cluster.failures = [];
    cluster.run(5 * 60_000);
    expect(cluster.ready('b')).toBe(false);
    expect(cluster.failures.length).toBe((5 * 60_000) / (ROUND_MS / 2));
    expect(new Set(cluster.failures.map((f) => f.replica))).toEqual(new Set([NO_ENDPOINT]));
    expect(cluster.stored).toBe(newCa);
    // A new pod mounts the current Secret: it is called; b stays out.
    cluster.failures = [];
    cluster.start('c', newCa);
    cluster.run(HOUR_MS);
    expect(cluster.failures).toEqual([]);
    expect([cluster.ready('b'), cluster.ready('c')]).toEqual([false, true]);
    cluster.serve('b', newCa);
    expect(cluster.ready('b')).toBe(true);
  });

  it('a replica behind whose container restarts on the same stale mount over a minute later: Ready for the overlap with both CAs trusted, then out again', () => {
    const cluster = stalledBehind();
    cluster.run(5 * 60_000);
    cluster.failures = [];
    const restartedMs = cluster.nowMs;
    // Its memory is gone: it keeps every stored CA for the overlap and writes its own back;
    // a, which has not seen that CA for over a minute, gives it an overlap of its own.
    cluster.start('b', oldCa);
    expect(cluster.ready('b')).toBe(true);
    cluster.run(OVERLAP_MS - ROUND_MS);
    expect(fingerprints(cluster.stored).sort()).toEqual(fingerprints(newCa + oldCa).sort());
    expect(cluster.ready('b')).toBe(true);
    expect(cluster.failures).toEqual([]);
    cluster.run(3 * ROUND_MS);
    expect(cluster.ready('b')).toBe(false);
    expect(cluster.stored).toBe(newCa);
    // As when it first fell behind: only as the overlaps end, within a round.
    for (const { atMs } of cluster.failures) expect(atMs - restartedMs).toBeGreaterThanOrEqual(OVERLAP_MS - ROUND_MS);
    expect(cluster.failures.length).toBeLessThanOrEqual(2);
    cluster.failures = [];
    cluster.run(HOUR_MS);
    expect(cluster.failures).toEqual([]);
  });

  it('a replica behind whose container restarts within the minute after it fell behind: Ready for the overlap, fighting the other over its CA, then out again', () => {
    const cluster = stalledBehind();
    cluster.failures = [];
    const restartedMs = cluster.nowMs;
    // a still remembers b's CA as seen since the change (absent for less than a minute), so it
    // removes it at each of its rounds, and b writes it back at each of its own.
    cluster.start('b', oldCa);
    expect(cluster.ready('b')).toBe(true);
    cluster.run(OVERLAP_MS - ROUND_MS);
    expect(cluster.ready('b')).toBe(true);
    expect(new Set(cluster.failures.map((f) => f.replica))).toEqual(new Set(['b']));
    // About half of the calls to b in that overlap fail (those after a's write, before b's next).
    expect(cluster.failures.length).toBeGreaterThan(OVERLAP_MS / ROUND_MS / 2);
    expect(cluster.failures.length).toBeLessThanOrEqual(OVERLAP_MS / ROUND_MS);
    cluster.run(3 * ROUND_MS);
    expect(cluster.ready('b')).toBe(false);
    expect(cluster.stored).toBe(newCa);
    for (const { atMs } of cluster.failures) expect(atMs - restartedMs).toBeLessThan(OVERLAP_MS + 2 * ROUND_MS);
    cluster.failures = [];
    cluster.run(HOUR_MS);
    expect(cluster.failures).toEqual([]);
    expect(cluster.stored).toBe(newCa);
  });

  it("a replica stalled on a CA made in the same second as the other's (notBefore has whole seconds): no write war, one CA wins", async () => {
    const [first, second] = await sameSecondCas();
    const cluster = settledOn(first);
    cluster.serve('a', second);
    cluster.run(OVERLAP_MS + 4 * ROUND_MS);
    const writes = cluster.writes;
    cluster.run(HOUR_MS);
    expect(cluster.writes).toBe(writes);
    expect([first, second]).toContain(cluster.stored);
    expect(cluster.behind.size).toBe(1);
  });

  it('two stalled replicas on either CA, one of them restarted while they disagree: they stop rewriting within an overlap', () => {
    const cluster = settledOn(oldCa);
    cluster.serve('a', newCa);
    cluster.run(OVERLAP_MS + 2 * ROUND_MS);
    cluster.start('a', newCa);
    cluster.run(OVERLAP_MS + 2 * ROUND_MS);
    const writes = cluster.writes;
    cluster.run(HOUR_MS);
    expect(cluster.writes).toBe(writes);
    expect(cluster.stored).toBe(newCa);
  });

  it('pods restarted one by one through a CA change (helm upgrade rolling them): no failed call, the new CA alone after the last start', () => {
    const cluster = settledOn(oldCa);
    cluster.writes = 0;
    cluster.start('c', newCa);
    cluster.run(30_000);
    cluster.stop('a');
    cluster.start('d', newCa);
    cluster.run(30_000);
    cluster.stop('b');
    cluster.run(OVERLAP_MS + ROUND_MS);
    expect(cluster.stored).toBe(newCa);
    cluster.run(HOUR_MS);
    expect(cluster.stored).toBe(newCa);
    expect(cluster.failures).toEqual([]);
    expect(cluster.writes).toBe(2);
  });
});
