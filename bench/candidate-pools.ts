/**
 * The candidate pools' in-process figure: the candidate-pool decision for a two-NIC Deployment
 * against a cache of 1 000 SpiderIPPools, with wildcards in both NICs' lists (target: under
 * 50 µs per review). The review is the one the server makes: `createReviewer` with the
 * synced pool index and a known dual-stack setting, the body already parsed.
 */
import { createReviewer } from '../src/rules/registry.js';
import { PoolIndex } from '../src/store/pool-index.js';

/** 1 000 pools: 400 IaaS and 100 traditional IPv4, 10 of the IaaS ones paired with 10 of 500 IPv6. */
export function thousandPools(): PoolIndex {
  const pools: unknown[] = [];
  const pool = (name: string, version: 4 | 6, annotations: Record<string, string>) => ({
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, annotations },
    spec: { ipVersion: version, subnet: version === 4 ? '10.0.0.0/8' : 'fd00::/64', ips: [version === 4 ? '10.0.0.1-10.0.0.9' : 'fd00::1-fd00::9'] },
  });
  const iaas = { 'ipam.spidernet.io/iaas-provider': 'cloud' };
  for (let i = 0; i < 400; i++)
    pools.push(pool(`iaas-${String(i).padStart(3, '0')}`, 4, i < 10 ? { ...iaas, 'ipam.spidernet.io/pair-pool': `iaas-v6-${i}` } : iaas));
  for (let i = 0; i < 100; i++) pools.push(pool(`plain-${String(i).padStart(3, '0')}`, 4, {}));
  for (let i = 0; i < 500; i++) pools.push(pool(`${i % 2 === 0 ? 'iaas' : 'plain'}-v6-${i}`, 6, i % 2 === 0 ? iaas : {}));
  const index = new PoolIndex();
  index.replaceAll(pools);
  return index;
}

/** A Deployment CREATE whose two NICs name pools literally and by `*`, `?` and `[…]` patterns. */
export function twoNicDeploymentReview(): unknown {
  const ippools = [
    { interface: 'eth0', ipv4: ['iaas-00?', 'plain-0[0-4]*'], ipv6: ['iaas-v6-1*', 'plain-v6-1'] },
    { interface: 'net1', ipv4: ['iaas-399', '*-05[^0]'], ipv6: ['*-v6-2?'] },
  ];
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'bench-two-nic',
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      namespace: 'team-a',
      name: 'web',
      operation: 'CREATE',
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'team-a' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' }, annotations: { 'ipam.spidernet.io/ippools': JSON.stringify(ippools) } },
            spec: { containers: [{ name: 'app', image: 'app:1' }] },
          },
        },
      },
    },
  };
}

/**
 * The reviews the micro-benchmark times: the steady state (pools unchanged since the last
 * review of these patterns), after a status-only update of a pool (what Spiderpool writes
 * on every allocation), and the first review after a pool changed what the candidate rules
 * read (every wildcard matched against every pool again, the per-version lists rebuilt).
 * Throws unless the review warns as expected.
 */
export function candidatePoolsBenchCases(): { title: string; run: () => unknown }[] {
  const pools = thousandPools();
  const review = createReviewer({ pools, dualStack: () => ({ known: true, enableIPv6: true }) });
  const body = twoNicDeploymentReview();
  const warnings = review(body).review.response.warnings ?? [];
  if (warnings.length !== 4) throw new Error(`the two-NIC Deployment should warn 4 times, got ${JSON.stringify(warnings)}`);
  const stored = pools.get('plain-099')!;
  // Alternately a default pool and not: a change the candidate rules read.
  const variants = [{ ...stored, spec: { ...stored.spec, default: true } }, stored];
  let turn = 0;
  // An allocation: only the status changes, as Spiderpool writes on every Pod start.
  const allocated = { ...stored, status: { allocatedIPCount: 1 } };
  return [
    { title: 'candidate pools: two-NIC Deployment, 1 000 pools with wildcards', run: () => review(body) },
    {
      title: 'candidate pools: the same, after an allocation in a pool (status write)',
      run: () => {
        pools.upsert(allocated);
        return review(body);
      },
    },
    {
      title: 'candidate pools: the same, first review after a pool changed what the rules read',
      run: () => {
        pools.upsert(variants[turn++ % 2]);
        return review(body);
      },
    },
  ];
}
