/**
 * README "Install" as an operator runs it, with the real kustomize (`kubectl kustomize`)
 * and the real kube-apiserver (test/e2e/cluster/apiserver.ts): the overlays the README
 * shows render and are consistent (test/deploy/consistency.ts); the cert-manager overlay
 * renders without deploy/tls/; step 3's label selector applies everything but the
 * ValidatingWebhookConfiguration and step 5 adds it with the caBundle of `certs`; the
 * uninstall commands remove it all. This API server runs no controllers, nodes or
 * cert-manager, so step 4 (the Deployment becoming Available) and the pods themselves are
 * the one-node cluster test's (test/kube/install.test.ts). The pool cache's errors for a missing
 * CRD (404) and missing RBAC (403) are checked against the same API server.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { checkManifests, type ConsistencyOptions } from '../deploy/consistency.js';
import { parseManifests } from '../deploy/render.js';
import { readmeOverlays, writeOverlayBesideDeploy } from '../deploy/readme-overlays.js';
import { until } from '../helpers/until.js';
import { startApiServer, type ApiServer } from './cluster/apiserver.js';
import { CRD_FILE, CRD_NAME } from './cluster/harness.js';
import { runProcess, type Finished } from './cluster/processes.js';
import { CLI, WebhookProcess, type LogLine } from './cluster/webhook.js';

const execFileAsync = promisify(execFile);
const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';
const SELECTOR = 'app.kubernetes.io/component!=webhook-configuration';

/** What each README overlay is checked against, by its title. */
const EXPECTED: [RegExp, ConsistencyOptions][] = [
  [/with your image$/, {}],
  [/cert-manager/, { certificates: 'cert-manager' }],
  [/"spiderpool", ConfigMap "my-spiderpool-conf"/, { spiderpoolNamespace: 'spiderpool', configMapName: 'my-spiderpool-conf' }],
  [/with monitoring/, {}],
];

async function kustomize(dir: string): Promise<Record<string, unknown>[]> {
  const { stdout } = await execFileAsync(KUBECTL, ['kustomize', dir], { maxBuffer: 16 << 20 });
  return parseManifests(stdout);
}

/** The README's step 2, with the built CLI, run where the README runs it (the clone's top). */
async function certs(top: string): Promise<void> {
  const result = await runProcess(process.execPath, [CLI, 'certs', '--service', 'spiderpool-iaas-webhook', '--namespace', 'spiderpool-iaas-webhook', '--out', path.join(top, 'deploy/tls')]);
  if (result.code !== 0) throw new Error(`certs failed: ${result.stderr}`);
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("README's overlays rendered by kubectl kustomize", () => {
  test('the README shows four overlays, each consistent with src/defaults.ts as it says', async () => {
    const overlays = await readmeOverlays();
    expect(overlays.map((o) => o.title)).toEqual(EXPECTED.map(([title]) => expect.stringMatching(title)));
    for (const [index, overlay] of overlays.entries()) {
      const { dir, overlayDir } = await writeOverlayBesideDeploy(overlay.text);
      dirs.push(dir);
      const options = EXPECTED[index]![1];
      if (options.certificates !== 'cert-manager') await certs(dir);
      const objects = await kustomize(overlayDir);
      expect({ overlay: overlay.title, problems: checkManifests(objects, options) }).toEqual({ overlay: overlay.title, problems: [] });
      const deployment = objects.find((o) => o['kind'] === 'Deployment') as any;
      expect(deployment.spec.template.spec.containers[0].image).toBe('registry.example.com/spiderpool-iaas-webhook:0.1.0');
    }
  });

  test("with the monitoring component: its objects in the install namespace, the ServiceMonitor trusting the generated Secret's CA", async () => {
    const monitoring = (await readmeOverlays()).find((o) => /with monitoring/.test(o.title))!;
    const { dir, overlayDir } = await writeOverlayBesideDeploy(monitoring.text);
    dirs.push(dir);
    await certs(dir);
    const objects = (await kustomize(overlayDir)) as any[];
    const monitoringObjects = objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'monitoring');
    expect(new Set(monitoringObjects.map((o) => o.metadata.namespace))).toEqual(new Set(['spiderpool-iaas-webhook']));
    const kinds = monitoringObjects.map((o) => o.kind).sort();
    expect(kinds).toEqual(['ConfigMap', 'GrafanaDashboard', 'PrometheusRule', 'ServiceMonitor']);
    const secret = objects.find((o) => o.kind === 'Secret' && o.type === 'kubernetes.io/tls');
    expect(secret.metadata.name).toMatch(/^spiderpool-iaas-webhook-tls-[a-z0-9]+$/); // the generator's content hash
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor');
    expect(monitor.spec.endpoints[0].tlsConfig.ca.secret).toEqual({ name: secret.metadata.name, key: 'ca.crt' });
    expect(secret.data['ca.crt']).toBeDefined();
  });

  test('deploy/overlays/cert-manager renders without deploy/tls/, and deploy/ does not', async () => {
    const { dir, deployDir } = await writeOverlayBesideDeploy('');
    dirs.push(dir);
    const objects = await kustomize(path.join(deployDir, 'overlays/cert-manager'));
    expect(checkManifests(objects, { certificates: 'cert-manager' })).toEqual([]);
    await expect(kustomize(deployDir)).rejects.toThrow(/tls\/tls\.crt/);
  });
});

