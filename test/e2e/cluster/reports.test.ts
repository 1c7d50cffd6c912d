/**
 * The OpenReports reports on the real kube-apiserver, with OpenReports' own CRDs (read from
 * ../shared/openreports/crds/, never copied): two replicas, one leading through the Lease;
 * pools stored while the webhook was not registered listed in their rules' ClusterReports;
 * a fix followed; the leader stopped, the other takes over. (Garbage collection of the
 * reports on uninstall needs kube-controller-manager, which this API server runs without.)
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, type Cluster } from './harness.js';
import { WebhookProcess, ROOT } from './webhook.js';
import { httpsRequest, sampleValue } from '../../helpers/client.js';
import { spiderIPPool } from '../../helpers/pools.js';
import { until } from '../../helpers/until.js';

const CRDS = path.resolve(ROOT, '../shared/openreports/crds/');
const NAMESPACE = 'spiderpool-iaas-webhook';
const OWNER = 'spiderpool-iaas-webhook';
const REPORT = 'spiderpool-iaas-webhook-parent-nic-one';

let cluster: Cluster;
const replicas: WebhookProcess[] = [];

const pool = (name: string, nic: string) =>
  spiderIPPool(name, { provider: 'example-cloud', nic, version: 4, subnet: '10.9.0.0/16', ips: ['10.9.0.10-10.9.0.20'] });
const LEADING = 'leading: this replica keeps the reports';
const STANDING_BY = 'no longer leading: another replica keeps the reports';
/** The running replicas whose last leadership line says they lead. */
const leaders = () => replicas.filter((r) => r.running && r.log.filter((l) => l.msg === LEADING || l.msg === STANDING_BY).pop()?.msg === LEADING);

beforeAll(async () => {
  cluster = await startCluster();
  for (const args of [
    ['apply', '-f', CRDS],
    ['wait', '--for=condition=Established', 'crd/clusterreports.openreports.io', '--timeout=60s'],
    ['create', 'namespace', NAMESPACE],
    ['create', 'clusterrole', OWNER, '--verb=get', '--resource=pods'],
  ]) {
    const result = await cluster.kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
  // Stored while the webhook is not registered: pools that already break a rule.
  expect(await cluster.kubectl(['delete', 'validatingwebhookconfiguration/spiderpool-iaas-webhook'])).toMatchObject({ code: 0 });
  await until(async () => (await cluster.apply(pool('legacy-a', 'eth0,eth1'))).code === 0, 'the webhook to be unregistered', {
    timeoutMs: 30_000,
    intervalMs: 500,
  });
  expect(await cluster.apply(pool('legacy-b', 'eth0,eth1'))).toMatchObject({ code: 0 });
  for (let i = 0; i < 2; i++) {
    const replica = new WebhookProcess(cluster.certDir, cluster.apiServer.kubeconfig, [
      `--namespace=${NAMESPACE}`,
      `--owner-cluster-role=${OWNER}`,
      '--reports=true',
      '--log-level=info',
    ]);
    replicas.push(replica);
    await replica.start();
  }
}, 300_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cluster?.stop();
});

describe('reports on the real API server', () => {
  it("one replica leads and lists the stored pools breaking a rule, owned by the install's ClusterRole", async () => {
    const report = await until(async () => (await cluster.get('clusterreport', REPORT)) ?? false, 'the report', { timeoutMs: 60_000, intervalMs: 500 });
    expect(leaders()).toHaveLength(1);
    expect(report['summary']).toEqual({ pass: 0, fail: 2, warn: 0, error: 0, skip: 0 });
    expect(
      report['results'].map((r: { resources: { name: string }[]; policy: string; rule: string; result: string }) => [
        r.resources[0]!.name,
        r.policy,
        r.rule,
        r.result,
      ]),
    ).toEqual([
      ['legacy-a', 'spiderippool.iaas-webhook.spidernet.io', 'parent-nic-one', 'fail'],
      ['legacy-b', 'spiderippool.iaas-webhook.spidernet.io', 'parent-nic-one', 'fail'],
    ]);
    expect(report['metadata']['ownerReferences']).toEqual([expect.objectContaining({ kind: 'ClusterRole', name: OWNER })]);
    const listed = await cluster.kubectl(['get', 'clusterreports', '-l', 'app.kubernetes.io/managed-by=spiderpool-iaas-webhook']);
    expect(listed.stdout).toMatch(new RegExp(`^${REPORT}\\s+0\\s+2\\s+0\\s+0\\s+0\\s+`, 'm'));
  }, 120_000);

  it('another replica takes over when the leader stops, rewrites nothing that says the same, and follows a fix', async () => {
    const stored = (await cluster.get('clusterreport', REPORT))!;
    const [leader] = leaders();
    await leader!.stop();
    const [next] = await until(() => (leaders().length === 1 ? leaders() : false), 'the other replica to lead', { timeoutMs: 30_000, intervalMs: 200 });
    const ca = await readFile(path.join(cluster.certDir, 'ca.crt'), 'utf8');
    const metrics = async () =>
      (await httpsRequest({ port: next!.port, ca, servername: 'spiderpool-iaas-webhook.spiderpool-iaas-webhook.svc', path: '/metrics' })).body;
    // It has listed the reports (the CRD is known) and compared them with its own; an update would follow at once.
    await until(async () => sampleValue(await metrics(), 'spiderpool_iaas_webhook_reports_crd_installed') === 1, 'the new leader to list the reports', {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const text = await metrics();
    expect(sampleValue(text, 'spiderpool_iaas_webhook_reports_leader')).toBe(1);
    expect(sampleValue(text, 'spiderpool_iaas_webhook_report_writes_total{operation="update",result="success"}')).toBe(0);
    expect((await cluster.get('clusterreport', REPORT))!['metadata']['resourceVersion']).toBe(stored['metadata']['resourceVersion']);
    expect(await cluster.apply(pool('legacy-a', 'eth0'))).toMatchObject({ code: 0 });
    await until(async () => (await cluster.get('clusterreport', REPORT))?.['summary']?.['fail'] === 1, 'the report to follow the fix', {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(await cluster.apply(pool('legacy-b', 'eth1'))).toMatchObject({ code: 0 });
    await until(async () => (await cluster.get('clusterreport', REPORT)) === undefined, 'the report to go with its last violation', {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
  }, 120_000);
});
