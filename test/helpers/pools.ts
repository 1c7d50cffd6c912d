/**
 * The one SpiderIPPool builder of the unit tests: only what a test names is set, so each
 * test says what its pool is (IaaS or traditional, node or global, in a pair).
 */
import type { KubeObject } from '../../src/kubernetes/build.js';

export interface PoolSpec {
  /** `ipam.spidernet.io/iaas-provider`: an IaaS pool when given. */
  provider?: string;
  /** `ipam.spidernet.io/parent-nic`. */
  nic?: string;
  /** `ipam.spidernet.io/pair-pool`. */
  pair?: string;
  /** `spec.ipVersion` (default 4). */
  version?: 4 | 6;
  /** `spec.subnet`. */
  subnet?: string;
  ips?: string[];
  nodeName?: string[];
  /** `spec.default`: a cluster default pool. */
  isDefault?: boolean;
  resourceVersion?: string;
  status?: unknown;
}

/** A `spiderpool.spidernet.io/v2beta1` SpiderIPPool named `name`. */
export function spiderIPPool(
  name: string,
  { provider, nic, pair, version = 4, subnet, ips, nodeName, isDefault, resourceVersion, status }: PoolSpec = {},
): KubeObject {
  const annotations = {
    ...(provider !== undefined ? { 'ipam.spidernet.io/iaas-provider': provider } : {}),
    ...(nic !== undefined ? { 'ipam.spidernet.io/parent-nic': nic } : {}),
    ...(pair !== undefined ? { 'ipam.spidernet.io/pair-pool': pair } : {}),
  };
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, ...(resourceVersion !== undefined ? { resourceVersion } : {}), annotations },
    spec: {
      ipVersion: version,
      ...(subnet !== undefined ? { subnet } : {}),
      ...(ips !== undefined ? { ips } : {}),
      ...(nodeName !== undefined ? { nodeName } : {}),
      ...(isDefault !== undefined ? { default: isDefault } : {}),
    },
    ...(status !== undefined ? { status } : {}),
  };
}