describe('README install steps against the real API server', () => {
  let apiServer: ApiServer;
  let top: string;
  let overlayDir: string;
  const kubectl = (args: readonly string[]): Promise<Finished> => runProcess(KUBECTL, [`--kubeconfig=${apiServer.kubeconfig}`, ...args]);
  const exists = async (resource: string, namespace?: string) =>
    (await kubectl(['get', resource, ...(namespace ? ['-n', namespace] : []), '-o', 'name'])).code === 0;

  beforeAll(async () => {
    const [imageOnly] = await readmeOverlays();
    ({ dir: top, overlayDir } = await writeOverlayBesideDeploy(imageOnly!.text));
    dirs.push(top);
    await certs(top);
    apiServer = await startApiServer(path.join(top, 'apiserver.log'));
  });
  afterAll(async () => {
    await apiServer?.stop();
  });

  test("step 3 applies everything but the webhook configuration, step 5 adds it with certs' caBundle, uninstall removes it all", async () => {
    const step3 = await kubectl(['apply', '-k', overlayDir, '-l', SELECTOR]);
    expect(step3).toMatchObject({ code: 0, stderr: '' });
    const applied = step3.stdout.trim().split('\n').map((line) => line.replace(/ (created|configured|unchanged)$/, ''));
    expect(applied).toEqual([
      'namespace/spiderpool-iaas-webhook',
      'serviceaccount/spiderpool-iaas-webhook',
      'role.rbac.authorization.k8s.io/spiderpool-iaas-webhook-conf-reader',
      'clusterrole.rbac.authorization.k8s.io/spiderpool-iaas-webhook',
      'rolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook-conf-reader',
      'clusterrolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook',
      expect.stringMatching(/^secret\/spiderpool-iaas-webhook-tls-[0-9a-z]{10}$/),
      'service/spiderpool-iaas-webhook',
      'deployment.apps/spiderpool-iaas-webhook',
      'poddisruptionbudget.policy/spiderpool-iaas-webhook',
      // In-process, so installing it before the pods are up blocks nothing the rules allow.
      'validatingadmissionpolicy.admissionregistration.k8s.io/spiderippool.iaas-webhook.spidernet.io',
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/spiderippool.iaas-webhook.spidernet.io',
      'networkpolicy.networking.k8s.io/spiderpool-iaas-webhook',
    ]);
    expect(await exists('validatingwebhookconfiguration/spiderpool-iaas-webhook')).toBe(false);

    const step5 = await kubectl(['apply', '-k', overlayDir]);
    expect(step5).toMatchObject({ code: 0, stderr: '' });
    // The rest again, unchanged (kubectl says "configured" for some that it patches with the same content).
    expect(step5.stdout.trim().split('\n')).toEqual([
      ...applied.map((name) => expect.stringMatching(new RegExp(`^${name.replace(/[.]/g, '\\.')} (unchanged|configured)$`))),
      'validatingwebhookconfiguration.admissionregistration.k8s.io/spiderpool-iaas-webhook created',
    ]);
    const vwc = JSON.parse((await kubectl(['get', 'validatingwebhookconfiguration/spiderpool-iaas-webhook', '-o', 'json'])).stdout);
    const ca = Buffer.from(await readFile(path.join(top, 'deploy/tls/ca.crt'))).toString('base64');
    expect(vwc.webhooks.length).toBeGreaterThan(1);
    expect(vwc.webhooks.map((w: any) => w.clientConfig.caBundle)).toEqual(vwc.webhooks.map(() => ca));

    // README "Uninstall" without deploy/tls/: the label selects what is left once the VWC is gone.
    const byLabel = await kubectl(['delete', 'namespace,clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding', '-l', 'app.kubernetes.io/name=spiderpool-iaas-webhook', '--dry-run=server', '-o', 'name']);
    expect(byLabel.stdout.trim().split('\n').sort()).toEqual([
      'clusterrole.rbac.authorization.k8s.io/spiderpool-iaas-webhook',
      'clusterrolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook',
      'namespace/spiderpool-iaas-webhook',
      'validatingadmissionpolicy.admissionregistration.k8s.io/spiderippool.iaas-webhook.spidernet.io',
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/spiderippool.iaas-webhook.spidernet.io',
    ]);
    const inSpiderpoolNamespace = await kubectl(['-n', 'kube-system', 'delete', 'role,rolebinding', '-l', 'app.kubernetes.io/name=spiderpool-iaas-webhook', '--dry-run=server', '-o', 'name']);
    expect(inSpiderpoolNamespace.stdout.trim().split('\n').sort()).toEqual([
      'role.rbac.authorization.k8s.io/spiderpool-iaas-webhook-conf-reader',
      'rolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook-conf-reader',
    ]);

    // README "Uninstall". No namespace controller runs here, so the namespace would stay
    // Terminating and kubectl would wait for it: --wait=false, then its deletion is checked.
    expect(await kubectl(['delete', 'validatingwebhookconfiguration', 'spiderpool-iaas-webhook'])).toMatchObject({ code: 0 });
    const deleted = await kubectl(['delete', '-k', overlayDir, '--ignore-not-found', '--wait=false']);
    expect(deleted).toMatchObject({ code: 0, stderr: '' });
    expect(deleted.stdout).not.toContain('validatingwebhookconfiguration');
    expect(await exists('clusterrole/spiderpool-iaas-webhook')).toBe(false);
    expect(await exists('clusterrolebinding/spiderpool-iaas-webhook')).toBe(false);
    expect(await exists('role/spiderpool-iaas-webhook-conf-reader', 'kube-system')).toBe(false);
    const namespace = JSON.parse((await kubectl(['get', 'namespace/spiderpool-iaas-webhook', '-o', 'json'])).stdout || '{}');
    expect(namespace.metadata?.deletionTimestamp ?? 'gone').toEqual(expect.any(String));
  });
});

