/** `audit`: stored pools judged as a CREATE would, grouped by pool, a summary, exit 1 when any. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { auditFromArguments, auditState, renderAudit } from '../../src/cli/audit.js';
import { ClusterState } from '../../src/store/state.js';
import { NO_CLUSTER_FOUND } from '../../src/cluster/kubeconfig-source.js';
import { reviewAdmission } from '../../src/rules/registry.js';
import { buildAdmissionReview, type KubeObject } from '../../src/kubernetes/build.js';
import { spiderIPPool, type PoolSpec } from '../helpers/pools.js';
import { writeKubeconfig } from '../helpers/kubeconfig.js';

const pool = (name: string, spec: PoolSpec = {}): KubeObject => spiderIPPool(name, { ips: ['10.0.0.1-10.0.0.9'], ...spec });
const IAAS = { provider: 'cloud' };
const POOLS = [
  pool('good', { ...IAAS, nic: 'eth0', nodeName: ['w1'] }),
  pool('two-nodes', { ...IAAS, nodeName: ['w1', 'w2'] }),
  pool('v4', { ...IAAS, pair: 'v6' }),
  pool('v6', { version: 6, ips: ['fd00::1-fd00::ff'] }), // a traditional sibling
  pool('traditional', { nodeName: ['a', 'b'] }),
];

describe('audit', () => {
  const report = auditState(ClusterState.of(POOLS).state);

  it('finds what a CREATE of each IaaS pool would refuse, pair checks included', () => {
    expect(report).toMatchObject({ pools: 5, iaasPools: 3, violatingPools: 2, brokenPairs: 1 });
    expect(report.violations.map((v) => [v.pool, v.rule, v.field])).toEqual([
      ['two-nodes', 'nodes-count', 'spec.nodeName'],
      ['two-nodes', 'parent-nic-missing', 'metadata.annotations[ipam.spidernet.io/parent-nic]'],
      ['v4', 'pair-not-iaas', 'metadata.annotations[ipam.spidernet.io/pair-pool]'],
    ]);
  });

  it('agrees with the webhook: each violation is a cause of the CREATE the webhook would refuse', () => {
    const { state } = ClusterState.of(POOLS);
    for (const name of ['two-nodes', 'v4']) {
      const object = POOLS.find((p) => p.metadata!['name'] === name)!;
      const causes = reviewAdmission(buildAdmissionReview({ operation: 'CREATE', object }), { pools: state.pools }).response.status!.details!.causes;
      expect(causes.map((c) => ({ field: c.field, message: c.message }))).toEqual(
        report.violations.filter((v) => v.pool === name).map((v) => ({ field: v.field, message: v.message })),
      );
    }
  });

  it('prints violations grouped by pool and a summary line', () => {
    const lines = renderAudit(report).split('\n');
    expect(lines[0]).toBe('SpiderIPPool "two-nodes":');
    expect(lines[1]).toMatch(/^ {2}spec\.nodeName: Invalid value: lists 2 nodes/);
    expect(lines[2]).toMatch(/^ {2}metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Required value: /);
    expect(lines[3]).toBe('SpiderIPPool "v4":');
    expect(lines[4]).toMatch(/^ {2}metadata\.annotations\[ipam\.spidernet\.io\/pair-pool\]: Invalid value: "v6": names pool "v6", which is not an IaaS pool/);
    expect(lines.slice(5)).toEqual(['3 violations in 2 of 3 IaaS pools, 1 broken dual-stack pair (5 SpiderIPPools in all)', '']);
    expect(renderAudit(auditState(ClusterState.of([POOLS[0]!]).state))).toBe('no violations in 1 IaaS pool (1 SpiderIPPool in all)\n');
  });

  describe('from the command line', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'audit-'));
      await writeFile(path.join(dir, 'pools.yaml'), stringify({ apiVersion: 'v1', kind: 'List', items: POOLS }));
      await writeFile(path.join(dir, 'good.json'), JSON.stringify(POOLS[0]));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('exit 1 with violations, 0 without; -o json for machines', async () => {
      expect(await auditFromArguments({ pools: [path.join(dir, 'pools.yaml')] })).toMatchObject({
        exitCode: 1,
        stdout: expect.stringContaining('3 violations'),
      });
      expect(await auditFromArguments({ pools: [path.join(dir, 'good.json')] })).toEqual({
        exitCode: 0,
        stdout: 'no violations in 1 IaaS pool (1 SpiderIPPool in all)\n',
        stderr: '',
      });
      const json = await auditFromArguments({ pools: [path.join(dir, 'pools.yaml')], output: 'json' });
      expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(report)));
    });

    it('without --pools, the cluster kubectl would use ($KUBECONFIG, --context); unreachable or absent, one line naming it', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as { port: number }).port;
      await new Promise((resolve) => closed.close(resolve));
      const kubeconfig = path.join(dir, 'kubeconfig');
      await writeKubeconfig(kubeconfig, { server: `https://127.0.0.1:${port}`, context: 'lab' });
      const saved = { KUBECONFIG: process.env['KUBECONFIG'], HOME: process.env['HOME'], KUBERNETES_SERVICE_HOST: process.env['KUBERNETES_SERVICE_HOST'] };
      try {
        Object.assign(process.env, { KUBECONFIG: kubeconfig });
        expect(await auditFromArguments({ pools: [] })).toEqual({
          exitCode: 2,
          stdout: '',
          stderr: `error: The connection to the server 127.0.0.1:${port} was refused - did you specify the right host or port? (listing SpiderIPPools; context "lab", server https://127.0.0.1:${port})\n`,
        });
        expect((await auditFromArguments({ pools: [], context: 'prod' })).stderr).toMatch(
          /^error: context was not found for specified context: prod \(in the kubeconfig given by \$KUBECONFIG/,
        );
        delete process.env['KUBECONFIG'];
        delete process.env['KUBERNETES_SERVICE_HOST'];
        process.env['HOME'] = dir;
        expect(await auditFromArguments({ pools: [] })).toEqual({ exitCode: 2, stdout: '', stderr: `error: ${NO_CLUSTER_FOUND}\n` });
      } finally {
        for (const [key, value] of Object.entries(saved))
          if (value === undefined) delete process.env[key];
          else process.env[key] = value;
      }
    });

    it('exit 2 with one line for an unreadable state', async () => {
      expect(await auditFromArguments({ pools: ['/nonexistent'] })).toEqual({
        exitCode: 2,
        stdout: '',
        stderr: 'error: /nonexistent: cannot be read: no such file or folder\n',
      });
    });

    it('exit 2 for --pools without a SpiderIPPool (an empty file, other kinds), saying what it found: a CI gate must not pass on it', async () => {
      const empty = path.join(dir, 'empty.yaml');
      await writeFile(empty, '');
      expect(await auditFromArguments({ pools: [empty] })).toEqual({
        exitCode: 2,
        stdout: '',
        stderr: `error: ${empty} holds no SpiderIPPool (found no object); give SpiderIPPools, e.g. kubectl get spiderippools -o yaml > pools.yaml (an empty List there is fine)\n`,
      });
      const others = path.join(dir, 'others.yaml');
      await writeFile(
        others,
        stringify({ apiVersion: 'v1', kind: 'List', items: [1, 2].map((i) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns${i}` } })) }),
      );
      expect(await auditFromArguments({ pools: [others] })).toMatchObject({
        exitCode: 2,
        stdout: '',
        stderr: expect.stringContaining(`error: ${others} holds no SpiderIPPool (found 2 Namespace);`),
      });
    });

    it('exit 0 for a valid List with no items: kubectl get spiderippools -o yaml of a cluster without pools', async () => {
      const none = path.join(dir, 'none.yaml');
      await writeFile(none, 'apiVersion: v1\nkind: List\nitems: []\n');
      expect(await auditFromArguments({ pools: [none] })).toEqual({
        exitCode: 0,
        stdout: 'no violations in 0 IaaS pools (0 SpiderIPPools in all)\n',
        stderr: '',
      });
    });

    it('-o yaml prints the report as -o json does, in YAML', async () => {
      const { parse } = await import('yaml');
      const asYaml = await auditFromArguments({ pools: [path.join(dir, 'pools.yaml')], output: 'yaml' });
      expect(asYaml.exitCode).toBe(1);
      expect(parse(asYaml.stdout)).toEqual(JSON.parse(JSON.stringify(report)));
    });
  });
});
