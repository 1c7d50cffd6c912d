/**
 * The one judgement of an IaaS pool as a CREATE would judge it (the shape rules 1-4 and
 * the parent-NIC rule of Spiderpool's IaaS-pool webhook): the webhook's CREATE and ratcheted UPDATE, `audit` and the
 * pool cache's violation gauges all call it, so they can never disagree (after Gatekeeper's
 * audit, which runs the webhook's constraint code on stored objects).
 */
import { pairFindings, type PoolDirectory } from './pool-pair.js';
import { shapeFindings } from './pool-shape.js';
import { iaasProvider, type SpiderIPPool } from '../spiderpool/pool.js';
import type { Findings, Violation } from './ratchet.js';

/**
 * Every rule of one IaaS pool on its own (shape) and with its dual-stack partners in
 * `pools` (the caller checks that it is an IaaS pool).
 *
 * @param name the pool's name (`metadata.name`, or the request's name).
 * @returns violations (each with its `rule`, `key` and field error) and warnings.
 */
export function judgePool(pool: SpiderIPPool, name: string, pools: PoolDirectory): Findings {
  const shape = shapeFindings(pool);
  const pair = pairFindings(pool, name, pools);
  return { violations: [...shape.violations, ...pair.violations], warnings: [...shape.warnings, ...pair.warnings] };
}

/**
 * A stored pool judged as a CREATE of it would be (`audit`, the cache's gauges): every rule
 * for an IaaS pool, nothing for a traditional one (the webhook does not judge those).
 */
export function storedPoolViolations(pool: SpiderIPPool, name: string, pools: PoolDirectory): Violation[] {
  return iaasProvider(pool) === undefined ? [] : judgePool(pool, name, pools).violations;
}