describe('pool cache errors from the real API server', () => {
  let apiServer: ApiServer;
  let workDir: string;
  let webhook: WebhookProcess | undefined;
  const kubectl = (args: readonly string[]): Promise<Finished> => runProcess(KUBECTL, [`--kubeconfig=${apiServer.kubeconfig}`, ...args]);

  beforeAll(async () => {
    ({ dir: workDir } = await writeOverlayBesideDeploy(''));
    dirs.push(workDir);
    const made = await runProcess(process.execPath, [CLI, 'certs', `--out=${path.join(workDir, 'certs')}`, '--ip=127.0.0.1']);
    if (made.code !== 0) throw new Error(made.stderr);
    apiServer = await startApiServer(path.join(workDir, 'apiserver.log'));
  });
  afterEach(async () => {
    await webhook?.stop();
    webhook = undefined;
  });
  afterAll(async () => {
    await apiServer?.stop();
  });

  /** The pool cache's failed lists at `level` (the spiderpool-conf cache logs its own, with msg `spiderpool-conf …`). */
  const listFailures = (log: LogLine[], level: number, what = 'SpiderIPPool') =>
    log.filter((line) => line['operation'] === 'list' && line['level'] === level && String(line['msg']).startsWith(`${what} `));

  test("without the CRD: one warning that Spiderpool's v2beta1 CRD is not installed, however often the list is retried", async () => {
    webhook = new WebhookProcess(path.join(workDir, 'certs'), apiServer.kubeconfig, ['--log-level=debug']);
    await webhook.start();
    await until(() => listFailures(webhook!.log, 20).length >= 2, 'two retries of the list (logged at debug)', { timeoutMs: 30_000, describe: () => JSON.stringify(webhook!.log) });
    expect(listFailures(webhook.log, 40)).toEqual([
      expect.objectContaining({
        statusCode: 404,
        message:
          "Spiderpool's spiderpool.spidernet.io/v2beta1 CRD is not installed: the API server does not serve spiderippools.spiderpool.spidernet.io v2beta1 " +
          '(404 page not found); install Spiderpool (a release whose SpiderIPPool CRD serves v2beta1)',
      }),
    ]);
    expect(JSON.stringify(webhook.log)).not.toMatch(/HTTP-Code|Headers/);
  });

  test('without the RBAC of deploy/base/rbac.yaml: one warning naming the verb, the resource and the identity', async () => {
    for (const args of [['apply', '-f', CRD_FILE], ['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s'], ['create', 'serviceaccount', 'no-rbac', '-n', 'default']]) {
      const done = await kubectl(args);
      if (done.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${done.stderr}`);
    }
    const token = (await kubectl(['create', 'token', 'no-rbac', '-n', 'default'])).stdout.trim();
    const config = parse(await readFile(apiServer.kubeconfig, 'utf8'));
    config.users = [{ name: config.users[0].name, user: { token } }];
    const kubeconfig = path.join(workDir, 'no-rbac.kubeconfig');
    await writeFile(kubeconfig, stringify(config));
    webhook = new WebhookProcess(path.join(workDir, 'certs'), kubeconfig, ['--log-level=debug']);
    await webhook.start();
    await until(() => listFailures(webhook!.log, 20).length >= 1, 'a retry of the list (logged at debug)', { timeoutMs: 30_000 });
    expect(listFailures(webhook.log, 40)).toEqual([
      expect.objectContaining({
        statusCode: 403,
        message:
          'the ClusterRole and ClusterRoleBinding from deploy/base/rbac.yaml are missing: the API server forbids "list" on spiderippools.spiderpool.spidernet.io ' +
          '(403 Forbidden: spiderippools.spiderpool.spidernet.io is forbidden: User "system:serviceaccount:default:no-rbac" cannot list resource "spiderippools" ' +
          'in API group "spiderpool.spidernet.io" at the cluster scope); re-apply your overlay to create them (get, list, watch on spiderippools.spiderpool.spidernet.io, ' +
          "bound to the webhook's ServiceAccount)",
      }),
    ]);
    expect(listFailures(webhook.log, 40, 'spiderpool-conf')).toEqual([
      expect.objectContaining({
        statusCode: 403,
        message: expect.stringMatching(
          /^the Role and RoleBinding spiderpool-iaas-webhook-conf-reader from deploy\/base\/rbac\.yaml are missing in namespace "kube-system": the API server forbids "list" on ConfigMap "spiderpool-conf" \(403: configmaps "spiderpool-conf" is forbidden: .*\); re-apply your overlay/,
        ),
      }),
    ]);
  });
});
