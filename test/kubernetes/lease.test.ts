/**
 * Leader election decided as client-go's `tryAcquireOrRenew`, on a fake clock: create,
 * stand by while another holder's lease runs, take over once it has run out as observed
 * locally (never by the holder's renewTime), renew keeping the acquire time, release.
 */
import { LEASE_TIMING, leaseStep, microTime, observe, releasedSpec, stillLeading, type LeaseSpec, type Observed } from '../../src/kubernetes/lease.js';

const T0 = Date.parse('2026-12-07T10:00:00Z');
const held = (holder: string, atMs: number, transitions = 0): LeaseSpec => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: microTime(atMs),
  renewTime: microTime(atMs),
  leaseTransitions: transitions,
});

describe('leaseStep', () => {
  it('creates an absent Lease, held by the caller, with no transition', () => {
    const { step } = leaseStep('b', undefined, undefined, T0);
    expect(step).toEqual({
      write: 'create',
      spec: {
        holderIdentity: 'b',
        leaseDurationSeconds: 15,
        acquireTime: '2026-12-07T10:00:00.000000Z',
        renewTime: '2026-12-07T10:00:00.000000Z',
        leaseTransitions: 0,
      },
    });
  });

  it("stands by while another holder's lease runs, counted from when this candidate first saw the record", () => {
    // The holder's renewTime is an hour old (its clock is behind): only the local observation counts.
    const spec = held('a', T0 - 3_600_000);
    let observed: Observed | undefined;
    for (const atMs of [T0, T0 + 2_000, T0 + 14_999]) {
      const decided = leaseStep('b', spec, observed, atMs);
      expect(decided.step).toEqual({ write: 'none', holder: 'a' });
      observed = decided.observed;
    }
    expect(observed!.atMs).toBe(T0);
    const later = leaseStep('b', spec, observed, T0 + 15_000);
    expect(later.step).toEqual({ write: 'update', spec: { ...held('b', T0 + 15_000), leaseTransitions: 1 } });
  });

  it('restarts the wait each time the holder renews (the record changed)', () => {
    let observed = leaseStep('b', held('a', T0), undefined, T0).observed;
    observed = leaseStep('b', held('a', T0 + 10_000), observed, T0 + 10_000).observed;
    expect(leaseStep('b', held('a', T0 + 10_000), observed, T0 + 20_000).step.write).toBe('none');
    expect(leaseStep('b', held('a', T0 + 10_000), observed, T0 + 25_000).step.write).toBe('update');
  });

  it('renews its own lease keeping the acquire time and the transitions', () => {
    const mine = held('b', T0, 3);
    const { step } = leaseStep('b', mine, observe(undefined, mine, T0), T0 + 2_000);
    expect(step).toEqual({ write: 'update', spec: { ...held('b', T0 + 2_000, 3), acquireTime: microTime(T0) } });
  });

  it('takes a released lease (no holder) at once', () => {
    const released = releasedSpec(held('a', T0, 2), T0);
    expect(released).toEqual({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: microTime(T0), renewTime: microTime(T0), leaseTransitions: 2 });
    expect(leaseStep('b', released, undefined, T0 + 1).step).toEqual({ write: 'update', spec: { ...held('b', T0 + 1), leaseTransitions: 3 } });
  });
});

describe('stillLeading', () => {
  it('gives up once the renew deadline has passed without a renewal', () => {
    expect(stillLeading(T0, T0 + LEASE_TIMING.renewDeadlineMs - 1)).toBe(true);
    expect(stillLeading(T0, T0 + LEASE_TIMING.renewDeadlineMs)).toBe(false);
  });
});

describe('microTime', () => {
  it('writes six fractional digits, as metav1.MicroTime', () => {
    expect(microTime(T0 + 123)).toBe('2026-12-07T10:00:00.123000Z');
  });
});
