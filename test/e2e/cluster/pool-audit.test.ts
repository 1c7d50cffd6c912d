/**
 * The in-use and parent-NIC pool rules and audit against the real kube-apiserver and kubectl: the new pool rules through
 * `kubectl apply`; pools created while the webhook was not registered found by
 * `audit --kubeconfig` and by the server's violation gauges; and `review --pools` of the
 * same manifests printing what kubectl printed for the API server's decisions.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { startCluster, waitUntilWebhookCalled, type Cluster } from './harness.js';
import { httpsRequest } from '../../helpers/client.js';
import { spiderIPPool } from '../../helpers/pools.js';
import { until } from '../../helpers/until.js';
import { FILES_AS_STATE_NOTE } from '../../../src/cli/review.js';

const PROVIDER = 'ipam.spidernet.io/iaas-provider';
const NIC = 'ipam.spidernet.io/parent-nic';
const WEBHOOK_CONFIGURATION = 'validatingwebhookconfiguration/spiderpool-iaas-webhook';
/** review's line, after a refused pool, on whether the ValidatingAdmissionPolicy refuses it too: kubectl has no such line. */
const POLICY_NOTE = /^note: SpiderIPPool "[^"\n]+": [^\n]*ValidatingAdmissionPolicy [^\n]*\n/gm;

/** review's answer as kubectl prints it, its policy notes apart (one for each refused pool). */
function asKubectl(review: { code: number | null; stdout: string; stderr: string }): {
  code: number | null;
  stdout: string;
  stderr: string;
  policyNotes: number;
} {
  return {
    code: review.code,
    stdout: review.stdout,
    stderr: review.stderr.replace(POLICY_NOTE, ''),
    policyNotes: review.stderr.match(POLICY_NOTE)?.length ?? 0,
  };
}

let cluster: Cluster;
let dir: string;

