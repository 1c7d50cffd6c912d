/**
 * deploy/, its cert-manager overlay and the overlays README "Install" shows agree with
 * src/defaults.ts and with themselves. Node only: they are rendered by render-node.ts
 * (the kustomize features deploy/ uses, including the replacements and the overlays'
 * patches), not by kubectl; the ValidatingWebhookConfiguration the pods write is built by
 * consistency.ts with the functions the server uses; test/e2e/deploy.test.ts
 * renders and applies them with the real kustomize and kubectl.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { startNodeFlags } from '../../bench/servers.js';
import { DEFAULT_CONFIGMAP_NAME, DEFAULT_PORT, WEBHOOKS } from '../../src/defaults.js';
import { AKS_ENFORCER_DISABLED, checkManifests, INJECT_CA_FROM, webhookConfigurationOfPods } from './consistency.js';
import { readmeOverlays, writeOverlayBesideDeploy } from './readme-overlays.js';
import { applyJsonPatch, loadKustomization, renderWithNode, setField, splitFieldPath } from './render-node.js';

// Tests reach into rendered manifests by known paths; `any` keeps that readable.
type Obj = Record<string, any>;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const deployDir = path.join(repoRoot, 'deploy');
const certManagerDir = path.join(deployDir, 'overlays/cert-manager');

let rendered: Obj[];
let certManager: Obj[];

beforeAll(async () => {
  rendered = await renderWithNode(deployDir);
  certManager = await renderWithNode(certManagerDir);
});

function one(objects: Obj[], kind: string): Obj {
  const found = objects.filter((o) => o['kind'] === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as Obj;
}

function webhook(objects: Obj[], path: string): Obj {
  const vwc = one(objects, 'ValidatingWebhookConfiguration');
  const found = (vwc['webhooks'] as Obj[]).find((w) => w['clientConfig']?.['service']?.['path'] === path);
  if (found === undefined) throw new Error(`no webhook with path ${path}`);
  return found;
}

const container = (objects: Obj[]): Obj => one(objects, 'Deployment')['spec']['template']['spec']['containers'][0];

describe('deploy/ rendered without kubectl', () => {
  test('is consistent with src/defaults.ts', () => {
    expect(checkManifests(rendered)).toEqual([]);
  });

  test('renders the Secret empty and no ValidatingWebhookConfiguration: the pods fill the one and write the other once they serve', () => {
    expect(rendered.filter((o) => o['kind'] === 'ValidatingWebhookConfiguration')).toEqual([]);
    expect(rendered.filter((o) => o['kind'] === 'Secret')).toEqual([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'spiderpool-iaas-webhook-tls', namespace: 'spiderpool-iaas-webhook', labels: { 'app.kubernetes.io/name': 'spiderpool-iaas-webhook' } } },
    ]);
    const args: string[] = container(rendered)['args'];
    expect(args).toEqual(
      expect.arrayContaining(['--tls-secret=spiderpool-iaas-webhook-tls', '--manage-webhook-configuration=spiderpool-iaas-webhook', '--owner-cluster-role=spiderpool-iaas-webhook']),
    );
    expect(one(rendered, 'Deployment')['spec']['template']['spec']['volumes']).toEqual([{ name: 'certs', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }]);
  });

  test('grants the Secret (get, update: no create) and the configuration by name; list of EndpointSlices only in its namespace', () => {
    const role = rendered.find((o) => o['kind'] === 'Role' && o['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!;
    expect(role['metadata']['namespace']).toBe('spiderpool-iaas-webhook');
    expect(role['rules']).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['spiderpool-iaas-webhook-tls'], verbs: ['get', 'update'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] },
    ]);
    const clusterRole = one(rendered, 'ClusterRole');
    expect(clusterRole['rules'].slice(1)).toEqual([
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['spiderpool-iaas-webhook'], verbs: ['get', 'patch', 'create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['spiderpool-iaas-webhook'], verbs: ['get'] },
      // --rebalance: which nodes could take a replica; read only.
      { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
    ]);
  });

  test('the conf-reader Role and binding stay in Spiderpool\'s namespace, their subject follows the ServiceAccount', () => {
    const role = rendered.find((o) => o['kind'] === 'Role' && o['metadata']['name'] === 'spiderpool-iaas-webhook-conf-reader')!;
    const binding = rendered.find((o) => o['kind'] === 'RoleBinding' && o['metadata']['name'] === 'spiderpool-iaas-webhook-conf-reader')!;
    expect(role['metadata']['namespace']).toBe('kube-system');
    expect(binding['metadata']['namespace']).toBe('kube-system');
    expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'spiderpool-iaas-webhook', namespace: 'spiderpool-iaas-webhook' }]);
  });

  test('the configuration the pods write calls the Service in their namespace and carries the AKS opt-out', () => {
    const vwc = webhookConfigurationOfPods(rendered) as Obj;
    expect(vwc['metadata']).toMatchObject({ name: 'spiderpool-iaas-webhook', annotations: { 'admissions.enforcer/disabled': 'true' } });
    const services = (vwc['webhooks'] as Obj[]).map((w) => w['clientConfig']['service']);
    expect(new Set(services.map((x) => `${x['namespace']}/${x['name']}`))).toEqual(new Set(['spiderpool-iaas-webhook/spiderpool-iaas-webhook']));
  });
});

describe('deploy/overlays/cert-manager rendered without kubectl', () => {
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
    expect(ca['spec']).toMatchObject({ isCA: true, secretName: 'spiderpool-iaas-webhook-ca', issuerRef: { kind: 'Issuer', name: 'spiderpool-iaas-webhook-selfsigned' } });
    const issuers = certManager.filter((o) => o['kind'] === 'Issuer');
    expect(issuers.map((i) => [i['metadata']['name'], i['spec']])).toEqual([
      ['spiderpool-iaas-webhook-selfsigned', { selfSigned: {} }],
      ['spiderpool-iaas-webhook-ca', { ca: { secretName: 'spiderpool-iaas-webhook-ca' } }],
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
      (o: Obj[]) => (container(o)['args'] as string[]).push(`--webhook-configuration-annotation=${INJECT_CA_FROM}=spiderpool-iaas-webhook/spiderpool-iaas-webhook-serving`),
      /annotation cert-manager\.io\/inject-ca-from lets cainjector write caBundle, which during a CA change drops the old CA/,
    ],
    [
      'with a Certificate for another name',
      (o: Obj[]) => (o.find((x) => x['metadata']?.['name'] === 'spiderpool-iaas-webhook-serving')!['spec']['dnsNames'] = ['webhook.example']),
      /spec\.dnsNames lack "spiderpool-iaas-webhook\.spiderpool-iaas-webhook\.svc"/,
    ],
    [
      'with the serving certificate signed by the self-signed Issuer',
      (o: Obj[]) => (o.find((x) => x['metadata']?.['name'] === 'spiderpool-iaas-webhook-serving')!['spec']['issuerRef']['name'] = 'spiderpool-iaas-webhook-selfsigned'),
      /Issuer "spiderpool-iaas-webhook-selfsigned": not a CA issuer/,
    ],
    [
      "with base/'s rules on Secrets",
      (o: Obj[]) => o.find((x) => x['kind'] === 'Role' && x['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!['rules'].unshift({ apiGroups: [''], resources: ['secrets'], resourceNames: ['spiderpool-iaas-webhook-tls'], verbs: ['get', 'update'] }),
      /ServiceAccount "spiderpool-iaas-webhook\/spiderpool-iaas-webhook" may get, update Secrets, although without --tls-secret the pods keep none/,
    ],
    [
      'with Secrets readable through a ClusterRole',
      (o: Obj[]) => one(o, 'ClusterRole')['rules'].push({ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }),
      /may \* Secrets, although without --tls-secret/,
    ],
    ['without the Certificate', (o: Obj[]) => o.splice(o.findIndex((x) => x['metadata']?.['name'] === 'spiderpool-iaas-webhook-serving'), 1), /no Certificate writes the Secret "spiderpool-iaas-webhook-tls"/],
  ])('the checker reports the overlay %s', (_name, mutate, expected) => {
    const copy = structuredClone(certManager);
    mutate(copy);
    expect(checkManifests(copy, { certificates: 'cert-manager' })).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });
});

describe("README's overlays, rendered without kubectl", () => {
  let workDir: string | undefined;
  afterEach(async () => {
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
    workDir = undefined;
  });

  test('the README shows the image-only overlay first, docs/install.md the cert-manager one', async () => {
    const titles = (await readmeOverlays()).map((o) => o.title);
    expect(titles[0]).toMatch(/^: deploy\/ as it is, with your image$/);
    expect(titles).toContainEqual(expect.stringMatching(/cert-manager/));
  });

  test('the image-only overlay changes the image and nothing else', async () => {
    const [imageOnly] = await readmeOverlays();
    const { dir, overlayDir } = await writeOverlayBesideDeploy(imageOnly!.text);
    workDir = dir;
    const objects = await renderWithNode(overlayDir);
    expect(checkManifests(objects)).toEqual([]);
    expect(container(objects)['image']).toBe('registry.example.com/spiderpool-iaas-webhook:0.1.0');
    const sameImage = structuredClone(objects);
    container(sameImage)['image'] = container(rendered)['image'];
    expect(sameImage).toEqual(rendered);
  });

  test('the cert-manager overlay renders without deploy/tls/ and changes only the image', async () => {
    const withCertManager = (await readmeOverlays()).find((o) => /cert-manager/.test(o.title));
    const { dir, overlayDir } = await writeOverlayBesideDeploy(withCertManager!.text);
    workDir = dir;
    const objects = await renderWithNode(overlayDir);
    expect(checkManifests(objects, { certificates: 'cert-manager' })).toEqual([]);
    expect(container(objects)['image']).toBe('registry.example.com/spiderpool-iaas-webhook:0.1.0');
    expect(objects.length).toBe(certManager.length);
  });
});

describe('the ValidatingAdmissionPolicy component', () => {
  const componentFile = path.join(deployDir, 'components/validating-admission-policy/validatingadmissionpolicy.yaml');
  const kinds = ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];

  test('deploy/ and overlays/cert-manager install the policy and its binding as the component file holds them, cluster-scoped', async () => {
    const { parseManifests } = await import('./render.js');
    const expected = parseManifests(await readFile(componentFile, 'utf8'));
    for (const objects of [rendered, certManager]) {
      const found = objects.filter((o) => kinds.includes(o['kind']));
      expect(found).toEqual(expected);
      for (const o of found) expect(o['metadata']['namespace']).toBeUndefined();
    }
  });

  test('an overlay without the component installs neither', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'no-vap-'));
    try {
      await cp(deployDir, path.join(dir, 'deploy'), { recursive: true });
      const file = path.join(dir, 'deploy/overlays/cert-manager/kustomization.yaml');
      const k = parse(await readFile(file, 'utf8'));
      delete k.components;
      await writeFile(file, JSON.stringify(k));
      const objects: Obj[] = await renderWithNode(path.join(dir, 'deploy/overlays/cert-manager'));
      expect(objects.filter((o) => kinds.includes(o['kind']))).toEqual([]);
      // The webhook itself stays (it writes its configuration once it serves).
      expect(objects.filter((o) => o['kind'] === 'Deployment')).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/ installed into another namespace', () => {
  let workDir: string;
  afterEach(async () => {
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  test('kustomize `namespace:` carries the Service and the webhooks along', async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'deploy-test-'));
    const copy = path.join(workDir, 'deploy');
    await cp(deployDir, copy, { recursive: true });
    const file = path.join(copy, 'kustomization.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(/^namespace: .*$/m, 'namespace: webhooks'));
    const objects = await renderWithNode(copy);
    expect(checkManifests(objects, { namespace: 'webhooks' })).toEqual([]);
    expect(checkManifests(objects)).toEqual(
      expect.arrayContaining([expect.stringMatching(/Namespace "spiderpool-iaas-webhook" is missing/)]),
    );
  });
});

describe('deploy/ refuses what the chart refuses (namespace, Pod Security)', () => {
  let workDir: string | undefined;
  afterEach(async () => {
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
    workDir = undefined;
  });

  /** deploy/ with its kustomization's `namespace:` set to `namespace`, rendered. */
  async function installedInto(namespace: string): Promise<Obj[]> {
    workDir = await mkdtemp(path.join(tmpdir(), 'deploy-ns-'));
    const copy = path.join(workDir, 'deploy');
    await cp(deployDir, copy, { recursive: true });
    const file = path.join(copy, 'kustomization.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^namespace: .*$/m, `namespace: ${namespace}`));
    return renderWithNode(copy);
  }

  test.each([
    ['kube-system', {}],
    ['spiderpool', { spiderpoolNamespace: 'spiderpool' }],
  ])('an overlay installing into %s (kube-system or Spiderpool\'s namespace) is refused', async (namespace, options) => {
    const objects = await installedInto(namespace);
    expect(checkManifests(objects, { namespace, ...options })).toContain(
      `installs into namespace "${namespace}", which is kube-system or Spiderpool's: install into a namespace of its own`,
    );
  });

  test('the Namespace deploy/ creates enforces the "restricted" Pod Security Standard; without the label it is refused', () => {
    expect(checkManifests(rendered)).toEqual([]);
    const copy = structuredClone(rendered);
    delete one(copy, 'Namespace')['metadata']['labels']['pod-security.kubernetes.io/enforce'];
    expect(checkManifests(copy)).toEqual(['Namespace "spiderpool-iaas-webhook": pod-security.kubernetes.io/enforce is not "restricted", though the pods meet it']);
  });

  test("no overlay of the README or docs/install.md installs into kube-system or Spiderpool's namespace", async () => {
    for (const overlay of await readmeOverlays()) {
      const namespaceLine = /^namespace: (.*)$/m.exec(overlay.text);
      expect([overlay.title, namespaceLine?.[1]]).not.toEqual([overlay.title, expect.stringMatching(/^(kube-system|spiderpool)$/)]);
    }
  });
});

