/**
 * Candidate-pool warnings against the real kube-apiserver with the real kubectl: candidate-pool category
 * warnings on workloads, Pods and Namespaces, sent only for objects carrying a pool
 * annotation (matchConditions), never blocking a write (failurePolicy: Ignore), and the
 * spiderpool-conf watch that decides whether a paired IaaS pool ranks first, readable with
 * the namespaced, resourceNames-restricted Role of deploy/base/rbac.yaml.
 */
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { startCluster, type Cluster } from './harness.js';
import { until } from '../../helpers/until.js';
import type { Finished } from './processes.js';
import { poolObject as pool } from '../../spiderpool/candidate-pools.js';

const IPPOOLS = 'ipam.spidernet.io/ippools';
const MIXED_WARNING =
  'Warning: spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback';

let cluster: Cluster;

function spiderpoolConf(enableIPv6: boolean) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
    data: { 'conf.yml': `ipamUnixSocketPath: /var/run/spidernet/spiderpool.sock\nenableIPv4: true\nenableIPv6: ${enableIPv6}\n` },
  };
}

function deployment(name: string, annotations: Record<string, string> | undefined) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(annotations ? { annotations } : {}) },
        spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
      },
    },
  };
}

const mixedPools = { [IPPOOLS]: JSON.stringify([{ interface: 'eth0', ipv4: ['iaas-a', 'plain-b'] }]) };

function pod(name: string, annotations?: Record<string, string>, owner?: Record<string, unknown>) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}), ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
  };
}

function expectOk(result: Finished): void {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('Error') });
}

/** Waits until a server-side dry run of `manifest` prints `warning` (the caches have caught up). */
async function untilWarned(manifest: Record<string, unknown>, warning: string | RegExp): Promise<Finished> {
  let last: Finished | undefined;
  return until(
    async () => {
      last = await cluster.apply(manifest, ['--dry-run=server']);
      const seen = typeof warning === 'string' ? last.stderr.includes(warning) : warning.test(last.stderr);
      return seen ? last : undefined;
    },
    `kubectl to print ${String(warning)}`,
    { timeoutMs: 30_000, intervalMs: 250, describe: () => `${last?.stdout ?? ''}${last?.stderr ?? ''}` },
  );
}

