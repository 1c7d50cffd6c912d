/**
 * README "Install" as an operator runs it, with the real kustomize (`kubectl kustomize`)
 * and the real kube-apiserver (test/e2e/cluster/apiserver.ts): the overlays the README
 * shows render and are consistent (test/deploy/consistency.ts) without deploy/tls/; the
 * one `kubectl apply -k` installs everything but the webhook configuration (the Secret
 * empty), which `serve --tls-secret --manage-webhook-configuration` (run here as a process
 * against the same API server) then makes: the Secret filled, the configuration written with its
 * ca.crt and owned by the ClusterRole; `unregister` and `kubectl delete -k` remove it all.
 * This API server runs no controllers, nodes or cert-manager, so the pods themselves and
 * garbage collection are the one-node cluster test's. The pool cache's errors for a missing
 * CRD (404) and missing RBAC (403) are checked against the same API server.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { AKS_ENFORCER_DISABLED, checkManifests, type ConsistencyOptions, INJECT_CA_FROM, webhookConfigurationOfPods } from '../deploy/consistency.js';
import { parseManifests, readKustomization } from '../deploy/render.js';
import { readmeOverlays, writeOverlayBesideDeploy } from '../deploy/readme-overlays.js';
import { until } from '../helpers/until.js';
import { startApiServer, type ApiServer } from './cluster/apiserver.js';
import { CRD_FILE, CRD_NAME } from './cluster/harness.js';
import { runProcess, type Finished } from './cluster/processes.js';
import { CLI, WebhookProcess, type LogLine } from './cluster/webhook.js';

const execFileAsync = promisify(execFile);
const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';

/** What each overlay of README.md, docs/operations.md and docs/install.md is checked against, by its title. */
const EXPECTED: [RegExp, ConsistencyOptions][] = [
  // README.md
  [/with your image$/, {}],
  // docs/operations.md
  [/with monitoring/, {}],
  // docs/install.md
  [/cert-manager/, { certificates: 'cert-manager' }],
  [/"spiderpool", ConfigMap "my-spiderpool-conf"/, { spiderpoolNamespace: 'spiderpool', configMapName: 'my-spiderpool-conf' }],
  [/the webhook port only from the control plane/, { apiServerCIDRs: ['10.0.0.10/31'] }],
];

