/**
 * The fault run's load: guarded writes sent to the API server at a steady rate (open
 * loop: one call every 1/rate seconds whatever the previous ones do) while faults are
 * applied one after the other, each call judged by what the webhook must answer.
 *
 * Calls cycle through both webhooks: an allowed write (a label on the IaaS node pool
 * "fault-pool": stored, HTTP 200), and two that break a rule, each answered as its rule's
 * enforcement action says (test/helpers/rule-outcome.ts; `Deny` unless told otherwise):
 * the same pool turned global (mode-fixed, a server-side dry run: HTTP 422 with the
 * webhook's spec.nodeName cause) and a `spiderpool-conf` with httpRequestTimeout 100s
 * (conf-yml, dry run: 422 with its cause). Anything else is a failed admission call:
 * "failed calling webhook" (500), a timeout, a transport error, a refusal where an
 * allowance was due, or an answer of an action not due.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnforcementAction } from '../../src/admission/enforcement.js';
import { ruleOutcome } from '../helpers/rule-outcome.js';
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
  /** Rule-breaking writes refused by their rule (`Deny`). */
  refused: number;
  /** Rule-breaking writes let through with their rule's warning (`Warn`). */
  warned: number;
  /** Rule-breaking writes let through without it (`Audit`). */
  audited: number;
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
/** The causes of the loop's rule-breaking writes, as refusals and warnings name them. */
const MODE_CAUSE = 'spec.nodeName: Forbidden: ';
const CONF_CAUSE = 'data[conf.yml].iaasNetworkProvider.httpRequestTimeout: Invalid value: ';
/** An answer as a failure shows it: status, warnings, the start of the body. */
const shown = (r: ApiResponse): string =>
  `HTTP ${r.status}${r.warnings.length > 0 ? ` (warnings: ${r.warnings.join('; ').slice(0, 300)})` : ''}: ${r.body.slice(0, 300)}`;
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
    actions = () => ['Deny'],
  }: {
    ratePerSecond: number;
    faults: readonly Fault[];
    settleMs?: number;
    /** Each fault's bound (default 240 s): one that has not resolved by then fails the run. */
    maxFaultMs?: number;
    /**
     * While no webhook configuration exists (before an install writes it, after an
     * uninstall removed it) nothing is guarded: a rule-breaking write let through without
     * its warning (HTTP 200) then counts as `unguarded`, not failed, unless `Audit` is due.
     * Every other answer is judged as without it.
     */
    unguardedOk?: boolean;
    /** The actions the webhook may take on the rule-breaking writes, asked as each is sent (an upgrade changes them). */
    actions?: () => readonly EnforcementAction[];
  },
): Promise<FaultRunResult> {
  const start = performance.now();
  const seconds = () => Math.round((performance.now() - start) / 100) / 10;
  const latencies: number[] = [];
  const failures: FaultRunResult['failures'] = [];
  const failedAtSeconds: number[] = [];
  let calls = 0;
  const counts = { allowed: 0, refused: 0, warned: 0, audited: 0, unguarded: 0, failed: 0 };
  const inFlight = new Set<Promise<void>>();

  /** Sends call `n` and judges its answer: the outcome, and what came back when it failed. */
  const judged = async (n: number): Promise<{ outcome: keyof typeof counts; what?: string }> => {
    if (n % 3 === 0) {
      const r = await client.send('PATCH', POOL_PATH, { metadata: { labels: { 'fault-run': String(n) } } }, MERGE_PATCH);
      return r.status === 200 ? { outcome: 'allowed' } : { outcome: 'failed', what: shown(r) };
    }
    const due = actions();
    const [r, cause]: [ApiResponse, string] =
      n % 3 === 1
        ? [await client.send('PATCH', `${POOL_PATH}?dryRun=All`, { spec: { nodeName: null } }, MERGE_PATCH), MODE_CAUSE]
        : [await client.send('PATCH', `${CONF_PATH}?dryRun=All`, { data: { 'conf.yml': REFUSED_CONF } }, MERGE_PATCH), CONF_CAUSE];
    const outcome = ruleOutcome(r, cause, due, unguardedOk);
    return outcome === 'failed' ? { outcome, what: `${shown(r)} (due: ${due.join(' or ')})` } : { outcome };
  };

  const call = async (n: number): Promise<void> => {
    const sent = performance.now();
    const sentAt = seconds();
    const { outcome, what } = await judged(n).catch((e: Error) => ({ outcome: 'failed' as const, what: e.message }));
    latencies.push(performance.now() - sent);
    counts[outcome]++;
    if (outcome !== 'failed') return;
    failedAtSeconds.push(sentAt);
    if (failures.length < 20) failures.push({ call: n, kind: n % 3 === 0 ? 'allowed' : 'refused', atSeconds: seconds(), what: what ?? '' });
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
    ...counts,
    failedAtSeconds,
    failures,
    latencyMs: { p50: at(0.5), p99: at(0.99), max: Math.round(sorted[sorted.length - 1]! * 10) / 10 },
    faults: ran,
  };
}
