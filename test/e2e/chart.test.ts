/**
 * The Helm chart with the real helm (Helm 4, v4.3.2, built from its Go module) and the real
 * kustomize (`kubectl kustomize`): `helm lint --strict` is clean, the defaults render the
 * objects `kubectl kustomize deploy` renders apart from what each tool names differently,
 * every value changes what it names, values.schema.json refuses typos, and the
 * objects are accepted by the real kube-apiserver (a server-side dry run).
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { generateCertificates } from '../../src/certs/generate.js';
import { parseManifests, renderWithKubectl } from '../deploy/render.js';
import { startApiServer, type ApiServer } from './cluster/apiserver.js';
import { runProcess } from './cluster/processes.js';
import { POLICY_TWINS } from '../../src/rules/pool-rules/twins.js';
import { REPORT_LABELS } from '../../src/store/pool-reports.js';
import {
  CHART_DIR,
  helm,
  helmNotes,
  helmTemplate,
  MIN_KUBE_VERSION,
  PLACEHOLDER_PEMS,
  providedTlsArgs,
  RELEASE,
  RELEASE_NAMESPACE,
  REPO_ROOT,
} from './helm.js';

// Tests reach into rendered manifests by known paths; `any` keeps that readable.
type Obj = Record<string, any>;

const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';
const WEBHOOK_CONFIGURATION = 'spiderpool-iaas-webhook';
/** Labels Helm's conventions add (templates/_helpers.tpl, "sw.labels"); kustomize adds none. */
const HELM_LABELS = ['app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'helm.sh/chart'];
const isHook = (o: Obj): boolean => o['metadata']?.['annotations']?.['helm.sh/hook'] !== undefined;
const key = (o: Obj): string => `${o['kind']} ${o['metadata']['namespace'] ?? '-'}/${o['metadata']['name']}`;
const byKey = (objects: Obj[]): Obj[] => [...objects].sort((a, b) => key(a).localeCompare(key(b)));

function ofKind(objects: Obj[], kind: string): Obj[] {
  return objects.filter((o) => o['kind'] === kind);
}
/** The conf-reader Role or RoleBinding (the TLS Secret's Role and binding stay in the release namespace). */
const confReader = (objects: Obj[], kind: 'Role' | 'RoleBinding'): Obj =>
  one(
    objects.filter((o) => o['metadata']['name'].endsWith('-conf-reader')),
    kind,
  );
function one(objects: Obj[], kind: string): Obj {
  const found = ofKind(objects, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}: ${found.map(key).join(', ')}`);
  return found[0]!;
}
const pod = (objects: Obj[]): Obj => one(objects, 'Deployment')['spec']['template']['spec'];
const container = (objects: Obj[]): Obj => pod(objects)['containers'][0];
const args = (objects: Obj[]): string[] => container(objects)['args'];

/**
 * kustomize's output as the chart renders it. Left out: the Namespace (Helm's
 * `--create-namespace` makes it; a release cannot own its own namespace), the
 * ValidatingWebhookConfiguration (the chart leaves it to the Ready pod, which writes it)
 * and a Secret generated from files on the operator's workstation (deploy/tls/, which
 * the chart's tls.method auto makes unnecessary). A generated object's name loses its
 * hash suffix (Helm has no generators), in the Deployment's volumes that name it too.
 * The namespace kustomize v5.5 gives the ValidatingAdmissionPolicy and its binding goes:
 * its built-in list of cluster-scoped kinds predates them, and the API server drops a
 * cluster-scoped object's namespace anyway.
 */
function asHelmRendersIt(objects: Obj[]): Obj[] {
  for (const o of objects) {
    if (['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].includes(o['kind'])) delete o['metadata']['namespace'];
  }
  const generated = new Map<string, string>();
  for (const o of objects) {
    const m = /^(.*)-[a-z0-9]{10}$/.exec(o['metadata']['name']);
    if (m && ['Secret', 'ConfigMap'].includes(o['kind'])) generated.set(o['metadata']['name'], m[1]!);
  }
  const kept = objects.filter(
    (o) => !['Namespace', 'ValidatingWebhookConfiguration'].includes(o['kind']) && !(o['kind'] === 'Secret' && generated.has(o['metadata']['name'])),
  );
  const text = JSON.stringify(kept, (_key, v) => (typeof v === 'string' && generated.has(v) ? generated.get(v) : v));
  return JSON.parse(text);
}

/** helm's output without its hooks and without the labels Helm's conventions add. */
function withoutHelmAdditions(objects: Obj[]): Obj[] {
  return objects
    .filter((o) => !isHook(o))
    .map((o) => {
      const copy = structuredClone(o);
      for (const label of HELM_LABELS) delete copy['metadata']['labels']?.[label];
      return copy;
    });
}

let defaults: Obj[];

beforeAll(async () => {
  defaults = await helmTemplate();
}, 30 * 60_000);

describe('helm lint --strict', () => {
  test.each([[[]], [['--set', 'tls.method=certmanager']], [providedTlsArgs(PLACEHOLDER_PEMS)]])('is clean with %j', async (extra) => {
    const result = await helm(['lint', '--strict', CHART_DIR, ...extra]);
    expect(`${result.stdout}${result.stderr}`).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(result.code).toBe(0);
  });

  test('loading the chart prints nothing on stderr (files/ holds copies, no symbolic link)', async () => {
    const result = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
  });

  test('installs only on Kubernetes 1.30 or later (matchConditions GA), naming the version', async () => {
    const result = await helm(['template', RELEASE, CHART_DIR, '--kube-version=1.29.9']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes v1.29.9');
  });
});

describe('the defaults render what kubectl kustomize deploy renders', () => {
  test('the same objects, apart from what each tool names differently', async () => {
    const kustomized = asHelmRendersIt(await renderWithKubectl(path.join(REPO_ROOT, 'deploy')));
    const helmed = withoutHelmAdditions(defaults);
    expect(byKey(helmed).map(key)).toEqual(byKey(kustomized).map(key));
    expect(byKey(helmed)).toEqual(byKey(kustomized));
  });

  test('every object carries the labels Helm adds, selectors none of them', () => {
    for (const o of defaults) {
      expect(Object.keys(o['metadata']['labels'] ?? {})).toEqual(expect.arrayContaining(HELM_LABELS));
      expect(JSON.stringify(o['spec']?.['selector'] ?? {})).not.toMatch(/managed-by|instance|helm\.sh/);
    }
  });

  test('no ValidatingWebhookConfiguration in any tls.method: the Ready pod writes it', async () => {
    for (const method of ['auto', 'certmanager']) {
      expect(ofKind(await helmTemplate(['--set', `tls.method=${method}`]), 'ValidatingWebhookConfiguration')).toEqual([]);
    }
    expect(ofKind(defaults, 'ValidatingWebhookConfiguration')).toEqual([]);
  });
});

describe('values', () => {
  test('spiderpool.namespace and spiderpool.configName move the server flags and the conf-reader Role and binding', async () => {
    const objects = await helmTemplate(['--set', 'spiderpool.namespace=spiderpool', '--set', 'spiderpool.configName=my-conf']);
    expect(args(objects)).toEqual(expect.arrayContaining(['--configmap-name=my-conf', '--configmap-namespace=spiderpool']));
    expect(args(objects).filter((a) => a.startsWith('--configmap-'))).toHaveLength(2);
    const role = confReader(objects, 'Role');
    expect(role['metadata']['namespace']).toBe('spiderpool');
    expect(role['rules']).toEqual([{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-conf'], verbs: ['get', 'list', 'watch'] }]);
    const binding = confReader(objects, 'RoleBinding');
    expect(binding['metadata']['namespace']).toBe('spiderpool');
    expect(binding['subjects']).toEqual([{ kind: 'ServiceAccount', name: 'spiderpool-iaas-webhook', namespace: RELEASE_NAMESPACE }]);
  });

  test('another release namespace moves every namespaced object and the binding subjects, not the conf-reader', async () => {
    const objects = await helmTemplate(['--set', 'prometheus.serviceMonitor.install=true'], 'webhooks');
    const conf = [confReader(objects, 'Role'), confReader(objects, 'RoleBinding')];
    // Prometheus checks the pods' certificate, which names the Service in the release's namespace.
    expect(one(objects, 'ServiceMonitor')['spec']['endpoints'].map((e: Obj) => e['tlsConfig']['serverName'])).toEqual(['spiderpool-iaas-webhook.webhooks.svc']);
    for (const o of objects.filter((x) => x['metadata']['namespace'] !== undefined && !conf.includes(x))) {
      expect([key(o), o['metadata']['namespace']]).toEqual([key(o), 'webhooks']);
    }
    for (const o of conf) expect([key(o), o['metadata']['namespace']]).toEqual([key(o), 'kube-system']);
    for (const binding of [...ofKind(objects, 'RoleBinding'), ...ofKind(objects, 'ClusterRoleBinding')]) {
      for (const subject of binding['subjects']) expect(subject['namespace']).toBe('webhooks');
    }
  });

  test('image, replicas, resources and the scheduling fields', async () => {
    const objects = await helmTemplate([
      '--set',
      'image.repository=registry.example.com/spiderpool-iaas-webhook',
      '--set',
      'image.tag=0.1.1',
      '--set',
      'image.pullPolicy=Always',
      '--set',
      'replicas=3',
      '--set',
      'resources.requests.cpu=100m',
      '--set',
      'nodeSelector.role=infra',
      '--set',
      'tolerations[0].key=infra,tolerations[0].operator=Exists',
      '--set',
      'priorityClassName=system-cluster-critical',
      '--set',
      'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=role',
      '--set',
      'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists',
    ]);
    expect(container(objects)['image']).toBe('registry.example.com/spiderpool-iaas-webhook:0.1.1');
    expect(container(objects)['imagePullPolicy']).toBe('Always');
    // --set merges into the defaults, as a values file does.
    expect(container(objects)['resources']).toEqual({ requests: { cpu: '100m', memory: '230Mi' }, limits: { memory: '640Mi' } });
    expect(one(objects, 'Deployment')['spec']['replicas']).toBe(3);
    expect(pod(objects)['nodeSelector']).toEqual({ role: 'infra' });
    // Added after deploy/base's own: a dead node's pods leave after 10 s.
    expect(pod(objects)['tolerations'].map((t: Obj) => t['key'])).toEqual(['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready', 'infra']);
    expect(pod(objects)['priorityClassName']).toBe('system-cluster-critical');
    expect(pod(objects)['affinity']['nodeAffinity']).toBeDefined();
    // The hook Job runs the same image where the pods may run.
    const job = one(objects, 'Job')['spec']['template']['spec'];
    expect(job['containers'][0]['image']).toBe('registry.example.com/spiderpool-iaas-webhook:0.1.1');
    expect(job['nodeSelector']).toEqual({ role: 'infra' });
  });

  test('image.digest (what a released chart sets) installs repository@digest in the pods and the hook Job, the tag ignored', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const objects = await helmTemplate([
      '--set',
      'image.repository=127.0.0.1:5000/spiderpool-iaas-webhook',
      '--set',
      'image.tag=0.1.1',
      '--set',
      `image.digest=${digest}`,
    ]);
    expect(container(objects)['image']).toBe(`127.0.0.1:5000/spiderpool-iaas-webhook@${digest}`);
    expect(one(objects, 'Job')['spec']['template']['spec']['containers'][0]['image']).toBe(`127.0.0.1:5000/spiderpool-iaas-webhook@${digest}`);
    const bad = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`, '--set', 'image.digest=latest']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/'\/image\/digest': 'latest' does not match pattern/);
  });

  test('podDisruptionBudget and networkPolicy', async () => {
    expect(
      one(await helmTemplate(['--set', 'replicas=5', '--set', 'podDisruptionBudget.maxUnavailable=2']), 'PodDisruptionBudget')['spec']['maxUnavailable'],
    ).toBe(2);
    // A budget that allows no eviction blocks every node drain for good (kubectl drain, autoscaler, node upgrades).
    for (const set of [
      ['--set', 'podDisruptionBudget.maxUnavailable=0'],
      ['--set', 'podDisruptionBudget.maxUnavailable=0%'],
    ]) {
      const result = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`, ...set]);
      expect([set, result.code]).toEqual([set, 1]);
      expect(result.stderr).toMatch(/podDisruptionBudget[./]maxUnavailable/);
    }
    expect(ofKind(await helmTemplate(['--set', 'replicas=1', '--set', 'podDisruptionBudget.enabled=false']), 'PodDisruptionBudget')).toEqual([]);
    const off = await helmTemplate(['--set', 'podDisruptionBudget.enabled=false', '--set', 'networkPolicy.enabled=false']);
    expect([ofKind(off, 'PodDisruptionBudget'), ofKind(off, 'NetworkPolicy')]).toEqual([[], []]);
    const cidrs = ['--set', 'networkPolicy.apiServerCIDRs={10.0.0.0/24,fd00::/64}'];
    const narrowed = one(await helmTemplate(cidrs), 'NetworkPolicy');
    const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    expect(narrowed['spec']['ingress'].map((rule: Obj) => rule['from'])).toEqual([
      [{ ipBlock: { cidr: '10.0.0.0/24' } }, { ipBlock: { cidr: 'fd00::/64' } }],
      [monitoring],
    ]);
    for (const rule of narrowed['spec']['ingress']) expect(rule['ports']).toEqual([{ protocol: 'TCP', port: 8443 }]);
    // Prometheus elsewhere, in two namespaces, or nothing scraping: no metrics rule.
    const two = one(await helmTemplate([...cidrs, '--set', 'networkPolicy.metricsNamespaces={prometheus,monitoring}']), 'NetworkPolicy');
    expect(two['spec']['ingress'][1]['from'].map((peer: Obj) => peer['namespaceSelector']['matchLabels']['kubernetes.io/metadata.name'])).toEqual([
      'prometheus',
      'monitoring',
    ]);
    const none = one(await helmTemplate([...cidrs, '--set-json', 'networkPolicy.metricsNamespaces=[]']), 'NetworkPolicy');
    expect(none['spec']['ingress']).toHaveLength(1);
    // Without CIDRs the port is open to all; no rule of its own is needed.
    const open = one(await helmTemplate(['--set', 'networkPolicy.metricsNamespaces={prometheus}']), 'NetworkPolicy');
    expect(open['spec']['ingress'].map((rule: Obj) => rule['from'])).toEqual([undefined]);
    // A namespace that is not a DNS label fails the install.
    const bad = await helm([
      'template',
      RELEASE,
      CHART_DIR,
      `--kube-version=${MIN_KUBE_VERSION}`,
      ...cidrs,
      '--set',
      'networkPolicy.metricsNamespaces={Monitoring}',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("at '/networkPolicy/metricsNamespaces/0': 'Monitoring' does not match pattern");
  });

  test('networkPolicy with the CIDRs of deploy/components/network-policy-api-server renders what kustomize renders with that component', async () => {
    const policy = one(await kustomizeBaseWith('network-policy-api-server'), 'NetworkPolicy');
    const cidrs = policy['spec']['ingress'][0]['from'].map((peer: Obj) => peer['ipBlock']['cidr'] as string);
    const helmed = one(await helmTemplate(['--set', `networkPolicy.apiServerCIDRs={${cidrs.join(',')}}`]), 'NetworkPolicy');
    expect(helmed['spec']).toEqual({ ...policy['spec'], podSelector: helmed['spec']['podSelector'] });
    expect(helmed['spec']['podSelector']).toEqual(policy['spec']['podSelector']);
  });

  test('enforcement: serve gets --enforcement per value; Audit by default renders what kustomize renders with deploy/components/enforcement-audit', async () => {
    expect(args(await helmTemplate([])).filter((a) => a.startsWith('--enforcement'))).toEqual([]);
    const mixed = await helmTemplate([
      '--set',
      'enforcement.default=Warn',
      '--set',
      'enforcement.rules.mode-fixed=Deny',
      '--set',
      'enforcement.rules.conf-yml=Audit',
    ]);
    expect(args(mixed).filter((a) => a.startsWith('--enforcement'))).toEqual([
      '--enforcement=Warn',
      '--enforcement=conf-yml=Audit',
      '--enforcement=mode-fixed=Deny',
    ]);
    const kustomized = one(await kustomizeBaseWith('enforcement-audit', '../deploy'), 'Deployment')['spec']['template']['spec']['containers'][0]['args'];
    expect(args(await helmTemplate(['--set', 'enforcement.default=Audit'])).filter((a) => a.startsWith('--enforcement'))).toEqual(
      kustomized.filter((a: string) => a.startsWith('--enforcement')),
    );
    const refused = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`, '--set', 'enforcement.rules.mode-fixd=Deny']);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 1,
      stderr: expect.stringContaining("additional properties 'mode-fixd' not allowed"),
    });
  });

  test('tls.method provided: the Secret from the values, mounted at the cert dir; each missing PEM is named', async () => {
    const provided = providedTlsArgs(PLACEHOLDER_PEMS);
    const objects = await helmTemplate(provided);
    const secret = one(objects, 'Secret');
    expect(secret['type']).toBe('kubernetes.io/tls');
    expect(secret['data']).toEqual({ 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5', 'ca.crt': 'Y2E=' });
    expect(secret['metadata']['namespace']).toBe(RELEASE_NAMESPACE);
    expectMountedCertDir(objects, secret['metadata']['name']);
    for (const missing of ['tlsCert', 'tlsKey', 'tlsCa']) {
      const without = provided.filter((p, i) => !(provided[i + 1]?.startsWith(`tls.provided.${missing}=`) || p.startsWith(`tls.provided.${missing}=`)));
      const result = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`, ...without]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`tls.method provided needs tls.provided.${missing}`);
    }
  });

  test('tls.method provided and certmanager grant nothing on Secrets (the kustomize overlay: test/deploy/deploy.test.ts); auto keeps get/update of its Secret (no create), which it renders empty', async () => {
    const roleRules = (objects: Obj[]) => {
      expect(JSON.stringify(objects.filter((o) => o['kind'] === 'Role' && !o['metadata']['name'].endsWith('-tls')))).not.toContain('secrets');
      return objects.filter((o) => o['kind'] === 'Role' && o['metadata']['name'].endsWith('-tls')).map((o) => o['rules']);
    };
    const endpointSlices = { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] };
    const provided = providedTlsArgs(PLACEHOLDER_PEMS);
    for (const method of [provided, ['--set', 'tls.method=certmanager']]) {
      const objects = await helmTemplate(method);
      expect(roleRules(objects)).toEqual([[endpointSlices]]);
      expect(JSON.stringify(objects.filter((o) => o['kind'] === 'ClusterRole' && !isHook(o)).map((o) => o['rules']))).not.toContain('secrets');
    }
    expect(roleRules(defaults)).toEqual([
      [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['spiderpool-iaas-webhook-tls'], verbs: ['get', 'update'] }, endpointSlices],
    ]);
    expect(ofKind(defaults, 'Secret').map((o) => [o['metadata']['name'], o['type'], o['data']])).toEqual([
      ['spiderpool-iaas-webhook-tls', undefined, undefined],
    ]);
  });

  test('each of peerReadiness, rebalance and reports off drops only its own RBAC rules: the reports Lease stays without peer readiness', async () => {
    const rulesOf = (objects: Obj[], kind: string, name: string) => objects.find((o) => o['kind'] === kind && o['metadata']['name'] === name)?.['rules'];
    const resources = (rules: Obj[] | undefined) => (rules ?? []).map((r) => r['resources'][0]);
    const reportsRole = rulesOf(defaults, 'Role', 'spiderpool-iaas-webhook-reports');
    expect(resources(reportsRole)).toEqual(['leases', 'leases']);
    const noPeers = await helmTemplate(['--set', 'peerReadiness.enabled=false']);
    expect(rulesOf(noPeers, 'Role', 'spiderpool-iaas-webhook-reports')).toEqual(reportsRole);
    expect(resources(rulesOf(noPeers, 'Role', 'spiderpool-iaas-webhook-peers'))).toEqual(['pods', 'pods/eviction']);
    const noReports = await helmTemplate(['--set', 'reports.enabled=false']);
    expect(noReports.filter((o) => o['metadata']['name'] === 'spiderpool-iaas-webhook-reports')).toEqual([]);
    // Their owner goes too, so that an upgrade turning them off deletes the reports (garbage collection).
    expect(rulesOf(defaults, 'ClusterRole', 'spiderpool-iaas-webhook-reports-owner')).toEqual([]);
    expect(rulesOf(noReports, 'ClusterRole', 'spiderpool-iaas-webhook-reports-owner')).toBeUndefined();
    const argsOf = (objects: Obj[]) => objects.find((o) => o['kind'] === 'Deployment')?.['spec']['template']['spec']['containers'][0]['args'];
    expect(argsOf(defaults)).toContain('--reports-owner-cluster-role=spiderpool-iaas-webhook-reports-owner');
    expect(argsOf(noReports).filter((a: string) => a.startsWith('--reports'))).toEqual(['--reports=false']);
    expect(resources(rulesOf(noReports, 'ClusterRole', 'spiderpool-iaas-webhook'))).not.toContain('clusterreports');
    expect(rulesOf(noReports, 'Role', 'spiderpool-iaas-webhook-peers')).toEqual(rulesOf(defaults, 'Role', 'spiderpool-iaas-webhook-peers'));
  });

  test("tls.method certmanager: the overlay's own CA and serving Certificate in the release namespace, for its Service names", async () => {
    const objects = await helmTemplate(['--set', 'tls.method=certmanager', '--set', 'tls.certmanager.certValidityDuration=30'], 'webhooks');
    const overlay = parseManifests(await readFile(path.join(REPO_ROOT, 'deploy/overlays/cert-manager/certificates.yaml'), 'utf8'));
    const certManagerKinds = objects.filter((o) => String(o['apiVersion']).startsWith('cert-manager.io/'));
    expect(certManagerKinds.map((o) => `${o['kind']}/${o['metadata']['name']}`).sort()).toEqual(
      overlay.map((o: Obj) => `${o['kind']}/${o['metadata']['name']}`).sort(),
    );
    for (const o of certManagerKinds) expect(o['metadata']['namespace']).toBe('webhooks');
    const serving = certManagerKinds.find((o) => o['kind'] === 'Certificate' && !o['spec']['isCA'])!;
    expect(serving['spec']['dnsNames']).toEqual([
      'spiderpool-iaas-webhook',
      'spiderpool-iaas-webhook.webhooks',
      'spiderpool-iaas-webhook.webhooks.svc',
      'spiderpool-iaas-webhook.webhooks.svc.cluster.local',
    ]);
    expect(serving['spec']['commonName']).toBe('spiderpool-iaas-webhook.webhooks.svc');
    expect([serving['spec']['duration'], serving['spec']['renewBefore']]).toEqual(['720h', '240h']);
    expect(ofKind(objects, 'Secret')).toEqual([]);
    expectMountedCertDir(objects, serving['spec']['secretName']);
    // The pods own caBundle (they keep the old CA through a CA change); cainjector would write the new one alone.
    expect(args(objects).filter((a) => a.includes('inject-ca-from'))).toEqual([]);

    const issued = await helmTemplate(['--set', 'tls.method=certmanager', '--set', 'tls.certmanager.issuerName=corp-ca']);
    const only = issued.filter((o) => String(o['apiVersion']).startsWith('cert-manager.io/'));
    expect(only.map(key)).toEqual([`Certificate ${RELEASE_NAMESPACE}/${serving['metadata']['name']}`]);
    expect(only[0]!['spec']['issuerRef']).toEqual({ group: 'cert-manager.io', kind: 'Issuer', name: 'corp-ca' });
    expect([only[0]!['spec']['duration'], only[0]!['spec']['renewBefore']]).toEqual(['8760h', '720h']);
  });

  test("refuses to install into kube-system or Spiderpool's namespace, in one line saying what to do", async () => {
    for (const [namespace, extra] of [
      ['kube-system', []],
      ['spiderpool', ['--set', 'spiderpool.namespace=spiderpool']],
    ] as const) {
      const result = await helm(['template', RELEASE, CHART_DIR, '--namespace', namespace, `--kube-version=${MIN_KUBE_VERSION}`, ...extra]);
      expect([namespace, result.code]).toEqual([namespace, 1]);
      expect(result.stderr).toMatch(
        new RegExp(
          `^Error: execution error at \\(spiderpool-iaas-webhook/templates/base\\.yaml:\\d+:\\d+\\): refusing to install into namespace "${namespace}" \\(kube-system or Spiderpool's, spiderpool\\.namespace\\): .*; install with -n spiderpool-iaas-webhook --create-namespace$`,
          'm',
        ),
      );
    }
    // Spiderpool elsewhere: kube-system is still refused, its own namespace is not the chart's to refuse.
    expect(
      (
        await helm([
          'template',
          RELEASE,
          CHART_DIR,
          '--namespace',
          'kube-system',
          `--kube-version=${MIN_KUBE_VERSION}`,
          '--set',
          'spiderpool.namespace=spiderpool',
        ])
      ).code,
    ).toBe(1);
  });

  test('clientCA.caCert renders what kustomize renders with deploy/components/client-ca, plus the ConfigMap; a value that is no PEM is refused', async () => {
    const kustomized = await kustomizeBaseWith('client-ca');
    const work = await mkdtemp(path.join(tmpdir(), 'chart-client-ca-'));
    try {
      const pem = (await generateCertificates({ serviceName: 'client-ca', namespace: 'test' })).caCertPem;
      await writeFile(path.join(work, 'client-ca.crt'), pem);
      const helmed = await helmTemplate(['--set-file', `clientCA.caCert=${path.join(work, 'client-ca.crt')}`]);
      expect(pod(helmed)['volumes']).toEqual(pod(kustomized)['volumes']);
      expect(container(helmed)['volumeMounts']).toEqual(container(kustomized)['volumeMounts']);
      expect(args(helmed).filter((a) => a.startsWith('--client-ca-file'))).toEqual(['--client-ca-file=/etc/webhook/client-ca/ca.crt']);
      const configMap = ofKind(helmed, 'ConfigMap').find((o) => o['metadata']['name'] === 'spiderpool-iaas-webhook-client-ca')!;
      expect(configMap['metadata']['namespace']).toBe(RELEASE_NAMESPACE);
      expect(configMap['data']).toEqual({ 'ca.crt': pem });
      expect(ofKind(defaults, 'ConfigMap').filter((o) => o['metadata']['name'] === 'spiderpool-iaas-webhook-client-ca')).toEqual([]);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    const notPem = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`, '--set', 'clientCA.caCert=Y2E=']);
    expect(notPem.code).toBe(1);
    expect(notPem.stderr).toContain("clientCA.caCert must be the CA's PEM certificate");
  });

  test('unsyncedPools sets --unsynced-pools', async () => {
    expect(args(defaults).filter((a) => a.startsWith('--unsynced-pools'))).toEqual(['--unsynced-pools=Refuse']);
    expect(args(await helmTemplate(['--set', 'unsyncedPools=Warn'])).filter((a) => a.startsWith('--unsynced-pools'))).toEqual(['--unsynced-pools=Warn']);
  });

  test('`helm upgrade --reuse-values` from a release made before clientCA and unsyncedPools: renders, with their defaults', async () => {
    // --reuse-values takes the previous release's values, not the new chart's defaults: a chart whose values lack the new keys.
    const dir = await mkdtemp(path.join(tmpdir(), 'chart-reuse-'));
    try {
      await cp(CHART_DIR, dir, { recursive: true, dereference: true });
      const values = parse(await readFile(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Obj;
      delete values['clientCA'];
      delete values['unsyncedPools'];
      await writeFile(path.join(dir, 'values.yaml'), stringify(values));
      const result = await helm(['template', RELEASE, dir, '--namespace', RELEASE_NAMESPACE, `--kube-version=${MIN_KUBE_VERSION}`]);
      expect(result.stderr).not.toContain('Error');
      expect(args(parseManifests(result.stdout)).filter((a) => a.startsWith('--unsynced-pools') || a.startsWith('--client-ca'))).toEqual([
        '--unsynced-pools=Refuse',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('values.schema.json refuses a misspelt key, an unknown key and a wrong type, naming them', async () => {
    for (const [set, named] of [
      ['spiderpool.namespce=spiderpool', 'namespce'],
      ['tls.provided.cert=x', 'cert'],
      ['replicas=two', 'replicas'],
      ['tls.method=manual', 'method'],
    ] as const) {
      const result = await helm(['template', RELEASE, CHART_DIR, `--kube-version=${MIN_KUBE_VERSION}`, '--set', set]);
      expect([set, result.code]).toEqual([set, 1]);
      expect(result.stderr).toMatch(/values don't meet the specifications of the schema/);
      expect(result.stderr).toContain(named);
    }
  });
});

/**
 * `kubectl kustomize` of deploy/base (or `resource`, from an overlay beside deploy/) with the
 * component deploy/components/`component`, in a copy of deploy/.
 */
async function kustomizeBaseWith(component: string, resource = '../deploy/base'): Promise<Obj[]> {
  const work = await mkdtemp(path.join(tmpdir(), `chart-${component}-`));
  try {
    await cp(path.join(REPO_ROOT, 'deploy'), path.join(work, 'deploy'), { recursive: true });
    const overlay = path.join(work, 'overlay');
    await mkdir(overlay);
    await writeFile(path.join(overlay, 'kustomization.yaml'), stringify({ resources: [resource], components: [`../deploy/components/${component}`] }));
    const kustomized = await runProcess(KUBECTL, ['kustomize', overlay]);
    expect(kustomized.stderr).toBe('');
    return parseManifests(kustomized.stdout);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The Deployment serves the pair of Secret `secretName`, mounted read-only at --cert-dir, and writes its webhook configuration. */
function expectMountedCertDir(objects: Obj[], secretName: string): void {
  const a = args(objects);
  expect(a).toEqual(
    expect.arrayContaining(['--cert-dir=/etc/webhook/certs', '--no-generate-certs', `--manage-webhook-configuration=${WEBHOOK_CONFIGURATION}`]),
  );
  expect(a.filter((x) => x.startsWith('--tls-secret'))).toEqual([]);
  expect(pod(objects)['volumes'].filter((v: Obj) => v['name'] === 'certs')).toEqual([{ name: 'certs', secret: { secretName, defaultMode: 288 } }]);
  expect(container(objects)['volumeMounts'].filter((m: Obj) => m['mountPath'] === '/etc/webhook/certs')).toEqual([
    { name: 'certs', mountPath: '/etc/webhook/certs', readOnly: true },
  ]);
}

describe('NOTES.txt follows the enforcement actions (docs/operations.md, "Rolling out")', () => {
  const reportsCommand = `kubectl get clusterreports -l ${Object.entries(REPORT_LABELS)
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}`;
  const upgrade = `helm upgrade ${RELEASE} CHART -n ${RELEASE_NAMESPACE} --reuse-values --set`;
  /** The notes with every run of white space one space: prose as read, wherever its lines wrap. */
  const prose = (notes: string) => notes.replace(/\s+/g, ' ');
  /** Step 4's pointer past the pool rules, which neither the reports nor `audit` cover. */
  const othersRead =
    'the rules on stored pools only; for the others (conf-yml, the UPDATE-only rules) read new writes: ' +
    `the webhook's log lines with "decision":"warn" or "audit", and the metric spiderpool_iaas_webhook_decisions_total`;

  test('every rule Deny (the default): the dry run is refused, and no rollout step', async () => {
    const notes = await helmNotes();
    expect(notes).toContain('# expect: The ConfigMap "spiderpool-conf" is invalid: ...');
    expect(prose(notes)).toContain('(refused while iaasNetworkProvider.serverUrl is set, a Warning while it is empty)');
    expect(notes).not.toMatch(/^4\. /m);
  });

  test('installed in Audit: nothing is refused yet, the reports say what would be, then Warn, then Deny', async () => {
    const notes = await helmNotes(['--set', 'enforcement.default=Audit']);
    expect(notes).not.toContain('is invalid');
    // With serverUrl empty the rule does not fire: the grep for the log line would find nothing.
    expect(prose(notes)).toContain(
      'conf-yml is Audit: the write goes through without a word, and the webhook logs it, while iaasNetworkProvider.serverUrl is set; while it is empty, a Warning and no log line',
    );
    expect(notes).toContain('# expect: configmap/spiderpool-conf configured (server dry run), and a log line:');
    expect(notes).toMatch(/^4\. Nothing is refused yet \(enforcement\.default Audit\)\.$/m);
    expect(notes).toContain(`\n   ${reportsCommand}\n`);
    expect(prose(notes)).toContain(`The reports cover ${othersRead}`);
    const upgrades = notes.split('\n').filter((line) => line.trim().startsWith('helm upgrade'));
    expect(upgrades.map((line) => line.trim())).toEqual([`${upgrade} enforcement.default=Warn`, `${upgrade} enforcement.default=Deny`]);
  });

  test('conf-yml in Warn among Deny rules: the dry run gets a Warning; only the Deny rules refuse, and conf-yml is the one to switch', async () => {
    const notes = await helmNotes(['--set', 'enforcement.rules.conf-yml=Warn']);
    expect(notes).toContain('# expect: Warning: ... then configmap/spiderpool-conf configured (server dry run)');
    expect(prose(notes)).toContain(
      'conf-yml is Warn: a Warning, and the write goes through, while iaasNetworkProvider.serverUrl is set; while it is empty, a Warning that the timeout is ignored',
    );
    expect(notes).toMatch(/^4\. Only the rules in Deny refuse a write \(enforcement\.default Deny, enforcement\.rules \{"conf-yml":"Warn"\}\)\.$/m);
    const upgrades = notes.split('\n').filter((line) => line.trim().startsWith('helm upgrade'));
    expect(upgrades.map((line) => line.trim())).toEqual([`${upgrade} enforcement.rules.conf-yml=Deny`]);
  });

  test('without reports, the rollout step reads the stored pools with audit instead', async () => {
    const notes = await helmNotes(['--set', 'enforcement.default=Warn', '--set', 'reports.enabled=false']);
    expect(notes).not.toContain('clusterreports');
    expect(notes).toContain('\n   spiderpool-iaas-webhook audit --kubeconfig ~/.kube/config\n');
    expect(prose(notes)).toContain(`The audit covers ${othersRead}`);
  });
});

describe('the pre-delete hook', () => {
  test('a Job running `unregister` for the webhook configuration, with RBAC for that one object, all hooks deleted once they succeed', () => {
    const hooks = defaults.filter(isHook);
    expect(hooks.map((o) => o['kind']).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'Job', 'ServiceAccount']);
    for (const o of hooks) {
      expect(o['metadata']['annotations']['helm.sh/hook']).toBe('pre-delete');
      expect(o['metadata']['annotations']['helm.sh/hook-delete-policy']).toBe('before-hook-creation,hook-succeeded');
    }
    const weight = (kind: string) => Number(one(hooks, kind)['metadata']['annotations']['helm.sh/hook-weight']);
    expect(weight('ServiceAccount')).toBeLessThan(weight('Job'));
    expect(weight('ClusterRoleBinding')).toBeLessThan(weight('Job'));
    expect(one(hooks, 'ClusterRole')['rules']).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        resourceNames: [WEBHOOK_CONFIGURATION],
        verbs: ['get', 'delete'],
      },
    ]);
    const job = one(hooks, 'Job')['spec']['template']['spec'];
    expect(job['containers'][0]['args']).toEqual(['unregister', `--name=${WEBHOOK_CONFIGURATION}`]);
    expect(job['serviceAccountName']).toBe(one(hooks, 'ServiceAccount')['metadata']['name']);
  });
});

