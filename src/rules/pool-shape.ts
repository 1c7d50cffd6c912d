/**
 * The shape of one IaaS pool on its own (rules 1-3 of the shape): the provider annotation
 * names a provider, a node pool is pinned to exactly one node and names the parent NIC
 * its sub-ENIs hang from. Spiderpool's IaaS-pool validating webhook has the same rules
 * (`pkg/ippoolmanager/ippool_validate.go`); each rule, with its policy twin, is in
 * pool-rules/. Each returns {@link Violation}s so that UPDATEs can be ratcheted.
 */
import type { SpiderIPPool } from '../spiderpool/pool.js';
import type { Findings, Violation } from './ratchet.js';
import { nodeList } from './pool-rules/nodes.js';
import { parentNic } from './pool-rules/parent-nic.js';
import { emptyProvider } from './pool-rules/provider.js';

/**
 * Rules 1-3 for an IaaS pool (the caller checks that it is one).
 *
 * @returns the violations (field paths such as `spec.nodeName[1]` or
 *   `metadata.annotations[ipam.spidernet.io/parent-nic]`) and warnings as `<field>: <text>`.
 */
export function shapeFindings(pool: SpiderIPPool): Findings {
  const nic = parentNic(pool);
  const violations = [emptyProvider(pool), ...nodeList(pool), ...nic.violations].filter((v): v is Violation => v !== undefined);
  return { violations, warnings: nic.warnings };
}