beforeAll(async () => {
  cluster = await startCluster();
  for (const p of [
    pool('iaas-a', { iaas: true }),
    pool('plain-b'),
    pool('pair-v4', { iaas: true, pair: 'pair-v6' }),
    pool('pair-v6', { iaas: true, version: 6, pair: 'pair-v4' }),
  ]) {
    expectOk(await cluster.apply(p));
  }
  expectOk(await cluster.apply(spiderpoolConf(false)));
  // No controller-manager here to make it; Pods need their ServiceAccount.
  expectOk(await cluster.kubectl(['create', 'serviceaccount', 'default', '-n', 'default']));
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('a Deployment whose Pods would mix pool categories', () => {
  it('kubectl apply prints the Warning: line and creates the Deployment', async () => {
    await untilWarned(deployment('web', mixedPools), MIXED_WARNING);
    const before = cluster.webhook.reviewsOf('web').length;
    const result = await cluster.apply(deployment('web', mixedPools));
    expect(result.code).toBe(0);
    expect(result.stderr.split('\n')).toContain(MIXED_WARNING);
    expect(result.stdout).toBe('deployment.apps/web created\n');
    expect(await cluster.get('deployment', 'web', 'default')).toBeDefined();
    const logged = await until(() => cluster.webhook.reviewsOf('web')[before], 'the review to be logged');
    expect(logged).toMatchObject({ path: '/validate-workload', kind: 'Deployment.apps', operation: 'CREATE', allowed: true });
  });

  it('an UPDATE that keeps the mix warns again; one that fixes it does not', async () => {
    const kept = await cluster.apply(deployment('web', { ...mixedPools, 'example.com/rev': '2' }));
    expect(kept.code).toBe(0);
    expect(kept.stderr).toContain(MIXED_WARNING);
    const fixed = await cluster.apply(deployment('web', { [IPPOOLS]: JSON.stringify([{ interface: 'eth0', ipv4: ['iaas-a'] }]) }));
    expectOk(fixed);
    expect(fixed.stderr).toBe('');
  });

  it('wildcards expand against the pools of that IP version', async () => {
    const result = await cluster.apply(deployment('web-wild', { [IPPOOLS]: JSON.stringify([{ interface: 'eth0', ipv4: ['iaas-*', 'plain-?'] }]) }));
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(MIXED_WARNING);
  });
});

describe('dual-stack from the watched spiderpool-conf', () => {
  const paired = deployment('web-pair', { [IPPOOLS]: JSON.stringify([{ interface: 'eth0', ipv4: ['pair-v4', 'iaas-a'] }]) });
  const pairedWarning =
    'Warning: spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only paired IaaS primary pools [pair-v4] will be used; IaaS pools [iaas-a] are ignored, with no fallback';

  it('enableIPv6 on: the paired primary pool ranks first', async () => {
    expectOk(await cluster.apply(spiderpoolConf(true)));
    await untilWarned(paired, pairedWarning);
  });

  it('enableIPv6 off: a paired pool is an IaaS pool like the other, no warning', async () => {
    expectOk(await cluster.apply(spiderpoolConf(false)));
    await until(async () => (await cluster.apply(paired, ['--dry-run=server'])).stderr === '', 'the warning to go once enableIPv6 is off', {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
  });
});

describe('only objects carrying a pool annotation reach the webhook', () => {
  it('a Pod without pool annotations, and a controller-owned Pod with them, are never reviewed', async () => {
    expectOk(await cluster.apply(pod('plain-pod')));
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: '6f9d9a53-6b0a-4d5e-8d3b-2c2b8e0f6a11', controller: true };
    expectOk(await cluster.apply(pod('owned-pod', mixedPools, owner)));
    expectOk(await cluster.apply(deployment('plain-web', undefined)));
    // A Pod that does reach the webhook, after them: its log line proves the log was read past the writes above.
    const before = cluster.webhook.reviewsOf('annotated-pod').length;
    const annotated = await cluster.apply(pod('annotated-pod', mixedPools));
    expect(annotated.code).toBe(0);
    expect(annotated.stderr).toContain(MIXED_WARNING);
    const logged = await until(() => cluster.webhook.reviewsOf('annotated-pod')[before], "the annotated Pod's review to be logged");
    expect(logged).toMatchObject({ path: '/validate-pod', kind: 'Pod', operation: 'CREATE' });
    expect(cluster.webhook.reviewsOf('plain-pod')).toEqual([]);
    expect(cluster.webhook.reviewsOf('owned-pod')).toEqual([]);
    expect(cluster.webhook.reviewsOf('plain-web')).toEqual([]);
  });
});

describe('Namespace default pools', () => {
  it('a Namespace whose default IPv4 pools mix categories', async () => {
    const ns = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a', annotations: { 'ipam.spidernet.io/default-ipv4-ippool': '["plain-b","iaas-a"]' } },
    };
    const result = await cluster.apply(ns);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'Warning: spiderpool: every NIC IPv4 (ipam.spidernet.io/default-ipv4-ippool): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback',
    );
  });
});

describe('cluster default pools (spec.default: true)', () => {
  it('a traditional default pool beside an IaaS default pool is warned through its own webhook', async () => {
    const withDefault = (p: Record<string, any>) => ({ ...p, spec: { ...p['spec'], default: true } });
    const warning =
      'Warning: spiderpool: spec.default: Pod NICs left to the cluster default IPv4 pools: only IaaS pools [iaas-default] will be used; traditional pools [plain-default] are ignored, with no fallback';
    expectOk(await cluster.apply(withDefault(pool('iaas-default', { iaas: true }))));
    await untilWarned(withDefault(pool('plain-default')), warning); // the cache has seen iaas-default
    const before = cluster.webhook.reviewsOf('plain-default').length;
    const result = await cluster.apply(withDefault(pool('plain-default')));
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(warning);
    const logged = await until(() => cluster.webhook.reviewsOf('plain-default')[before], 'the default pool review to be logged');
    expect(logged).toMatchObject({ path: '/validate-spiderippool', operation: 'CREATE', allowed: true });
    // A traditional pool that is no default never reaches the webhook.
    expectOk(await cluster.apply(pool('plain-other')));
    expect(cluster.webhook.reviewsOf('plain-other')).toEqual([]);
  });
});

describe('the webhook stopped: writes go through (failurePolicy: Ignore)', () => {
  afterAll(async () => {
    await cluster?.webhook.start();
  });

  it('kubectl apply of a Deployment with mixed pools succeeds, without a warning', async () => {
    await cluster.webhook.stop();
    const result = await cluster.apply(deployment('web-outage', mixedPools));
    expectOk(result);
    expect(result.stderr).toBe('');
    expect(await cluster.get('deployment', 'web-outage', 'default')).toBeDefined();
  });
});

describe("deploy/base/rbac.yaml's spiderpool-conf reader", () => {
  const as = '--as=system:serviceaccount:spiderpool-iaas-webhook:spiderpool-iaas-webhook';
  const raw = (query: string) => cluster.kubectl(['get', '--raw', `/api/v1/namespaces/kube-system/configmaps${query}`, as]);

  beforeAll(async () => {
    const docs = parseAllDocuments(await readFile(new URL('../../../deploy/base/rbac.yaml', import.meta.url), 'utf8')).map(
      (d) => d.toJS() as Record<string, any>,
    );
    expectOk(await cluster.kubectl(['create', 'namespace', 'spiderpool-iaas-webhook']));
    expectOk(await cluster.kubectl(['create', 'serviceaccount', 'spiderpool-iaas-webhook', '-n', 'spiderpool-iaas-webhook']));
    for (const doc of docs.filter((d) => d['kind'] === 'Role' || d['kind'] === 'RoleBinding')) expectOk(await cluster.apply(doc));
  });

  it('lists and watches spiderpool-conf by its metadata.name field selector', async () => {
    const listed = await raw('?fieldSelector=metadata.name%3Dspiderpool-conf');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).items.map((i: any) => i.metadata.name)).toEqual(['spiderpool-conf']);
    const watched = await raw('?fieldSelector=metadata.name%3Dspiderpool-conf&watch=true&timeoutSeconds=1');
    expect(watched.code).toBe(0);
    expect(JSON.parse(watched.stdout.split('\n')[0]!)).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'spiderpool-conf' } } });
  });

  it('may not list or watch other ConfigMaps', async () => {
    for (const query of ['', '?watch=true&timeoutSeconds=1', '?fieldSelector=metadata.name%3Dother-conf']) {
      const refused = await raw(query);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/Forbidden|forbidden/);
    }
  });
});