describe('components (deploy/components/*)', () => {
  /** The objects each component's kustomization lists, as its files spell them. */
  async function componentObjects(): Promise<Obj[]> {
    const dir = path.join(REPO_ROOT, 'deploy/components');
    const objects: Obj[] = [];
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const kustomization = await readFile(path.join(dir, name, 'kustomization.yaml'), 'utf8').then(parse, () => undefined);
      for (const file of (kustomization?.resources ?? []) as string[]) {
        objects.push(...parseManifests(await readFile(path.join(dir, name, file), 'utf8')));
      }
    }
    return objects;
  }
  const ALL_ON = [
    'validatingAdmissionPolicy.enabled=true',
    'prometheus.serviceMonitor.install=true',
    'prometheus.prometheusRule.install=true',
    'grafanaDashboard.install=true',
    'grafanaDashboard.grafanaOperator=true',
  ];
  const ALL_OFF = ALL_ON.map((s) => s.replace('=true', '=false'));

  test('every object a component lists is rendered when its value is on, none when all are off', async () => {
    const listed = (await componentObjects()).map((o) => `${o['kind']}/${o['metadata']['name']}`);
    const on = (await helmTemplate(ALL_ON.flatMap((s) => ['--set', s]))).map((o) => `${o['kind']}/${o['metadata']['name']}`);
    const off = (await helmTemplate(ALL_OFF.flatMap((s) => ['--set', s]))).map((o) => `${o['kind']}/${o['metadata']['name']}`);
    expect(on).toEqual(expect.arrayContaining(listed));
    expect(off.filter((o) => listed.includes(o))).toEqual([]);
  });
});

