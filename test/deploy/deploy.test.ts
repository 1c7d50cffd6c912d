/**
 * deploy/ agrees with src/defaults.ts and with itself, and the checker (consistency.ts)
 * reports each way it could not. Node only: deploy/'s objects as its files hold them
 * (render.ts, readKustomization); the ValidatingWebhookConfiguration the pods write is
 * built by consistency.ts with the functions the server uses. test/e2e/deploy.test.ts
 * renders deploy/, overlays/cert-manager and the README's overlays with the real kustomize
 * and applies them with kubectl.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { startNodeFlags } from '../../bench/servers.js';
import { DEFAULT_CONFIGMAP_NAME, DEFAULT_PORT, WEBHOOKS } from '../../src/defaults.js';
import { REPORT_NAMES } from '../../src/store/pool-reports.js';
import { checkManifests, webhookConfigurationOfPods } from './consistency.js';
import { readmeOverlays } from './readme-overlays.js';
import { readKustomization } from './render.js';

// Tests reach into rendered manifests by known paths; `any` keeps that readable.
type Obj = Record<string, any>;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const deployDir = path.join(repoRoot, 'deploy');

let rendered: Obj[];

beforeAll(async () => {
  rendered = await readKustomization(deployDir);
});

function one(objects: Obj[], kind: string): Obj {
  const found = objects.filter((o) => o['kind'] === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as Obj;
}

/** The object of `kind` named `name`; throws when there is none. */
function named(objects: Obj[], kind: string, name: string): Obj {
  const found = objects.find((o) => o['kind'] === kind && o['metadata']['name'] === name);
  if (found === undefined) throw new Error(`no ${kind} named ${name}`);
  return found;
}

/** The namespace of the Role `name` and the rules it grants. */
function roleGrants(objects: Obj[], name: string): { namespace: string; rules: Obj[] } {
  const role = named(objects, 'Role', name);
  return { namespace: role['metadata']['namespace'], rules: role['rules'] };
}

function webhook(objects: Obj[], path: string): Obj {
  const vwc = one(objects, 'ValidatingWebhookConfiguration');
  const found = (vwc['webhooks'] as Obj[]).find((w) => w['clientConfig']?.['service']?.['path'] === path);
  if (found === undefined) throw new Error(`no webhook with path ${path}`);
  return found;
}

const container = (objects: Obj[]): Obj => one(objects, 'Deployment')['spec']['template']['spec']['containers'][0];