beforeAll(async () => {
  cluster = await startCluster();
  dir = await mkdtemp(path.join(cluster.workDir, 'manifests-'));
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

interface PoolOptions {
  iaas?: boolean;
  nic?: string;
  nodeName?: string[];
  pair?: string;
  version?: 4 | 6;
  ips?: string[];
  provider?: string;
}

function pool(name: string, { iaas = true, nic, nodeName, pair, version = 4, ips, provider = 'example-cloud' }: PoolOptions = {}): Record<string, unknown> {
  return spiderIPPool(name, {
    ...(iaas ? { provider } : {}),
    ...(nic !== undefined ? { nic } : {}),
    ...(pair ? { pair } : {}),
    version,
    subnet: version === 4 ? '10.7.0.0/16' : 'fd07::/64',
    ips: ips ?? (version === 4 ? ['10.7.0.10-10.7.0.20'] : ['fd07::10-fd07::20']),
    ...(nodeName ? { nodeName } : {}),
  });
}

/** Sets the pool's status through the status subresource, as Spiderpool's IPAM does on allocation. */
async function allocate(name: string, count: number): Promise<void> {
  const status = count > 0 ? { allocatedIPCount: count, allocatedIPs: '{"10.7.0.10":{"pod":"default/web-0"}}' } : { allocatedIPCount: 0, allocatedIPs: '{}' };
  const result = await cluster.kubectl(['patch', 'spiderippool', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  expect(result).toMatchObject({ code: 0 });
}

async function expectCreated(manifest: Record<string, unknown>): Promise<void> {
  const result = await cluster.apply(manifest);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('Error') });
}

describe('the new rules through kubectl apply', () => {
  it('a parent NIC that lists several NICs is refused, on a global pool too', async () => {
    const result = await cluster.apply(pool('nic-comma', { nic: 'eth0,eth1' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^The SpiderIPPool "nic-comma" is invalid: metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Invalid value: "eth0,eth1": holds a ","/m,
    );
    expect(await cluster.get('spiderippool', 'nic-comma')).toBeUndefined();
  });

  it('provider and parent NIC are fixed while the pool has addresses in use, free without', async () => {
    await expectCreated(pool('in-use', { nic: 'eth0', nodeName: ['worker-1'] }));
    await allocate('in-use', 2);
    const nic = await cluster.apply(pool('in-use', { nic: 'eth1', nodeName: ['worker-1'] }));
    expect(nic.code).toBe(1);
    expect(nic.stderr).toMatch(
      /^The SpiderIPPool "in-use" is invalid: metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Forbidden: changing the annotation from "eth0" to "eth1" is refused while IaaS pool "in-use" has addresses in use \(status\.allocatedIPCount 2\): the sub-ENIs already attached for its Pods were made by provider "example-cloud" on NIC "eth0".*move the Pods off this pool first, or create a new pool with "eth1"$/m,
    );
    const provider = await cluster.apply(pool('in-use', { nic: 'eth0', nodeName: ['worker-1'], provider: 'other-cloud' }));
    expect(provider.code).toBe(1);
    expect(provider.stderr).toContain(
      'The SpiderIPPool "in-use" is invalid: metadata.annotations[ipam.spidernet.io/iaas-provider]: Forbidden: changing the annotation from "example-cloud" to "other-cloud" is refused while',
    );
    await allocate('in-use', 0);
    await expectCreated(pool('in-use', { nic: 'eth1', nodeName: ['worker-1'], provider: 'other-cloud' }));
    expect((await cluster.get('spiderippool', 'in-use'))!['metadata'].annotations).toMatchObject({ [NIC]: 'eth1', [PROVIDER]: 'other-cloud' });
  });
});

describe('pools created while the webhook was not registered', () => {
  const legacy = [
    pool('legacy-two-nodes', { nic: 'eth0', nodeName: ['worker-1', 'worker-2'] }),
    pool('legacy-nic', { nic: 'eth0 eth1' }),
    pool('legacy-v4', { pair: 'legacy-v6' }),
    pool('legacy-v6', { iaas: false, version: 6 }),
  ];

  beforeAll(async () => {
    expect(await cluster.kubectl(['delete', WEBHOOK_CONFIGURATION])).toMatchObject({ code: 0 });
    // The API server drops the webhook through an informer: wait until a bad pool gets through.
    await until(
      async () => (await cluster.apply(pool('legacy-probe', { nodeName: ['a', 'b'] }), ['--dry-run=server'])).code === 0,
      'the webhook to be unregistered',
      {
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    for (const manifest of legacy) await expectCreated(manifest);
    await cluster.register();
    await waitUntilWebhookCalled(cluster);
  }, 120_000);

  it('audit --kubeconfig lists them, grouped by pool, and exits 1', async () => {
    const result = await cluster.cli(['audit', `--kubeconfig=${cluster.apiServer.kubeconfig}`]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('SpiderIPPool '))).toEqual([
      'SpiderIPPool "legacy-nic":',
      'SpiderIPPool "legacy-two-nodes":',
      'SpiderIPPool "legacy-v4":',
    ]);
    expect(result.stdout).toMatch(/^ {2}metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Invalid value: "eth0 eth1": contains whitespace/m);
    expect(result.stdout).toMatch(/^ {2}spec\.nodeName: Invalid value: lists 2 nodes/m);
    expect(result.stdout).toMatch(
      /^ {2}metadata\.annotations\[ipam\.spidernet\.io\/pair-pool\]: Invalid value: "legacy-v6": names pool "legacy-v6", which is not an IaaS pool/m,
    );
    expect(lines.at(-1)).toMatch(/^3 violations in 3 of \d+ IaaS pools, 1 broken dual-stack pair \(\d+ SpiderIPPools in all\)$/);
    const json = JSON.parse((await cluster.cli(['audit', `--kubeconfig=${cluster.apiServer.kubeconfig}`, '-o', 'json'])).stdout);
    expect(json).toMatchObject({ violatingPools: 3, brokenPairs: 1 });
  });

  it("the webhook's gauges count them, and follow a traditional sibling created later (it never reaches the webhook)", async () => {
    const ca = await readFile(path.join(cluster.certDir, 'ca.crt'), 'utf8');
    const metrics = async () =>
      (await httpsRequest({ port: cluster.webhook.port, ca, servername: 'spiderpool-iaas-webhook.spiderpool-iaas-webhook.svc', path: '/metrics' })).body;
    const gauge = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"[\]]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    await until(async () => gauge(await metrics(), 'spiderpool_iaas_webhook_pool_broken_pairs') === 1, 'the gauge to count the broken pair', {
      timeoutMs: 10_000,
    });
    const text = await metrics();
    expect(gauge(text, 'spiderpool_iaas_webhook_pool_violations{rule="nodes-count"}')).toBe(1);
    expect(gauge(text, 'spiderpool_iaas_webhook_pool_violations{rule="parent-nic-one"}')).toBe(1);
    expect(gauge(text, 'spiderpool_iaas_webhook_pool_violations{rule="pair-not-iaas"}')).toBe(1);

    const late = await cluster.apply(pool('late-v4', { pair: 'late-v6' }));
    expect(late).toMatchObject({ code: 0, stderr: expect.stringContaining('pair pool "late-v6" does not exist yet') });
    await expectCreated(pool('late-v6', { iaas: false, version: 6 }));
    await until(async () => gauge(await metrics(), 'spiderpool_iaas_webhook_pool_broken_pairs') === 2, 'the gauge to count the late broken pair', {
      timeoutMs: 10_000,
    });
    expect(gauge(await metrics(), 'spiderpool_iaas_webhook_pool_violations{rule="pair-not-iaas"}')).toBe(2);
    expect(await cluster.kubectl(['delete', 'spiderippool', 'late-v6'])).toMatchObject({ code: 0 });
    await until(async () => gauge(await metrics(), 'spiderpool_iaas_webhook_pool_broken_pairs') === 1, 'the gauge to drop the late pair', {
      timeoutMs: 10_000,
    });
  });
});

describe('review --pools decides as the API server does', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['a good node pool', pool('agree-good', { nic: 'eth0', nodeName: ['worker-1'] })],
    ['two nodes and no NIC', pool('agree-bad', { nodeName: ['worker-1', 'worker-2'] })],
    ['a NIC with a comma', pool('agree-comma', { nic: 'eth0,eth1', nodeName: ['worker-1'] })],
    ['a pair with a smaller IPv6 side', pool('agree-v4', { pair: 'agree-v6', ips: ['10.7.1.1-10.7.1.100'] })],
    ['a pair that matches', pool('agree-ok-v4', { pair: 'agree-v6', ips: ['10.7.1.1-10.7.1.5'] })],
    ['a pool named by a pool of the same version', pool('agree-v4-target', { ips: ['10.7.2.1-10.7.2.5'] })],
    ['an update of a pool in use changing its NIC', pool('agree-in-use', { nic: 'eth1', nodeName: ['worker-1'] })],
    ['an update of a pool in use keeping its NIC', pool('agree-in-use', { nic: 'eth0', nodeName: ['worker-2'] })],
  ];

  beforeAll(async () => {
    await expectCreated(pool('agree-v6', { version: 6, ips: ['fd07:1::1-fd07:1::10'] }));
    await expectCreated(pool('agree-v4-other', { pair: 'agree-v4-target' }));
    await expectCreated(pool('agree-in-use', { nic: 'eth0', nodeName: ['worker-1'] }));
    await allocate('agree-in-use', 3);
    // The webhook's cache follows by watch; wait until it knows the last pool's pair.
    await until(
      async () => (await cluster.apply(pool('agree-probe', { pair: 'agree-v6', ips: ['10.7.3.1-10.7.3.100'] }), ['--dry-run=server'])).code === 1,
      'the webhook cache to see agree-v6',
      {
        timeoutMs: 10_000,
      },
    );
  }, 60_000);

  it.each(cases)('%s: the same exit code, stdout and stderr as kubectl apply --dry-run=server', async (_what, manifest) => {
    const state = path.join(dir, 'state.json');
    const listed = await cluster.kubectl(['get', 'spiderippools', '-o', 'json']);
    await writeFile(state, listed.stdout);
    const file = path.join(dir, `${(manifest['metadata'] as { name: string }).name}.yaml`);
    await writeFile(file, stringify(manifest));
    const kubectl = await cluster.kubectl(['apply', '-f', file, '--dry-run=server']);
    // No --operation: an object the state holds is the UPDATE kubectl apply sends.
    const review = await cluster.cli(['review', file, `--pools=${state}`]);
    const refused = kubectl.code === 1 ? 1 : 0;
    expect(asKubectl(review)).toEqual({ code: kubectl.code, stdout: kubectl.stdout, stderr: kubectl.stderr, policyNotes: refused });
    const fromCluster = await cluster.cli(['review', file, `--kubeconfig=${cluster.apiServer.kubeconfig}`]);
    expect(asKubectl(fromCluster)).toMatchObject({ code: kubectl.code, stderr: kubectl.stderr, policyNotes: refused });
  });

  it("a file of several objects, two refused: kubectl's aggregate of errors, the same from review", async () => {
    const file = path.join(dir, 'several.yaml');
    const objects = [
      pool('agree-many-a', { nodeName: ['w1', 'w2'], nic: 'eth0' }),
      pool('agree-many-b', { nic: 'a,b' }),
      pool('agree-many-c', { nic: 'eth0', nodeName: ['w1'] }),
    ];
    await writeFile(file, objects.map((o) => stringify(o)).join('---\n'));
    const state = path.join(dir, 'state.json');
    await writeFile(state, (await cluster.kubectl(['get', 'spiderippools', '-o', 'json'])).stdout);
    const kubectl = await cluster.kubectl(['apply', '-f', file, '--dry-run=server']);
    const review = await cluster.cli(['review', file, `--pools=${state}`]);
    expect(kubectl.code).toBe(1);
    expect(asKubectl(review)).toEqual({ code: kubectl.code, stdout: kubectl.stdout, stderr: kubectl.stderr, policyNotes: 2 });
  });

  it.each(['kube-system', 'default'])(
    'spiderpool-conf in %s: reviewed only where the webhook configuration sends it, as by the API server',
    async (namespace) => {
      const file = path.join(dir, `conf-${namespace}.yaml`);
      const conf = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'spiderpool-conf', namespace },
        data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: 100s\n' },
      };
      await writeFile(file, stringify(conf));
      const kubectl = await cluster.kubectl(['apply', '-f', file, '--dry-run=server']);
      expect(kubectl.code).toBe(namespace === 'kube-system' ? 1 : 0);
      const review = await cluster.cli(['review', file]);
      // Where no webhook matches, review says so beside kubectl's own answer: nothing reviewed the write.
      const note =
        namespace === 'kube-system' ? '' : `configmap/spiderpool-conf: not reviewed: no webhook of the configuration matches (namespace "${namespace}")\n`;
      // Without --pools the file is the whole cluster state, and review says so first.
      expect({ code: review.code, stdout: review.stdout, stderr: review.stderr }).toEqual({
        code: kubectl.code,
        stdout: kubectl.stdout,
        stderr: FILES_AS_STATE_NOTE + kubectl.stderr + note,
      });
    },
  );
});