describe('the ValidatingAdmissionPolicy by enforcement action (templates/validating-admission-policy.yaml)', () => {
  const policyObjects = async (...sets: string[]): Promise<Obj[]> =>
    (await helmTemplate(sets.flatMap((set) => ['--set', set]))).filter((o) => String(o['kind']).startsWith('ValidatingAdmissionPolicy'));

  test('every rule Deny by default; only the Deny rules otherwise; neither object when no rule is Deny', async () => {
    const all = await policyObjects();
    expect(all.map((o) => o['kind'])).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    expect(all[0]!['spec']['validations'].map((v: Obj) => v['expression'])).toEqual(Object.values(POLICY_TWINS).map((t) => `!variables.${t.variable}`));
    const one = await policyObjects('enforcement.default=Warn', 'enforcement.rules.mode-fixed=Deny');
    expect(one[0]!['spec']['validations'].map((v: Obj) => v['expression'])).toEqual(['!variables.modeChanged']);
    const allButOne = await policyObjects('enforcement.rules.mode-fixed=Audit');
    expect(allButOne[0]!['spec']['validations']).toHaveLength(Object.keys(POLICY_TWINS).length - 1);
    expect(await policyObjects('enforcement.default=Audit')).toEqual([]);
  });
});

describe('monitoring (deploy/components/monitoring), each object by its own value', () => {
  /** The monitoring component's objects as `Kind/name`. */
  async function monitoringObjects(): Promise<string[]> {
    const dir = path.join(REPO_ROOT, 'deploy/components/monitoring');
    const kustomization = parse(await readFile(path.join(dir, 'kustomization.yaml'), 'utf8'));
    const files = (kustomization.resources as string[]).map((file) => readFile(path.join(dir, file), 'utf8'));
    return (await Promise.all(files)).flatMap((text) => parseManifests(text)).map((o: Obj) => `${o['kind']}/${o['metadata']['name']}`);
  }

  test.each([
    [[], []],
    [['prometheus.serviceMonitor.install=true'], ['ServiceMonitor']],
    [['prometheus.prometheusRule.install=true'], ['PrometheusRule']],
    [['grafanaDashboard.install=true'], ['ConfigMap']],
    [
      ['grafanaDashboard.install=true', 'grafanaDashboard.grafanaOperator=true'],
      ['ConfigMap', 'GrafanaDashboard'],
    ],
    [['grafanaDashboard.grafanaOperator=true'], []],
  ])('--set %j renders the monitoring objects %j, in the release namespace', async (values, kinds) => {
    const listed = await monitoringObjects();
    expect(listed.map((o) => o.split('/')[0]).sort()).toEqual(['ConfigMap', 'GrafanaDashboard', 'PrometheusRule', 'ServiceMonitor']);
    const rendered = (await helmTemplate(values.flatMap((v) => ['--set', v]))).filter((o) => listed.includes(`${o['kind']}/${o['metadata']['name']}`));
    expect(rendered.map((o) => o['kind']).sort()).toEqual(kinds);
    for (const o of rendered) expect(o['metadata']['namespace']).toBe(RELEASE_NAMESPACE);
  });
});

