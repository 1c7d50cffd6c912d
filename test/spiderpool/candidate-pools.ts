/** SpiderIPPools for the candidate-pool tests, in a synced PoolIndex. */
import { PoolIndex } from '../../src/store/pool-index.js';
import { spiderIPPool } from '../helpers/pools.js';

export const IAAS = 'ipam.spidernet.io/iaas-provider';
export const PAIR = 'ipam.spidernet.io/pair-pool';

export interface PoolSpec {
  version?: 4 | 6;
  iaas?: boolean;
  pair?: string;
  isDefault?: boolean;
}

/** A SpiderIPPool object as the API server stores it (the shared builder, with a subnet and range of its version). */
export function poolObject(name: string, { version = 4, iaas = false, pair, isDefault }: PoolSpec = {}): Record<string, any> {
  return spiderIPPool(name, {
    ...(iaas ? { provider: 'example-cloud' } : {}),
    ...(pair !== undefined ? { pair } : {}),
    version,
    subnet: version === 4 ? '10.6.0.0/16' : 'fd00:6::/64',
    ips: [version === 4 ? '10.6.0.10-10.6.0.20' : 'fd00:6::10-fd00:6::20'],
    ...(isDefault !== undefined ? { isDefault } : {}),
  });
}

/** A synced index holding `pools` (name → spec). */
export function indexOf(pools: Record<string, PoolSpec>): PoolIndex {
  const index = new PoolIndex();
  index.replaceAll(Object.entries(pools).map(([name, spec]) => poolObject(name, spec)));
  return index;
}

/** The pools most tests use: IaaS, traditional and a dual-stack pair, both versions. */
export const STANDARD: Record<string, PoolSpec> = {
  'iaas-a': { iaas: true },
  'iaas-b': { iaas: true },
  'plain-a': {},
  'plain-b': {},
  'pair-v4': { iaas: true, pair: 'pair-v6' },
  'pair-v6': { version: 6, iaas: true, pair: 'pair-v4' },
  'iaas-v6': { version: 6, iaas: true },
  'plain-v6': { version: 6 },
};
