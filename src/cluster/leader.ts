/**
 * One replica at a time: leader election on a `coordination.k8s.io/v1` Lease, the decisions
 * of src/kubernetes/lease.ts (client-go's `tryAcquireOrRenew`), each read and write bounded
 * by a deadline (deadline.ts). Every `retryPeriodMs` a candidate tries to take the Lease and
 * the leader renews it; a leader that has not renewed for `RenewDeadline` steps down. A
 * clean stop hands the Lease back (client-go's `ReleaseOnCancel`), so a standby replica
 * takes over at its next try; a replica that dies holding it is replaced once the lease
 * duration has passed unrenewed.
 */
import { ApiException, CoordinationV1Api, type KubeConfig, type V1Lease, type V1OwnerReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { LEASE_TIMING, LeaseSpecSchema, leaseStep, observe, releasedSpec, stillLeading, type LeaseSpec, type Observed } from '../kubernetes/lease.js';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';

export interface LeaderOptions {
  kubeConfig: KubeConfig;
  lease: { namespace: string; name: string };
  /** This replica's identity in `holderIdentity` (client-go: hostname + `_` + a UUID). */
  identity: string;
  /**
   * The Lease's owner (the reports' ClusterRole) and the one-line error when it is absent, or
   * none. Read at each create (the owner gone, nothing is written) and set on every write, so
   * that a Lease created under an earlier owner follows the new one.
   */
  owner?: { read: (timeoutMs: number) => Promise<V1OwnerReference | 'absent' | undefined>; absent: string };
  /** Told when this replica starts (true) or stops (false) leading. */
  onLeading(leading: boolean): void;
  logger: Logger;
  /** Between tries, in milliseconds (default client-go's 2 s). */
  retryPeriodMs?: number;
  /** The clock, in milliseconds (tests hand in a fake one). */
  now?: () => number;
  /** Each call's deadline, in milliseconds. */
  callTimeoutMs?: number;
}

export interface LeaderElection {
  isLeader(): boolean;
  /** Stops trying, and hands the Lease back when this replica holds it. */
  stop(): Promise<void>;
}

const CALL_TIMEOUT_MS = 5_000;

/** The stored Lease's spec as the decision reads it (times as strings, whatever client-node made of them). */
function specOf(lease: V1Lease): LeaseSpec {
  const spec: Record<string, unknown> = { ...lease.spec };
  for (const key of ['acquireTime', 'renewTime']) if (spec[key] instanceof Date) spec[key] = (spec[key] as Date).toISOString();
  return LeaseSpecSchema.parse(spec);
}

/** Starts electing; the first try runs at once. */
export function startLeaderElection(options: LeaderOptions): LeaderElection {
  const { kubeConfig, lease, identity, logger } = options;
  const api = kubeConfig.makeApiClient(CoordinationV1Api);
  const now = options.now ?? Date.now;
  const timeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS;
  let observed: Observed | undefined;
  let stored: V1Lease | undefined;
  let leading = false;
  let renewedAtMs = 0;
  let lastFailure: string | undefined;
  const setLeading = (value: boolean) => {
    if (value === leading) return;
    leading = value;
    logger.info(
      { lease: `${lease.namespace}/${lease.name}`, identity },
      value ? 'leading: this replica keeps the reports' : 'no longer leading: another replica keeps the reports',
    );
    options.onLeading(value);
  };
  const read = async (): Promise<V1Lease | undefined> => {
    try {
      return await withDeadline((o) => api.readNamespacedLease(lease, o), timeoutMs);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  };
  let owner: V1OwnerReference | undefined;
  /** The owner, read again at a create (a deleted Lease: its owner may be gone too), else as last read. */
  const ownerFor = async (create: boolean): Promise<V1OwnerReference | undefined> => {
    if (options.owner === undefined || (owner !== undefined && !create)) return owner;
    const found = await options.owner.read(timeoutMs);
    if (found === 'absent') throw new Error(options.owner.absent);
    return (owner = found);
  };
  const write = async (create: boolean, spec: LeaseSpec): Promise<V1Lease> => {
    const ownedBy = await ownerFor(create);
    const metadata = { ...stored?.metadata, ...lease, ...(ownedBy ? { ownerReferences: [ownedBy] } : {}) };
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec } as V1Lease;
    if (!create) return withDeadline((o) => api.replaceNamespacedLease({ ...lease, body }, o), timeoutMs);
    return withDeadline((o) => api.createNamespacedLease({ namespace: lease.namespace, body }, o), timeoutMs);
  };
  const attempt = async () => {
    stored = await read();
    const decided = leaseStep(identity, stored === undefined ? undefined : specOf(stored), observed, now());
    observed = decided.observed;
    if (decided.step.write === 'none') return setLeading(false);
    stored = await write(decided.step.write === 'create', decided.step.spec);
    observed = observe(undefined, decided.step.spec, now());
    renewedAtMs = now();
    setLeading(true);
  };
  const failed = (err: unknown) => {
    const { message } = summarizeApiError(err);
    if (message !== lastFailure) logger.warn({ lease: `${lease.namespace}/${lease.name}`, err: message }, 'Lease try failed; trying again');
    lastFailure = message;
  };
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = attempt()
      .then(() => {
        lastFailure = undefined;
      }, failed)
      .then(() => {
        if (leading && !stillLeading(renewedAtMs, now())) setLeading(false);
        if (!stopped) timer = setTimeout(tick, options.retryPeriodMs ?? LEASE_TIMING.retryPeriodMs).unref();
      });
  };
  tick();
  return {
    isLeader: () => leading,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
      if (!leading || stored?.spec === undefined) return;
      setLeading(false);
      await withDeadline(
        (o) => api.replaceNamespacedLease({ ...lease, body: { ...stored!, spec: releasedSpec(specOf(stored!), now()) as V1Lease['spec'] } }, o),
        timeoutMs,
      ).catch(failed);
    },
  };
}