describe('the real kube-apiserver accepts what the chart renders', () => {
  let api: ApiServer | undefined;
  let logDir: string | undefined;
  afterAll(async () => {
    await api?.stop();
    if (logDir !== undefined) await rm(logDir, { recursive: true, force: true });
  });

  test('every object of the defaults and of tls.method provided, as a server-side dry run', async () => {
    logDir = await mkdtemp(path.join(tmpdir(), 'chart-apiserver-'));
    api = await startApiServer(path.join(logDir, 'apiserver.log'));
    const kubectl = (argv: string[], stdin?: string) => runProcess(KUBECTL, ['--kubeconfig', api!.kubeconfig, ...argv], stdin === undefined ? {} : { stdin });
    for (const ns of [RELEASE_NAMESPACE, 'kube-system']) await kubectl(['create', 'namespace', ns]);
    // Real PEMs: the API server checks a kubernetes.io/tls Secret's certificate and key.
    const pems = await generateCertificates({ serviceName: 'spiderpool-iaas-webhook', namespace: RELEASE_NAMESPACE });
    const provided = await helmTemplate(providedTlsArgs(pems));
    for (const objects of [defaults, provided]) {
      const result = await kubectl(['apply', '--dry-run=server', '-f', '-'], objects.map((o) => `---\n${stringify(o)}`).join(''));
      expect([result.code, result.stderr]).toEqual([0, '']);
    }
  });
});