describe('deploy/ sources', () => {
  test('deploy/ generates nothing from files (no deploy/tls/), and deploy/tls/ of `certs` users stays gitignored', async () => {
    const k = await loadKustomization(deployDir);
    expect(k.secretGenerator).toBeUndefined();
    const gitignore = (await readFile(path.join(repoRoot, '.gitignore'), 'utf8')).split('\n');
    expect(gitignore).toContain('deploy/tls/');
  });

  test('the image can be overridden through kustomize images:', async () => {
    const k = await loadKustomization(path.join(deployDir, 'base'));
    const source: unknown = parse(await readFile(path.join(deployDir, 'base/deployment.yaml'), 'utf8'));
    const image: string = (source as Obj)['spec']['template']['spec']['containers'][0]['image'];
    expect(image).toBe('spiderpool-iaas-webhook:0.1.0');
    expect(k.images?.map((i) => i.name)).toContain(image.split(':')[0]);
  });

  test("the Dockerfile's USER is the Deployment's runAsUser, and it starts the server", async () => {
    const dockerfile = await readFile(path.join(repoRoot, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const user = /^USER (\d+)(?::(\d+))?\s*$/m.exec(runtime);
    const podSc = one(rendered, 'Deployment')['spec']['template']['spec']['securityContext'];
    expect(user?.[1]).toBe(String(podSc['runAsUser']));
    expect(user?.[2]).toBe(String(podSc['runAsGroup']));
    // With the Node flags `npm start` uses (the benchmark starts the webhook with them too).
    const flags = startNodeFlags(repoRoot);
    expect(flags).toEqual(['--max-semi-space-size=8']);
    expect(runtime).toContain(`\nENTRYPOINT ${JSON.stringify(['node', ...flags, 'dist/cli/main.js']).replaceAll(',', ', ')}\n`);
    expect(runtime).toMatch(/^CMD \["serve"\]$/m);
    expect(runtime).toMatch(new RegExp(`^EXPOSE ${DEFAULT_PORT}$`, 'm'));
  });
});

describe('render-node field paths', () => {
  test('brackets keep dotted keys and list selectors whole', () => {
    expect(splitFieldPath('data.[ca.crt]')).toEqual(['data', '[ca.crt]']);
    expect(splitFieldPath('webhooks.[name=a.b.c].clientConfig.caBundle')).toEqual([
      'webhooks',
      '[name=a.b.c]',
      'clientConfig',
      'caBundle',
    ]);
  });

  test('JSON patches add, replace and remove by RFC 6901 pointers', () => {
    const doc: Obj = { metadata: { name: 'x' }, list: [1, 2] };
    applyJsonPatch(doc, { op: 'add', path: '/metadata/annotations', value: { 'a/b': '1' } });
    applyJsonPatch(doc, { op: 'replace', path: '/metadata/annotations/a~1b', value: '2' });
    applyJsonPatch(doc, { op: 'add', path: '/list/-', value: 3 });
    applyJsonPatch(doc, { op: 'remove', path: '/list/0' });
    expect(doc).toEqual({ metadata: { name: 'x', annotations: { 'a/b': '2' } }, list: [2, 3] });
    expect(() => applyJsonPatch(doc, { op: 'replace', path: '/metadata/labels', value: {} })).toThrow(/nothing there/);
    applyJsonPatch(doc, { op: 'test', path: '/list/1', value: 3 });
    expect(() => applyJsonPatch(doc, { op: 'test', path: '/list/0', value: 3 })).toThrow('JSON patch test /list/0: is 2, expected 3');
  });

  test('`*` and [name=value] reach list elements; create adds missing fields', () => {
    const doc = { webhooks: [{ name: 'a.b.c' }, { name: 'd.e.f', clientConfig: {} }] };
    expect(setField(doc, 'webhooks.*.clientConfig.caBundle', 'X', false)).toBe(0);
    expect(setField(doc, 'webhooks.*.clientConfig.caBundle', 'Y', true)).toBe(2);
    expect(setField(doc, 'webhooks.[name=a.b.c].clientConfig.caBundle', 'Z', false)).toBe(1);
    expect(doc.webhooks.map((w) => (w as Obj)['clientConfig']['caBundle'])).toEqual(['Z', 'Y']);
  });
});

describe('the checker reports', () => {
  const cases: [string, (objects: Obj[]) => void, RegExp][] = [
    [
      'a wrong webhook path',
      (o) => (webhook(o, WEBHOOKS.spiderIPPool.path)['clientConfig']['service']['path'] = '/validate-pool'),
      /\(SpiderIPPool\): clientConfig\.service\.path is "\/validate-pool", expected "\/validate-spiderippool"/,
    ],
    [
      'a container port other than DEFAULT_PORT',
      (o) => (container(o)['ports'][0]['containerPort'] = 8080),
      /no containerPort 8443/,
    ],
    [
      'a Service targetPort other than DEFAULT_PORT',
      (o) => (one(o, 'Service')['spec']['ports'][0]['targetPort'] = 9443),
      /Service "spiderpool-iaas-webhook": targetPort is 9443, expected 8443/,
    ],
    [
      'a --port flag other than DEFAULT_PORT',
      (o) => {
        const args: string[] = container(o)['args'];
        container(o)['args'] = args.map((a) => (a.startsWith('--port') ? '--port=9443' : a));
      },
      /the server listens on "9443"/,
    ],
    [
      'a webhook configuration without the AKS annotation',
      (o) => delete one(o, 'ValidatingWebhookConfiguration')['metadata']['annotations'],
      /annotation admissions\.enforcer\/disabled is nothing, expected "true"/,
    ],
    [
      'a probe on the wrong path',
      (o) => (container(o)['readinessProbe']['httpGet']['path'] = '/healthz'),
      /readinessProbe path is "\/healthz", expected "\/readyz"/,
    ],
    [
      'an HTTP probe',
      (o) => (container(o)['livenessProbe']['httpGet']['scheme'] = 'HTTP'),
      /livenessProbe scheme is "HTTP", expected "HTTPS"/,
    ],
    [
      'a missing ConfigMap matchCondition',
      (o) => delete webhook(o, WEBHOOKS.configMap.path)['matchConditions'],
      /no matchCondition limits it to ConfigMap "spiderpool-conf"/,
    ],
    [
      'a matchCondition on another ConfigMap name',
      (o) =>
        (webhook(o, WEBHOOKS.configMap.path)['matchConditions'][0]['expression'] = "object.metadata.name == 'other'"),
      /matchConditions name ConfigMap \["other"\], expected "spiderpool-conf"/,
    ],
    [
      '--configmap-name disagreeing with the matchCondition',
      (o) => {
        const args: string[] = container(o)['args'];
        container(o)['args'] = args.map((a) => (a.startsWith('--configmap-name') ? '--configmap-name=other' : a));
      },
      new RegExp(`--configmap-name is "other", expected "${DEFAULT_CONFIGMAP_NAME}"`),
    ],
    [
      'DELETE among the pool operations',
      (o) => (webhook(o, WEBHOOKS.spiderIPPool.path)['rules'][0]['operations'] = ['CREATE', 'UPDATE', 'DELETE']),
      /\(SpiderIPPool\): rules\[\]\.operations is \["CREATE","UPDATE","DELETE"\], expected \["CREATE","UPDATE"\]/,
    ],
    [
      'CREATE missing from the pool operations',
      (o) => (webhook(o, WEBHOOKS.spiderIPPool.path)['rules'][0]['operations'] = ['UPDATE']),
      /\(SpiderIPPool\): rules\[\]\.operations is \["UPDATE"\], expected \["CREATE","UPDATE"\]/,
    ],
    [
      'a pool matchCondition reading oldObject without a null test (CREATE)',
      (o) =>
        (webhook(o, WEBHOOKS.spiderIPPool.path)['matchConditions'][0]['expression'] =
          "(has(oldObject.metadata.annotations) && 'ipam.spidernet.io/iaas-provider' in oldObject.metadata.annotations) || (has(object.metadata.annotations) && 'ipam.spidernet.io/iaas-provider' in object.metadata.annotations)"),
      /reads oldObject without testing oldObject != null first/,
    ],
    [
      'no token for the pod',
      (o) => (one(o, 'Deployment')['spec']['template']['spec']['automountServiceAccountToken'] = false),
      /automountServiceAccountToken is false, but the pool cache needs the token/,
    ],
    [
      'a write verb on SpiderIPPools',
      (o) => one(o, 'ClusterRole')['rules'][0]['verbs'].push('update'),
      /ClusterRole "spiderpool-iaas-webhook": verbs on spiderippools are \["get","list","watch","update"\], expected \["get","list","watch"\] \(read only\)/,
    ],
    [
      'a binding to another ServiceAccount',
      (o) => (one(o, 'ClusterRoleBinding')['subjects'][0]['name'] = 'default'),
      /no ClusterRole granting spiderippools \(spiderpool\.spidernet\.io\) is bound to ServiceAccount "spiderpool-iaas-webhook\/spiderpool-iaas-webhook"/,
    ],
    [
      'a binding in the wrong namespace',
      (o) => (one(o, 'ClusterRoleBinding')['subjects'][0]['namespace'] = 'default'),
      /no ClusterRole granting spiderippools/,
    ],
    [
      'the pool status subresource',
      (o) =>
        (webhook(o, WEBHOOKS.spiderIPPool.path)['rules'][0]['resources'] = ['spiderippools', 'spiderippools/status']),
      /matches a subresource/,
    ],
    [
      'CREATE missing from the ConfigMap operations',
      (o) => (webhook(o, WEBHOOKS.configMap.path)['rules'][0]['operations'] = ['UPDATE']),
      /\(ConfigMap\): rules\[\]\.operations is \["UPDATE"\], expected \["CREATE","UPDATE"\]/,
    ],
    [
      'a pool matchCondition on the new object only',
      (o) =>
        (webhook(o, WEBHOOKS.spiderIPPool.path)['matchConditions'][0]['expression'] =
          "has(object.metadata.annotations) && 'ipam.spidernet.io/iaas-provider' in object.metadata.annotations"),
      /annotation on both oldObject and object/,
    ],
    [
      'a pool matchCondition on the old object only (adding the annotation would go unchecked)',
      (o) =>
        (webhook(o, WEBHOOKS.spiderIPPool.path)['matchConditions'][0]['expression'] =
          "has(oldObject.metadata.annotations) && 'ipam.spidernet.io/iaas-provider' in oldObject.metadata.annotations"),
      /annotation on both oldObject and object/,
    ],
    [
      'failurePolicy Ignore',
      (o) => (webhook(o, WEBHOOKS.configMap.path)['failurePolicy'] = 'Ignore'),
      /failurePolicy is "Ignore", expected an explicit "Fail"/,
    ],
    [
      'a missing timeoutSeconds',
      (o) => delete webhook(o, WEBHOOKS.spiderIPPool.path)['timeoutSeconds'],
      /timeoutSeconds is nothing/,
    ],
    [
      'a webhook calling another Service',
      (o) => (webhook(o, WEBHOOKS.configMap.path)['clientConfig']['service']['namespace'] = 'default'),
      /clientConfig\.service is "default"\/"spiderpool-iaas-webhook", expected "spiderpool-iaas-webhook"\/"spiderpool-iaas-webhook"/,
    ],
    [
      'a namespaceSelector without Spiderpool\'s namespace',
      (o) => (webhook(o, WEBHOOKS.configMap.path)['namespaceSelector']['matchExpressions'][0]['values'] = ['default']),
      /namespaceSelector does not select Spiderpool's namespace "kube-system"/,
    ],
    [
      'a writable root filesystem',
      (o) => (container(o)['securityContext']['readOnlyRootFilesystem'] = false),
      /readOnlyRootFilesystem is not true/,
    ],
    [
      'capabilities not dropped',
      (o) => delete container(o)['securityContext']['capabilities'],
      /capabilities\.drop lacks "ALL"/,
    ],
    [
      'no NetworkPolicy',
      (o) => o.splice(o.findIndex((x) => x['kind'] === 'NetworkPolicy'), 1),
      /no NetworkPolicy in "spiderpool-iaas-webhook" selects the webhook's pods and admits TCP 8443 from anywhere/,
    ],
    [
      'a NetworkPolicy admitting only Pods',
      (o) => (one(o, 'NetworkPolicy')['spec']['ingress'][0]['from'] = [{ podSelector: {} }]),
      /no NetworkPolicy .* admits TCP 8443 from anywhere/,
    ],
    [
      'a NetworkPolicy on another port',
      (o) => (one(o, 'NetworkPolicy')['spec']['ingress'][0]['ports'][0]['port'] = 443),
      /no NetworkPolicy .* admits TCP 8443 from anywhere/,
    ],
    [
      'the conf reader allowed every ConfigMap',
      (o) => delete o.find((x) => x['kind'] === 'Role')!['rules'][0]['resourceNames'],
      /resourceNames is nothing, expected \["spiderpool-conf"\]/,
    ],
    [
      'the conf reader in the webhook\'s namespace',
      (o) => (o.find((x) => x['kind'] === 'Role')!['metadata']['namespace'] = 'spiderpool-iaas-webhook'),
      /no Role in "kube-system" granting configmaps/,
    ],
    [
      '--configmap-namespace elsewhere than the ConfigMap webhook',
      (o) => {
        const args: string[] = container(o)['args'];
        container(o)['args'] = args.map((a) => (a.startsWith('--configmap-namespace') ? '--configmap-namespace=spiderpool' : a));
      },
      /--configmap-namespace is "spiderpool", expected "kube-system"/,
    ],
    [
      'a candidate-pool webhook that refuses when down',
      (o) => (webhook(o, WEBHOOKS.workload.path)['failurePolicy'] = 'Fail'),
      /candidate-pools-workload.*failurePolicy is "Fail", expected an explicit "Ignore"/,
    ],
    [
      'a Pod webhook that does not skip controller-owned Pods',
      (o) => webhook(o, WEBHOOKS.pod.path)['matchConditions'].shift(),
      /no matchCondition skips controller-owned Pods/,
    ],
    [
      'a workload webhook sent every workload',
      (o) => delete webhook(o, WEBHOOKS.workload.path)['matchConditions'],
      /no matchCondition tests the "ipam\.spidernet\.io\/ippools" annotation/,
    ],
    [
      'a workload webhook on the scale subresource',
      (o) => webhook(o, WEBHOOKS.workload.path)['rules'][0]['resources'].push('deployments/scale'),
      /matches a subresource/,
    ],
    [
      'a Namespace webhook missing the IPv6 default',
      (o) =>
        (webhook(o, WEBHOOKS.namespace.path)['matchConditions'][0]['expression'] =
          "has(object.metadata.annotations) && 'ipam.spidernet.io/default-ipv4-ippool' in object.metadata.annotations"),
      /no matchCondition tests the "ipam\.spidernet\.io\/default-ipv6-ippool" annotation/,
    ],
    [
      'a single replica',
      (o) => (one(o, 'Deployment')['spec']['replicas'] = 1),
      /spec\.replicas is 1/,
    ],
    [
      'a PodDisruptionBudget allowing no eviction',
      (o) => (one(o, 'PodDisruptionBudget')['spec']['maxUnavailable'] = 0),
      /maxUnavailable is 0 and minAvailable nothing, expected maxUnavailable 1 alone/,
    ],
    [
      'replicas spread only if possible',
      (o) => (one(o, 'Deployment')['spec']['template']['spec']['topologySpreadConstraints'][0]['whenUnsatisfiable'] = 'ScheduleAnyway'),
      /the kubernetes\.io\/hostname spread is "ScheduleAnyway", expected DoNotSchedule/,
    ],
    [
      'a spread counting tainted nodes',
      (o) => delete one(o, 'Deployment')['spec']['template']['spec']['topologySpreadConstraints'][0]['nodeTaintsPolicy'],
      /nodeTaintsPolicy is nothing, expected Honor/,
    ],
    [
      'peer readiness without the pod name',
      (o) => (one(o, 'Deployment')['spec']['template']['spec']['containers'][0]['env'] = one(o, 'Deployment')['spec']['template']['spec']['containers'][0]['env'].filter((e: Obj) => e['name'] !== 'POD_NAME')),
      /--peer-readiness and --rebalance without POD_NAME/,
    ],
    [
      'peer readiness without pods\/status',
      (o) => (o.find((x) => x['kind'] === 'Role' && x['metadata']['name'] === 'spiderpool-iaas-webhook-peers')!['rules'][1]['verbs'] = []),
      /may not patch pods\/status in "spiderpool-iaas-webhook" \(--peer-readiness and --rebalance needs it\)/,
    ],
    [
      'rebalance without the node list',
      (o) => (one(o, 'ClusterRole')['rules'] = one(o, 'ClusterRole')['rules'].filter((r: Obj) => !r['resources'].includes('nodes'))),
      /may not list nodes \(--peer-readiness and --rebalance needs it\)/,
    ],
  ];

  // The configuration the pods write joins the objects, so a case changes it as it
  // changes any object; it is then handed to the checker as what the pods write.
  test.each(cases)('%s', (_name, mutate, expected) => {
    const copy = structuredClone([...rendered, webhookConfigurationOfPods(rendered)!]);
    mutate(copy);
    const podsWrite = copy.find((o) => o['kind'] === 'ValidatingWebhookConfiguration');
    const problems = checkManifests(
      copy.filter((o) => o !== podsWrite),
      podsWrite === undefined ? {} : { podsWrite },
    );
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });

  test('with apiServerCIDRs the webhook port must be admitted from each of those CIDRs, not from anywhere', () => {
    const copy = structuredClone(rendered);
    expect(checkManifests(copy, { apiServerCIDRs: ['10.0.0.10/31'] })).toEqual([expect.stringMatching(/admits TCP 8443 from 10\.0\.0\.10\/31;/)]);
    one(copy, 'NetworkPolicy')['spec']['ingress'][0]['from'] = [{ ipBlock: { cidr: '10.0.0.10/31' } }];
    expect(checkManifests(copy, { apiServerCIDRs: ['10.0.0.10/31'] })).toEqual([]);
    expect(checkManifests(copy, { apiServerCIDRs: ['10.0.0.10/31', '192.0.2.0/24'] })).toEqual([expect.stringMatching(/from 10\.0\.0\.10\/31, 192\.0\.2\.0\/24;/)]);
  });

  test.each([
    ['a read-only certificate volume', (o: Obj[]) => (container(o)['volumeMounts'][0]['readOnly'] = true), /the mount at \/etc\/webhook\/certs is readOnly; with --tls-secret the server writes the certificates there/],
    [
      'a Secret volume with --tls-secret',
      (o: Obj[]) => (one(o, 'Deployment')['spec']['template']['spec']['volumes'][0] = { name: 'certs', secret: { secretName: 'x' } }),
      /volume "certs" mounted at \/etc\/webhook\/certs is not an emptyDir/,
    ],
    [
      'create of Secrets granted again',
      (o: Obj[]) => o.find((x) => x['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!['rules'].push({ apiGroups: [''], resources: ['secrets'], verbs: ['create'] }),
      /may create Secrets beyond get and update of "spiderpool-iaas-webhook-tls"/,
    ],
    ['the Secret left out', (o: Obj[]) => o.splice(o.findIndex((x) => x['kind'] === 'Secret'), 1), /Secret "spiderpool-iaas-webhook-tls" \(--tls-secret\) is not among the manifests; the pods do not create it/],
    [
      'the Secret with data',
      (o: Obj[]) => (o.find((x) => x['kind'] === 'Secret')!['data'] = { 'tls.crt': '' }),
      /Secret "spiderpool-iaas-webhook-tls": has data; an apply would overwrite what the pods wrote/,
    ],
    ['the Secret typed kubernetes.io/tls', (o: Obj[]) => (o.find((x) => x['kind'] === 'Secret')!['type'] = 'kubernetes.io/tls'), /type is "kubernetes.io\/tls"; the empty Secret the pods fill has none/],
    [
      'update of another Secret only',
      (o: Obj[]) => (o.find((x) => x['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!['rules'][0]['resourceNames'] = ['other']),
      /may not update Secret "spiderpool-iaas-webhook-tls"/,
    ],
    ['no patch of the configuration', (o: Obj[]) => (one(o, 'ClusterRole')['rules'][1]['verbs'] = ['get']), /may not patch ValidatingWebhookConfiguration "spiderpool-iaas-webhook"/],
    ['no read of the owner ClusterRole', (o: Obj[]) => (one(o, 'ClusterRole')['rules'] = one(o, 'ClusterRole')['rules'].filter((r: Obj) => !r['resources'].includes('clusterroles'))), /may not get ClusterRole "spiderpool-iaas-webhook" \(--owner-cluster-role reads its uid\)/],
    ['no POD_NAMESPACE', (o: Obj[]) => delete container(o)['env'], /neither --namespace nor POD_NAMESPACE from the downward API/],
    [
      'the configuration among the manifests as well',
      (o: Obj[]) => o.push(webhookConfigurationOfPods(o)!),
      /ValidatingWebhookConfiguration "spiderpool-iaas-webhook" is among the manifests, but the pods write it once they serve/,
    ],
  ])('with --tls-secret and --manage-webhook-configuration: %s', (_name, mutate, expected) => {
    const copy = structuredClone(rendered);
    mutate(copy);
    expect(checkManifests(copy)).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });

  test('a missing ValidatingWebhookConfiguration', () => {
    const copy = structuredClone(rendered);
    container(copy)['args'] = (container(copy)['args'] as string[]).filter((a) => !a.startsWith('--manage-webhook-configuration'));
    const problems = checkManifests(copy);
    expect(problems).toEqual(
      expect.arrayContaining([
        'expected exactly one ValidatingWebhookConfiguration, found 0',
        'expected exactly one webhook for SpiderIPPool (spiderippools), found 0',
        'expected exactly one webhook for ConfigMap (configmaps), found 0',
        'expected exactly one webhook for Pod (candidate pools) (pods), found 0',
      ]),
    );
  });
});