describe('deploy/ read without kubectl', () => {
  test('is consistent with src/defaults.ts', () => {
    expect(checkManifests(rendered)).toEqual([]);
  });

  test('renders the Secret empty and no ValidatingWebhookConfiguration: the pods fill the one and write the other once they serve', () => {
    expect(rendered.filter((o) => o['kind'] === 'ValidatingWebhookConfiguration')).toEqual([]);
    expect(rendered.filter((o) => o['kind'] === 'Secret')).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'spiderpool-iaas-webhook-tls',
          namespace: 'spiderpool-iaas-webhook',
          labels: { 'app.kubernetes.io/name': 'spiderpool-iaas-webhook' },
        },
      },
    ]);
    const args: string[] = container(rendered)['args'];
    expect(args).toEqual(
      expect.arrayContaining([
        '--tls-secret=spiderpool-iaas-webhook-tls',
        '--manage-webhook-configuration=spiderpool-iaas-webhook',
        '--owner-cluster-role=spiderpool-iaas-webhook',
      ]),
    );
    expect(one(rendered, 'Deployment')['spec']['template']['spec']['volumes']).toEqual([{ name: 'certs', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } }]);
  });

  test('grants the Secret (get, update: no create), the configuration and the reports by name; list of EndpointSlices only in its namespace', () => {
    expect(roleGrants(rendered, 'spiderpool-iaas-webhook-tls')).toEqual({
      namespace: 'spiderpool-iaas-webhook',
      rules: [
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['spiderpool-iaas-webhook-tls'], verbs: ['get', 'update'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] },
      ],
    });
    const clusterRole = named(rendered, 'ClusterRole', 'spiderpool-iaas-webhook');
    expect(clusterRole['rules'].slice(1)).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        resourceNames: ['spiderpool-iaas-webhook'],
        verbs: ['get', 'patch', 'create'],
      },
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles'],
        resourceNames: ['spiderpool-iaas-webhook', 'spiderpool-iaas-webhook-reports-owner'],
        verbs: ['get'],
      },
      // --rebalance: which nodes could take a replica; read only.
      { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
      // --reports: update and delete by the names the webhook's reports can have, only.
      { apiGroups: ['openreports.io'], resources: ['clusterreports'], verbs: ['list', 'create'] },
      { apiGroups: ['openreports.io'], resources: ['clusterreports'], resourceNames: [...REPORT_NAMES], verbs: ['update', 'delete'] },
    ]);
  });

  test('grants the reports Lease by name (create by none: a POST names its object in the body), bound in its namespace', () => {
    expect(roleGrants(rendered, 'spiderpool-iaas-webhook-reports')).toEqual({
      namespace: 'spiderpool-iaas-webhook',
      rules: [
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['spiderpool-iaas-webhook-reports'], verbs: ['get', 'update'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      ],
    });
    const binding = named(rendered, 'RoleBinding', 'spiderpool-iaas-webhook-reports');
    expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'spiderpool-iaas-webhook', namespace: 'spiderpool-iaas-webhook' }]);
    expect(container(rendered)['args']).toContain('--reports=true');
  });

  test('the reports are owned by a ClusterRole of their own with no rules, so that deleting it deletes only them', () => {
    expect(named(rendered, 'ClusterRole', 'spiderpool-iaas-webhook-reports-owner')['rules']).toEqual([]);
    expect(container(rendered)['args']).toContain('--reports-owner-cluster-role=spiderpool-iaas-webhook-reports-owner');
    expect(container(rendered)['args']).toContain('--owner-cluster-role=spiderpool-iaas-webhook');
  });

  test("the conf-reader Role and binding stay in Spiderpool's namespace, their subject follows the ServiceAccount", () => {
    const binding = named(rendered, 'RoleBinding', 'spiderpool-iaas-webhook-conf-reader');
    expect(roleGrants(rendered, 'spiderpool-iaas-webhook-conf-reader').namespace).toBe('kube-system');
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

describe('the documented overlays', () => {
  test('the README shows the image-only overlay first, docs/install.md the cert-manager one', async () => {
    const titles = (await readmeOverlays()).map((o) => o.title);
    expect(titles[0]).toMatch(/^: deploy\/ as it is, with your image$/);
    expect(titles).toContainEqual(expect.stringMatching(/cert-manager/));
  });
});

describe('deploy/ refuses what the chart refuses (namespace, Pod Security)', () => {
  test.each([
    ['kube-system', {}],
    ['spiderpool', { spiderpoolNamespace: 'spiderpool' }],
  ])("an overlay installing into %s (kube-system or Spiderpool's namespace) is refused", (namespace, options) => {
    expect(checkManifests(rendered, { namespace, ...options })).toContain(
      `installs into namespace "${namespace}", which is kube-system or Spiderpool's: install into a namespace of its own`,
    );
  });

  test('the Namespace deploy/ creates enforces the "restricted" Pod Security Standard; without the label it is refused', () => {
    expect(checkManifests(rendered)).toEqual([]);
    const copy = structuredClone(rendered);
    delete one(copy, 'Namespace')['metadata']['labels']['pod-security.kubernetes.io/enforce'];
    expect(checkManifests(copy)).toEqual([
      'Namespace "spiderpool-iaas-webhook": pod-security.kubernetes.io/enforce is not "restricted", though the pods meet it',
    ]);
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
    const k = parse(await readFile(path.join(deployDir, 'kustomization.yaml'), 'utf8'));
    expect(k.secretGenerator).toBeUndefined();
    const gitignore = (await readFile(path.join(repoRoot, '.gitignore'), 'utf8')).split('\n');
    expect(gitignore).toContain('deploy/tls/');
  });

  test('the image can be overridden through kustomize images:', async () => {
    const k = parse(await readFile(path.join(deployDir, 'base/kustomization.yaml'), 'utf8'));
    const source: unknown = parse(await readFile(path.join(deployDir, 'base/deployment.yaml'), 'utf8'));
    const image: string = (source as Obj)['spec']['template']['spec']['containers'][0]['image'];
    expect(image).toBe('spiderpool-iaas-webhook:0.1.0');
    expect(k.images.map((i: Obj) => i['name'])).toContain(image.split(':')[0]);
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

describe('the checker reports', () => {
  const cases: [string, (objects: Obj[]) => void, RegExp][] = [
    ['a container port other than DEFAULT_PORT', (o) => (container(o)['ports'][0]['containerPort'] = 8080), /no containerPort 8443/],
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
    ['an HTTP probe', (o) => (container(o)['livenessProbe']['httpGet']['scheme'] = 'HTTP'), /livenessProbe scheme is "HTTP", expected "HTTPS"/],
    [
      'a missing ConfigMap matchCondition',
      (o) => delete webhook(o, WEBHOOKS.configMap.path)['matchConditions'],
      /no matchCondition limits it to ConfigMap "spiderpool-conf"/,
    ],
    [
      'a matchCondition on another ConfigMap name',
      (o) => (webhook(o, WEBHOOKS.configMap.path)['matchConditions'][0]['expression'] = "object.metadata.name == 'other'"),
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
      'no token for the pod',
      (o) => (one(o, 'Deployment')['spec']['template']['spec']['automountServiceAccountToken'] = false),
      /automountServiceAccountToken is false, but the pool cache needs the token/,
    ],
    [
      'a write verb on SpiderIPPools',
      (o) => named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'][0]['verbs'].push('update'),
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
      'a webhook calling another Service',
      (o) => (webhook(o, WEBHOOKS.configMap.path)['clientConfig']['service']['namespace'] = 'default'),
      /clientConfig\.service is "default"\/"spiderpool-iaas-webhook", expected "spiderpool-iaas-webhook"\/"spiderpool-iaas-webhook"/,
    ],
    [
      "a namespaceSelector without Spiderpool's namespace",
      (o) => (webhook(o, WEBHOOKS.configMap.path)['namespaceSelector']['matchExpressions'][0]['values'] = ['default']),
      /namespaceSelector does not select Spiderpool's namespace "kube-system"/,
    ],
    ['a writable root filesystem', (o) => (container(o)['securityContext']['readOnlyRootFilesystem'] = false), /readOnlyRootFilesystem is not true/],
    ['capabilities not dropped', (o) => delete container(o)['securityContext']['capabilities'], /capabilities\.drop lacks "ALL"/],
    [
      'no NetworkPolicy',
      (o) =>
        o.splice(
          o.findIndex((x) => x['kind'] === 'NetworkPolicy'),
          1,
        ),
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
      "the conf reader in the webhook's namespace",
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
    ['a single replica', (o) => (one(o, 'Deployment')['spec']['replicas'] = 1), /spec\.replicas is 1/],
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
      (o) =>
        (one(o, 'Deployment')['spec']['template']['spec']['containers'][0]['env'] = one(o, 'Deployment')['spec']['template']['spec']['containers'][0][
          'env'
        ].filter((e: Obj) => e['name'] !== 'POD_NAME')),
      /--peer-readiness and --rebalance without POD_NAME/,
    ],
    [
      'peer readiness without pods/status',
      (o) => (o.find((x) => x['kind'] === 'Role' && x['metadata']['name'] === 'spiderpool-iaas-webhook-peers')!['rules'][1]['verbs'] = []),
      /may not patch pods\/status in "spiderpool-iaas-webhook" \(--peer-readiness and --rebalance needs it\)/,
    ],
    [
      'rebalance without the node list',
      (o) =>
        (named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'] = named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'].filter(
          (r: Obj) => !r['resources'].includes('nodes'),
        )),
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
    expect(checkManifests(copy, { apiServerCIDRs: ['10.0.0.10/31', '192.0.2.0/24'] })).toEqual([
      expect.stringMatching(/from 10\.0\.0\.10\/31, 192\.0\.2\.0\/24;/),
    ]);
  });

  test.each([
    [
      'a read-only certificate volume',
      (o: Obj[]) => (container(o)['volumeMounts'][0]['readOnly'] = true),
      /the mount at \/etc\/webhook\/certs is readOnly; with --tls-secret the server writes the certificates there/,
    ],
    [
      'a Secret volume with --tls-secret',
      (o: Obj[]) => (one(o, 'Deployment')['spec']['template']['spec']['volumes'][0] = { name: 'certs', secret: { secretName: 'x' } }),
      /volume "certs" mounted at \/etc\/webhook\/certs is not an emptyDir/,
    ],
    [
      'create of Secrets granted again',
      (o: Obj[]) =>
        o.find((x) => x['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!['rules'].push({ apiGroups: [''], resources: ['secrets'], verbs: ['create'] }),
      /may create Secrets beyond get and update of "spiderpool-iaas-webhook-tls"/,
    ],
    [
      'the Secret left out',
      (o: Obj[]) =>
        o.splice(
          o.findIndex((x) => x['kind'] === 'Secret'),
          1,
        ),
      /Secret "spiderpool-iaas-webhook-tls" \(--tls-secret\) is not among the manifests; the pods do not create it/,
    ],
    [
      'the Secret with data',
      (o: Obj[]) => (o.find((x) => x['kind'] === 'Secret')!['data'] = { 'tls.crt': '' }),
      /Secret "spiderpool-iaas-webhook-tls": has data; an apply would overwrite what the pods wrote/,
    ],
    [
      'the Secret typed kubernetes.io/tls',
      (o: Obj[]) => (o.find((x) => x['kind'] === 'Secret')!['type'] = 'kubernetes.io/tls'),
      /type is "kubernetes.io\/tls"; the empty Secret the pods fill has none/,
    ],
    [
      'update of another Secret only',
      (o: Obj[]) => (o.find((x) => x['metadata']['name'] === 'spiderpool-iaas-webhook-tls')!['rules'][0]['resourceNames'] = ['other']),
      /may not update Secret "spiderpool-iaas-webhook-tls"/,
    ],
    [
      'no patch of the configuration',
      (o: Obj[]) => (named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'][1]['verbs'] = ['get']),
      /may not patch ValidatingWebhookConfiguration "spiderpool-iaas-webhook"/,
    ],
    [
      'no read of the owner ClusterRole',
      (o: Obj[]) =>
        (named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'] = named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'].filter(
          (r: Obj) => !r['resources'].includes('clusterroles'),
        )),
      /may not get ClusterRole "spiderpool-iaas-webhook" \(--owner-cluster-role reads its uid\)/,
    ],
    [
      'no reports owner ClusterRole among the manifests',
      (o: Obj[]) => o.splice(o.indexOf(named(o, 'ClusterRole', 'spiderpool-iaas-webhook-reports-owner')), 1),
      /--reports-owner-cluster-role names ClusterRole "spiderpool-iaas-webhook-reports-owner", which is not among the manifests/,
    ],
    [
      'no read of the reports owner ClusterRole',
      (o: Obj[]) => (named(o, 'ClusterRole', 'spiderpool-iaas-webhook')['rules'][2]['resourceNames'] = ['spiderpool-iaas-webhook']),
      /may not get ClusterRole "spiderpool-iaas-webhook-reports-owner" \(--reports-owner-cluster-role reads its uid\)/,
    ],
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
    expect(problems).toEqual(['expected exactly one ValidatingWebhookConfiguration, found 0']);
  });
});