async function kustomize(dir: string): Promise<Record<string, unknown>[]> {
  const { stdout } = await execFileAsync(KUBECTL, ['kustomize', dir], { maxBuffer: 16 << 20 });
  return parseManifests(stdout);
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("README's overlays rendered by kubectl kustomize", () => {
  test('README.md, docs/operations.md and docs/install.md show five overlays, each consistent with src/defaults.ts as it says', async () => {
    const overlays = await readmeOverlays();
    expect(overlays.map((o) => o.title)).toEqual(EXPECTED.map(([title]) => expect.stringMatching(title)));
    for (const [index, overlay] of overlays.entries()) {
      const { dir, overlayDir } = await writeOverlayBesideDeploy(overlay.text);
      dirs.push(dir);
      const options = EXPECTED[index]![1];
      const objects = await kustomize(overlayDir);
      expect({ overlay: overlay.title, problems: checkManifests(objects, options) }).toEqual({ overlay: overlay.title, problems: [] });
      const deployment = objects.find((o) => o['kind'] === 'Deployment') as any;
      expect(deployment.spec.template.spec.containers[0].image).toBe('registry.example.com/spiderpool-iaas-webhook:0.1.0');
    }
  });

  test('the monitoring overlay adds the ServiceMonitor, the PrometheusRule and the dashboard (ConfigMap and GrafanaDashboard); the others none of them', async () => {
    const MONITORING_KINDS = ['ServiceMonitor', 'PrometheusRule', 'GrafanaDashboard'];
    const isMonitoring = (o: Record<string, any>) => MONITORING_KINDS.includes(o['kind']) || o['metadata']?.['labels']?.['grafana_dashboard'] === '1';
    for (const overlay of await readmeOverlays()) {
      const { dir, overlayDir } = await writeOverlayBesideDeploy(overlay.text);
      dirs.push(dir);
      const shown = (await kustomize(overlayDir)).filter(isMonitoring).map((o: Record<string, any>) => `${o['kind']} ${o['metadata']['namespace']}`);
      const expected = /with monitoring/.test(overlay.title)
        ? ['ConfigMap', 'GrafanaDashboard', 'PrometheusRule', 'ServiceMonitor'].map((k) => `${k} spiderpool-iaas-webhook`)
        : [];
      expect({ overlay: overlay.title, shown: shown.sort() }).toEqual({ overlay: overlay.title, shown: expected });
    }
  });

  test("deploy/ and deploy/overlays/cert-manager render without deploy/tls/, with no webhook configuration and, but for deploy/'s empty one, no Secret", async () => {
    const { dir, deployDir } = await writeOverlayBesideDeploy('');
    dirs.push(dir);
    for (const [where, options] of [
      [deployDir, {}],
      [path.join(deployDir, 'overlays/cert-manager'), { certificates: 'cert-manager' }],
    ] as const) {
      const objects = await kustomize(where);
      expect(checkManifests(objects, options)).toEqual([]);
      expect(objects.filter((o) => o['kind'] === 'ValidatingWebhookConfiguration')).toEqual([]);
      const secrets = objects.filter((o) => o['kind'] === 'Secret');
      expect(secrets).toEqual(
        where === deployDir ? [expect.objectContaining({ metadata: expect.objectContaining({ name: 'spiderpool-iaas-webhook-tls' }) })] : [],
      );
      expect(secrets.filter((o) => 'data' in o || 'type' in o)).toEqual([]);
    }
  });
});

type Obj = Record<string, any>;
const render = (dir: string): Promise<Obj[]> => kustomize(dir);
const one = (objects: Obj[], kind: string): Obj => {
  const found = objects.filter((o) => o['kind'] === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0]!;
};
const container = (objects: Obj[]): Obj => one(objects, 'Deployment')['spec']['template']['spec']['containers'][0];
const objectKey = (o: Obj) => `${o['kind']} ${o['metadata']?.['namespace'] ?? ''}/${o['metadata']?.['name']}`;
const byKey = (objects: Obj[]) => [...objects].sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
const VAP_KINDS = ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];

