/**
 * Leader election on a `coordination.k8s.io/v1` Lease, decided as client-go decides it
 * (k8s.io/client-go/tools/leaderelection/leaderelection.go, `tryAcquireOrRenew` and
 * `release`): pure, the clock handed in, so the shell (src/cluster/leader.ts) only reads
 * and writes the Lease. A candidate judges a holder's lease by when it last saw the record
 * change on its own clock, never by the holder's `renewTime` (clocks may differ).
 */
import { z } from 'zod';

/** client-go's defaults (`LeaseDuration` 15 s, `RenewDeadline` 10 s, `RetryPeriod` 2 s), as controller-runtime's managers use them. */
export const LEASE_TIMING = { leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

/** A Lease's `spec` (`LeaderElectionRecord`'s fields); times are `metav1.MicroTime` strings. */
export const LeaseSpecSchema = z.object({
  holderIdentity: z.string().nullish(),
  leaseDurationSeconds: z.number().int().nullish(),
  acquireTime: z.string().nullish(),
  renewTime: z.string().nullish(),
  leaseTransitions: z.number().int().nullish(),
});
export type LeaseSpec = z.infer<typeof LeaseSpecSchema>;

/** The record last seen and when it was first seen so, in milliseconds on the local clock (client-go's `observedRecord`, `observedTime`). */
export interface Observed {
  spec: LeaseSpec;
  atMs: number;
}

/** What to do with the Lease: create or update it with `spec`, or stand by while `holder` leads. */
export type LeaseStep = { write: 'create' | 'update'; spec: LeaseSpec } | { write: 'none'; holder: string };

/** `metav1.MicroTime` as the API server writes it: RFC 3339 with six fractional digits, UTC. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/Z$/, '000Z');

const sameSpec = (a: LeaseSpec, b: LeaseSpec): boolean => JSON.stringify(LeaseSpecSchema.parse(a)) === JSON.stringify(LeaseSpecSchema.parse(b));

/** `observed` again if `spec` is the record it holds, else `spec` seen now (client-go compares the raw records). */
export function observe(observed: Observed | undefined, spec: LeaseSpec, nowMs: number): Observed {
  return observed !== undefined && sameSpec(observed.spec, spec) ? observed : { spec, atMs: nowMs };
}

/**
 * One `tryAcquireOrRenew` of `identity`: create an absent Lease; stand by while another
 * holder's lease, as observed, has not expired; otherwise take or renew it (the acquire
 * time and transitions kept on a renewal, transitions + 1 on a takeover).
 *
 * @param current the Lease's spec as just read, `undefined` when it does not exist.
 * @returns the step and the observation to keep (call {@link observe} with the written spec after a successful write).
 */
export function leaseStep(
  identity: string,
  current: LeaseSpec | undefined,
  observed: Observed | undefined,
  nowMs: number,
): { step: LeaseStep; observed: Observed | undefined } {
  const fresh = {
    holderIdentity: identity,
    leaseDurationSeconds: LEASE_TIMING.leaseDurationSeconds,
    acquireTime: microTime(nowMs),
    renewTime: microTime(nowMs),
  };
  if (current === undefined) return { step: { write: 'create', spec: { ...fresh, leaseTransitions: 0 } }, observed };
  const seen = observe(observed, current, nowMs);
  const holder = current.holderIdentity ?? '';
  const leading = holder === identity;
  const validUntilMs = seen.atMs + (current.leaseDurationSeconds ?? LEASE_TIMING.leaseDurationSeconds) * 1000;
  if (holder !== '' && !leading && validUntilMs > nowMs) return { step: { write: 'none', holder }, observed: seen };
  const transitions = current.leaseTransitions ?? 0;
  const spec = leading
    ? { ...fresh, acquireTime: current.acquireTime ?? fresh.acquireTime, leaseTransitions: transitions }
    : { ...fresh, leaseTransitions: transitions + 1 };
  return { step: { write: 'update', spec }, observed: seen };
}

/** The spec that hands the Lease back on a clean stop (client-go's `ReleaseOnCancel`): no holder, a 1 s duration, so a candidate takes over at its next try. */
export function releasedSpec(current: LeaseSpec, nowMs: number): LeaseSpec {
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: microTime(nowMs),
    renewTime: microTime(nowMs),
    leaseTransitions: current.leaseTransitions ?? 0,
  };
}

/** Whether a leader whose last successful renewal was at `renewedAtMs` still leads at `nowMs` (client-go gives up after `RenewDeadline`). */
export const stillLeading = (renewedAtMs: number, nowMs: number): boolean => nowMs - renewedAtMs < LEASE_TIMING.renewDeadlineMs;
