/**
 * The fault run's load: guarded writes sent to the API server at a steady rate (open
 * loop: one call every 1/rate seconds whatever the previous ones do) while faults are
 * applied one after the other, each call judged by what the webhook must answer.
 *
 * Calls cycle through both webhooks: an allowed write (a label on the IaaS node pool
 * "fault-pool": stored, HTTP 200), a refused one (the same pool turned global, a
 * server-side dry run: HTTP 422 with the webhook's spec.nodeName cause) and a refused
 * `spiderpool-conf` (httpRequestTimeout 100s, dry run: 422 with its cause). Anything
 * else is a failed admission call: "failed calling webhook" (500), a timeout, a
 * transport error, or a refusal where an allowance was due.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient, ApiResponse } from './kube.js';

export interface Fault {
  name: string;
  /** Applies the fault and resolves once the system is back to steady state. */
  run: () => Promise<void>;
}

export interface FaultRunResult {
  ratePerSecond: number;
  seconds: number;
  calls: number;
  allowed: number;
  refused: number;
  /** Refusals due by the rules that came back allowed (HTTP 200), counted apart only with `unguardedOk`. */
  unguarded: number;
  failed: number;
  /** When each failed call was sent, in seconds from the start (one entry per failure; the run is bounded). */
  failedAtSeconds: number[];
  /** The first failures (call number, kind, what came back), at most 20. */
  failures: { call: number; kind: 'allowed' | 'refused'; atSeconds: number; what: string }[];
  latencyMs: { p50: number; p99: number; max: number };
  faults: { name: string; startSeconds: number; seconds: number }[];
}

const POOL_PATH = '/apis/spiderpool.spidernet.io/v2beta1/spiderippools/fault-pool';
const CONF_PATH = '/api/v1/namespaces/kube-system/configmaps/spiderpool-conf';
const REFUSED_CONF = 'iaasNetworkProvider:\n  serverUrl: "http://iaas-provider.kube-system.svc:80"\n  httpRequestTimeout: "100s"\n';
const MERGE_PATCH = 'application/merge-patch+json';
/** The whole run is bounded; a fault that does not recover fails it. */
const DEFAULT_MAX_FAULT_MS = 240_000;

/**
 * Sends calls at `ratePerSecond` for `settleMs` before, between and after the faults,
 * and returns the counts. Resolves with failures counted rather than throwing, except
 * when a fault itself throws (rethrown once the calls in flight are done).
 */
export async function runFaults(
  client: ApiClient,
  {
    ratePerSecond,
    faults,
    settleMs = 5_000,
    unguardedOk = false,
    maxFaultMs = DEFAULT_MAX_FAULT_MS,
  }: {
    ratePerSecond: number;
    faults: readonly Fault[];
    settleMs?: number;
    /** Each fault's bound (default 240 s): one that has not resolved by then fails the run. */
    maxFaultMs?: number;
    /**
     * While no webhook configuration exists (before an install writes it, after an
     * uninstall removed it) nothing is guarded: a refusal due that is allowed (HTTP 200)
     * then counts as `unguarded`, not failed. Every other answer is judged as without it.
     */
    unguardedOk?: boolean;
  },
): Promise<FaultRunResult> {
  const start = performance.now();
  const seconds = () => Math.round((performance.now() - start) / 100) / 10;
  const latencies: number[] = [];
  const failures: FaultRunResult['failures'] = [];
  const failedAtSeconds: number[] = [];
  let calls = 0;
  let allowed = 0;
  let refused = 0;
  let unguarded = 0;
  let failed = 0;
  const inFlight = new Set<Promise<void>>();

  const call = async (n: number): Promise<void> => {
    const kind = n % 3 === 0 ? 'allowed' : 'refused';
    const sent = performance.now();
    const sentAt = seconds();
    let what: string | undefined;
    let wasUnguarded = false;
    try {
      let r: ApiResponse;
      let expected: (r: ApiResponse) => boolean;
      if (n % 3 === 0) {
        r = await client.send('PATCH', POOL_PATH, { metadata: { labels: { 'fault-run': String(n) } } }, MERGE_PATCH);
        expected = (r) => r.status === 200;
      } else if (n % 3 === 1) {
        r = await client.send('PATCH', `${POOL_PATH}?dryRun=All`, { spec: { nodeName: null } }, MERGE_PATCH);
        expected = (r) => r.status === 422 && r.body.includes('spec.nodeName: Forbidden: ');
      } else {
        r = await client.send('PATCH', `${CONF_PATH}?dryRun=All`, { data: { 'conf.yml': REFUSED_CONF } }, MERGE_PATCH);
        expected = (r) => r.status === 422 && r.body.includes('data[conf.yml].iaasNetworkProvider.httpRequestTimeout: Invalid value: ');
      }
      if (unguardedOk && kind === 'refused' && r.status === 200) wasUnguarded = true;
      else if (!expected(r)) what = `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
    } catch (e) {
      what = (e as Error).message;
    }
    latencies.push(performance.now() - sent);
    if (wasUnguarded) unguarded++;
    else if (what === undefined) {
      if (kind === 'allowed') allowed++;
      else refused++;
    } else {
      failed++;
      failedAtSeconds.push(sentAt);
      if (failures.length < 20) failures.push({ call: n, kind, atSeconds: seconds(), what });
    }
  };

  let stop = false;
  const loop = (async () => {
    const interval = 1000 / ratePerSecond;
    for (let n = 0; !stop; n++) {
      const due = start + n * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      calls++;
      const p = call(n).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  })();

  const ran: FaultRunResult['faults'] = [];
  let faultError: unknown;
  try {
    await sleep(settleMs);
    for (const fault of faults) {
      const at = seconds();
      const cancel = new AbortController();
      const timeout = sleep(maxFaultMs, undefined, { signal: cancel.signal }).then(() => {
        throw new Error(`fault "${fault.name}" did not recover within ${maxFaultMs} ms`);
      });
      timeout.catch(() => undefined); // the race below reports it; the abort is not an error
      try {
        await Promise.race([fault.run(), timeout]);
      } finally {
        cancel.abort();
      }
      ran.push({ name: fault.name, startSeconds: at, seconds: Math.round((seconds() - at) * 10) / 10 });
      await sleep(settleMs);
    }
  } catch (e) {
    faultError = e;
  } finally {
    stop = true;
    await loop;
    await Promise.all(inFlight);
  }
  if (faultError !== undefined) throw faultError;

  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
  return {
    ratePerSecond,
    seconds: seconds(),
    calls,
    allowed,
    refused,
    unguarded,
    failed,
    failedAtSeconds,
    failures,
    latencyMs: { p50: at(0.5), p99: at(0.99), max: Math.round(sorted[sorted.length - 1]! * 10) / 10 },
    faults: ran,
  };
}
