/**
 * The API server's stand-in in the attack tests: the refusing webhooks' reviews (SpiderIPPool
 * and spiderpool-conf), one after the other, each on a new connection as the kube-apiserver
 * opens one when it has none idle, checked for the decision each must get.
 */
import { REFUSING_WEBHOOK_TIMEOUT_SECONDS, WEBHOOKS } from '../../src/defaults.js';
import { loadReview } from '../fixtures/load.js';
import { httpsRequest } from './client.js';

/**
 * The refusing webhooks' `timeoutSeconds` in milliseconds: the API server's own deadline, the
 * bound an attack test puts on an answer's time, or on the median of its client's answers where
 * each answer is bounded only loosely (UNHURRIED_ANSWER_MS, test/helpers/unhurried.ts).
 */
export const REFUSING_WEBHOOK_TIMEOUT_MS = REFUSING_WEBHOOK_TIMEOUT_SECONDS * 1_000;

/**
 * The bound on the good client's median answer under attack: the API server's webhook
 * timeout, with twice its margin for a loaded 2-core CI machine (a stalled route still fails it).
 */
export const MEDIAN_ANSWER_BOUND_MS = 2 * REFUSING_WEBHOOK_TIMEOUT_MS;

/** The refusing webhooks' reviews, alternated, with the answer each must get. */
const GUARDED = [
  { path: WEBHOOKS.spiderIPPool.path, body: JSON.stringify(loadReview('pool-update-node-to-global')), allowed: false },
  { path: WEBHOOKS.configMap.path, body: JSON.stringify(loadReview('configmap-update-timeout-100s')), allowed: false },
  { path: WEBHOOKS.configMap.path, body: JSON.stringify(loadReview('configmap-update-timeout-50s')), allowed: true },
];

export interface GuardedRun {
  /** Each review's HTTP status, a 200 with the wrong decision as its body, or the connection error. */
  statuses: (number | string)[];
  latenciesMs: number[];
}

/** The median and the largest of a run's latencies, in milliseconds (the upper median of an even count). */
export function latencySummary(run: GuardedRun): { medianMs: number; maxMs: number } {
  const sorted = [...run.latenciesMs].sort((a, b) => a - b);
  return { medianMs: sorted[sorted.length >> 1]!, maxMs: sorted[sorted.length - 1]! };
}

/** `count` reviews to the server at `port` (from `localAddress` when given), 100 ms apart. */
export async function guardedReviews(port: number, ca: string, count: number, localAddress?: string): Promise<GuardedRun> {
  const run: GuardedRun = { statuses: [], latenciesMs: [] };
  for (let i = 0; i < count; i++) {
    const { path, body, allowed } = GUARDED[i % GUARDED.length]!;
    const sent = performance.now();
    try {
      const reply = await httpsRequest({ port, ca, path, body, ...(localAddress === undefined ? {} : { localAddress }) });
      run.statuses.push(reply.status !== 200 || JSON.parse(reply.body).response.allowed === allowed ? reply.status : reply.body);
    } catch (e) {
      run.statuses.push((e as Error).message);
    }
    run.latenciesMs.push(Math.round(performance.now() - sent));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return run;
}