describe('deploy/ and overlays/cert-manager rendered by kubectl kustomize', () => {
  let deployDir: string;
  let rendered: Obj[];
  let certManager: Obj[];

  beforeAll(async () => {
    const copy = await writeOverlayBesideDeploy('');
    dirs.push(copy.dir);
    deployDir = copy.deployDir;
    rendered = await render(deployDir);
    certManager = await render(path.join(deployDir, 'overlays/cert-manager'));
  });

  test('deploy/ renders the objects its files hold, which the Node-only tests read (test/deploy/render.ts)', async () => {
    // kustomize v5.5 writes the namespace into the policy kinds too (it does not know they are
    // cluster-scoped); the API server drops it for a cluster-scoped kind.
    const dropped = rendered.map((o) => (VAP_KINDS.includes(o['kind']) ? { ...o, metadata: { ...o['metadata'], namespace: undefined } } : o));
    expect(JSON.parse(JSON.stringify(byKey(dropped)))).toEqual(byKey(await readKustomization(deployDir)));
  });

  test('deploy/ and overlays/cert-manager install the policy objects as the component file holds them', async () => {
    const componentFile = path.join(deployDir, 'components/validating-admission-policy/validatingadmissionpolicy.yaml');
    const expected = parseManifests(await readFile(componentFile, 'utf8')).map((o) => objectKey(o));
    for (const objects of [rendered, certManager]) {
      expect(
        objects.filter((o) => VAP_KINDS.includes(o['kind'])).map((o) => objectKey({ ...o, metadata: { ...o['metadata'], namespace: undefined } })),
      ).toEqual(expected);
    }
  });

  test('an overlay without the policy component installs neither policy object, the webhook stays', async () => {
    const copy = await writeOverlayBesideDeploy('');
    dirs.push(copy.dir);
    const file = path.join(copy.deployDir, 'overlays/cert-manager/kustomization.yaml');
    const k = parse(await readFile(file, 'utf8'));
    delete k.components;
    await writeFile(file, JSON.stringify(k));
    const objects = await render(path.join(copy.deployDir, 'overlays/cert-manager'));
    expect(objects.filter((o) => VAP_KINDS.includes(o['kind']))).toEqual([]);
    expect(objects.filter((o) => o['kind'] === 'Deployment')).toHaveLength(1);
  });

  test("deploy/kustomization.yaml's `namespace:` carries the Service and the webhooks along, the conf-reader stays", async () => {
    const copy = await writeOverlayBesideDeploy('');
    dirs.push(copy.dir);
    const file = path.join(copy.deployDir, 'kustomization.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^namespace: .*$/m, 'namespace: webhooks'));
    const objects = await render(copy.deployDir);
    expect(checkManifests(objects, { namespace: 'webhooks' })).toEqual([]);
    expect(checkManifests(objects)).toEqual(expect.arrayContaining([expect.stringMatching(/Namespace "spiderpool-iaas-webhook" is missing/)]));
  });

  test('the image-only overlay of the README changes the image and nothing else', async () => {
    const [imageOnly] = await readmeOverlays();
    const { dir, overlayDir } = await writeOverlayBesideDeploy(imageOnly!.text);
    dirs.push(dir);
    const objects = await render(overlayDir);
    container(objects)['image'] = container(rendered)['image'];
    expect(byKey(objects)).toEqual(byKey(rendered));
  });

  test('the cert-manager overlay of docs/install.md renders as many objects as overlays/cert-manager', async () => {
    const withCertManager = (await readmeOverlays()).find((o) => /cert-manager/.test(o.title));
    const { dir, overlayDir } = await writeOverlayBesideDeploy(withCertManager!.text);
    dirs.push(dir);
    expect((await render(overlayDir)).length).toBe(certManager.length);
  });
  test('is consistent with src/defaults.ts, with certificates from cert-manager', () => {
    expect(checkManifests(certManager, { certificates: 'cert-manager' })).toEqual([]);
  });

  test("mounts cert-manager's Secret read-only, keeps no Secret itself, and writes the configuration without cainjector's annotation", () => {
    expect(certManager.filter((o) => o['kind'] === 'Secret' || o['kind'] === 'ValidatingWebhookConfiguration')).toEqual([]);
    const args: string[] = container(certManager)['args'];
    expect(args.filter((a) => a.startsWith('--tls-secret'))).toEqual([]);
    expect(args).toContain('--no-generate-certs');
    expect(container(certManager)['volumeMounts']).toEqual([{ name: 'certs', mountPath: '/etc/webhook/certs', readOnly: true }]);
    const vwc = webhookConfigurationOfPods(certManager) as Obj;
    expect(vwc['metadata']['annotations']).toEqual({ [AKS_ENFORCER_DISABLED]: 'true' });
    expect(vwc['webhooks'] as Obj[]).toHaveLength((webhookConfigurationOfPods(rendered)!['webhooks'] as Obj[]).length);
  });

  test("grants nothing on Secrets (cert-manager's holds the serving key), keeps the EndpointSlice list --manage-webhook-configuration needs", () => {
    const role = certManager.find((o) => o['kind'] === 'Role' && o['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!;
    expect(role['rules']).toEqual([{ apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] }]);
    expect(JSON.stringify(certManager.filter((o) => ['Role', 'ClusterRole'].includes(o['kind'])).map((o) => o['rules']))).not.toContain('secrets');
  });

  test('a self-signed Issuer makes the CA, the CA Issuer signs the serving certificate', () => {
    const certificates = certManager.filter((o) => o['kind'] === 'Certificate');
    const byName = (name: string) => certificates.find((c) => c['metadata']['name'] === name)!;
    const ca = byName('spiderpool-iaas-webhook-ca');
    expect(ca['spec']).toMatchObject({
      isCA: true,
      secretName: 'spiderpool-iaas-webhook-ca',
      issuerRef: { kind: 'Issuer', name: 'spiderpool-iaas-webhook-selfsigned' },
    });
    const issuers = certManager.filter((o) => o['kind'] === 'Issuer');
    expect(issuers.map((i) => [i['metadata']['name'], i['spec']]).sort()).toEqual([
      ['spiderpool-iaas-webhook-ca', { ca: { secretName: 'spiderpool-iaas-webhook-ca' } }],
      ['spiderpool-iaas-webhook-selfsigned', { selfSigned: {} }],
    ]);
    const serving = byName('spiderpool-iaas-webhook-serving');
    expect(serving['spec']['issuerRef']).toMatchObject({ kind: 'Issuer', name: 'spiderpool-iaas-webhook-ca' });
    // The Secret the Deployment mounts, under the name base/ gives it (no hash suffix to follow).
    const volumes: Obj[] = one(certManager, 'Deployment')['spec']['template']['spec']['volumes'];
    expect(volumes.map((v) => v['secret']?.['secretName'])).toEqual([serving['spec']['secretName']]);
    for (const o of [...certificates, ...issuers]) expect(o['metadata']['namespace']).toBe('spiderpool-iaas-webhook');
  });

  test.each([
    [
      "with cainjector's inject-ca-from annotation",
      (o: Obj[]) =>
        (container(o)['args'] as string[]).push(`--webhook-configuration-annotation=${INJECT_CA_FROM}=spiderpool-iaas-webhook/spiderpool-iaas-webhook-serving`),
      /annotation cert-manager\.io\/inject-ca-from lets cainjector write caBundle, which during a CA change drops the old CA/,
    ],
    [
      'with a Certificate for another name',
      (o: Obj[]) => (o.find((x) => x['metadata']?.['name'] === 'spiderpool-iaas-webhook-serving')!['spec']['dnsNames'] = ['webhook.example']),
      /spec\.dnsNames lack "spiderpool-iaas-webhook\.spiderpool-iaas-webhook\.svc"/,
    ],
    [
      'with the serving certificate signed by the self-signed Issuer',
      (o: Obj[]) =>
        (o.find((x) => x['metadata']?.['name'] === 'spiderpool-iaas-webhook-serving')!['spec']['issuerRef']['name'] = 'spiderpool-iaas-webhook-selfsigned'),
      /Issuer "spiderpool-iaas-webhook-selfsigned": not a CA issuer/,
    ],
    [
      "with base/'s rules on Secrets",
      (o: Obj[]) =>
        o
          .find((x) => x['kind'] === 'Role' && x['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!
          ['rules'].unshift({ apiGroups: [''], resources: ['secrets'], resourceNames: ['spiderpool-iaas-webhook-tls'], verbs: ['get', 'update'] }),
      /ServiceAccount "spiderpool-iaas-webhook\/spiderpool-iaas-webhook" may get, update Secrets, although without --tls-secret the pods keep none/,
    ],
    [
      'with Secrets readable through a ClusterRole',
      (o: Obj[]) =>
        o
          .find((x) => x['kind'] === 'ClusterRole' && x['metadata']['name'] === 'spiderpool-iaas-webhook')!
          ['rules'].push({ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }),
      /may \* Secrets, although without --tls-secret/,
    ],
    [
      'without the Certificate',
      (o: Obj[]) =>
        o.splice(
          o.findIndex((x) => x['metadata']?.['name'] === 'spiderpool-iaas-webhook-serving'),
          1,
        ),
      /no Certificate writes the Secret "spiderpool-iaas-webhook-tls"/,
    ],
  ])('the checker reports the overlay %s', (_name, mutate, expected) => {
    const copy = structuredClone(certManager);
    mutate(copy);
    expect(checkManifests(copy, { certificates: 'cert-manager' })).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });
});

describe('README install against the real API server', () => {
  let apiServer: ApiServer;
  let top: string;
  let overlayDir: string;
  let webhook: WebhookProcess | undefined;
  const NS = 'spiderpool-iaas-webhook';
  const kubectl = (args: readonly string[]): Promise<Finished> => runProcess(KUBECTL, [`--kubeconfig=${apiServer.kubeconfig}`, ...args]);
  const exists = async (resource: string, namespace?: string) =>
    (await kubectl(['get', resource, ...(namespace ? ['-n', namespace] : []), '-o', 'name'])).code === 0;
  const getJson = async (resource: string, namespace?: string) =>
    JSON.parse((await kubectl(['get', resource, ...(namespace ? ['-n', namespace] : []), '-o', 'json'])).stdout || 'null');

  beforeAll(async () => {
    const [imageOnly] = await readmeOverlays();
    ({ dir: top, overlayDir } = await writeOverlayBesideDeploy(imageOnly!.text));
    dirs.push(top);
    apiServer = await startApiServer(path.join(top, 'apiserver.log'));
  });
  afterAll(async () => {
    await webhook?.stop();
    await apiServer?.stop();
  });

  test('one apply installs all but the configuration (the Secret empty), a serving webhook fills the one and writes the other, unregister and delete -k remove it all', async () => {
    const applied = await kubectl(['apply', '-k', overlayDir]);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(
      applied.stdout
        .trim()
        .split('\n')
        .map((line) => line.replace(/ (created|configured|unchanged)$/, '')),
    ).toEqual([
      'namespace/spiderpool-iaas-webhook',
      'serviceaccount/spiderpool-iaas-webhook',
      'role.rbac.authorization.k8s.io/spiderpool-iaas-webhook-conf-reader',
      'role.rbac.authorization.k8s.io/spiderpool-iaas-webhook-peers',
      'role.rbac.authorization.k8s.io/spiderpool-iaas-webhook-reports',
      'role.rbac.authorization.k8s.io/spiderpool-iaas-webhook-tls',
      'clusterrole.rbac.authorization.k8s.io/spiderpool-iaas-webhook',
      'clusterrole.rbac.authorization.k8s.io/spiderpool-iaas-webhook-reports-owner',
      'rolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook-conf-reader',
      'rolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook-peers',
      'rolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook-reports',
      'rolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook-tls',
      'clusterrolebinding.rbac.authorization.k8s.io/spiderpool-iaas-webhook',
      'secret/spiderpool-iaas-webhook-tls',
      'service/spiderpool-iaas-webhook',
      'deployment.apps/spiderpool-iaas-webhook',
      'poddisruptionbudget.policy/spiderpool-iaas-webhook',
      // In-process, so installing it before the pods are up blocks nothing the rules allow.
      'validatingadmissionpolicy.admissionregistration.k8s.io/spiderippool.iaas-webhook.spidernet.io',
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/spiderippool.iaas-webhook.spidernet.io',
      'networkpolicy.networking.k8s.io/spiderpool-iaas-webhook',
    ]);
    expect(await exists('validatingwebhookconfiguration/spiderpool-iaas-webhook')).toBe(false);

    // What a pod of the Deployment does (its flags), as a process: ready once its pool cache listed.
    expect(await kubectl(['apply', '-f', CRD_FILE])).toMatchObject({ code: 0 });
    const certDir = path.join(top, 'served');
    const args = (
      JSON.parse((await kubectl(['get', '-n', NS, 'deployment/spiderpool-iaas-webhook', '-o', 'json'])).stdout).spec.template.spec.containers[0]
        .args as string[]
    ).filter((a) => /^--(tls-secret|manage-webhook-configuration|owner-cluster-role|configmap-name|configmap-namespace)=/.test(a));
    webhook = new WebhookProcess(certDir, apiServer.kubeconfig, [...args, `--namespace=${NS}`]);
    await webhook.start();
    // No controller here publishes the Service's endpoints: the pod waits for one, as for
    // the EndpointSlice controller in a cluster, and writes the configuration only then.
    await until(() => webhook!.log.some((l) => String(l.msg).includes('has no ready endpoint yet')), 'the wait for an endpoint to be logged', {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(await exists('validatingwebhookconfiguration/spiderpool-iaas-webhook')).toBe(false);
    const slice = path.join(top, 'endpointslice.yaml');
    await writeFile(
      slice,
      stringify({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'spiderpool-iaas-webhook-e2e', namespace: NS, labels: { 'kubernetes.io/service-name': 'spiderpool-iaas-webhook' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
        ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
      }),
    );
    expect(await kubectl(['apply', '-f', slice])).toMatchObject({ code: 0 });
    const written = await until(async () => (await getJson('validatingwebhookconfiguration/spiderpool-iaas-webhook')) ?? undefined, 'the configuration', {
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    const secret = await getJson('secret/spiderpool-iaas-webhook-tls', NS);
    expect(secret.type).toBe('Opaque');
    expect(Object.keys(secret.data).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(written.webhooks.length).toBeGreaterThan(1);
    expect(written.webhooks.map((w: any) => w.clientConfig.caBundle)).toEqual(written.webhooks.map(() => secret.data['ca.crt']));
    expect(written.webhooks.map((w: any) => w.clientConfig.service.namespace)).toEqual(written.webhooks.map(() => NS));
    const clusterRole = await getJson('clusterrole/spiderpool-iaas-webhook');
    const owner = [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'spiderpool-iaas-webhook', uid: clusterRole.metadata.uid }];
    expect(written.metadata.ownerReferences).toEqual(owner);
    expect(secret.metadata.ownerReferences).toEqual(owner);
    expect(written.metadata.annotations).toEqual({ 'admissions.enforcer/disabled': 'true' });
    await webhook.stop();

    // README "Uninstall". No namespace controller runs here, so the namespace would stay
    // Terminating and kubectl would wait for it: --wait=false, then its deletion is checked.
    const unregister = (name: string) => runProcess(process.execPath, [CLI, 'unregister', `--kubeconfig=${apiServer.kubeconfig}`, `--name=${name}`]);
    expect(await unregister('spiderpool-iaas-webhook')).toMatchObject({
      code: 0,
      stdout: 'validatingwebhookconfiguration.admissionregistration.k8s.io "spiderpool-iaas-webhook" deleted\n',
    });
    expect(await unregister('spiderpool-iaas-webhook')).toMatchObject({
      code: 0,
      stdout: 'validatingwebhookconfiguration.admissionregistration.k8s.io "spiderpool-iaas-webhook" not found: nothing to delete\n',
    });
    expect(await unregister('Not_A_Name')).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^error: option '--name <name>' argument 'Not_A_Name' is invalid\. must be a Kubernetes object name/),
    });
    const deleted = await kubectl(['delete', '-k', overlayDir, '--ignore-not-found', '--wait=false']);
    expect(deleted).toMatchObject({ code: 0, stderr: '' });
    expect(await exists('clusterrole/spiderpool-iaas-webhook')).toBe(false);
    expect(await exists('clusterrolebinding/spiderpool-iaas-webhook')).toBe(false);
    expect(await exists('role/spiderpool-iaas-webhook-conf-reader', 'kube-system')).toBe(false);
    const namespace = (await getJson('namespace/spiderpool-iaas-webhook')) ?? {};
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
    await until(() => listFailures(webhook!.log, 20).length >= 2, 'two retries of the list (logged at debug)', {
      timeoutMs: 30_000,
      describe: () => JSON.stringify(webhook!.log),
    });
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
    for (const args of [
      ['apply', '-f', CRD_FILE],
      ['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s'],
      ['create', 'serviceaccount', 'no-rbac', '-n', 'default'],
    ]) {
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
