/**
 * The Helm chart (deploy/helm/spiderpool-iaas-webhook), Node only: it reads copies of
 * deploy/'s own files (its one source of truth with kustomize), its defaults are deploy/base's, every
 * value a template reads exists, and values.schema.json refuses unknown keys everywhere
 * (a typo such as spiderpool.namespce must fail `helm install`). Rendering needs helm:
 * test/e2e/chart.test.ts renders it and compares it with `kubectl kustomize deploy/base`.
 */
import { readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { valuesProblems as problemsAgainst } from './values-schema.js';
import { parse } from 'yaml';
import generateChartFiles from '../../scripts/generate/chart-files.js';
import { DEFAULT_CONFIGMAP_NAME } from '../../src/defaults.js';
import { DEPLOY_DIR, REPO_ROOT } from './readme-overlays.js';
import { readKustomization } from './render.js';

// Tests reach into rendered manifests by known paths; `any` keeps that readable.
type Obj = Record<string, any>;

const CHART_DIR = path.join(DEPLOY_DIR, 'helm/spiderpool-iaas-webhook');

let values: Obj;
let schema: Obj;
let base: Obj[];
/** The namespace the component's second rule (the metrics) admits. */
let metricsNamespaceOfComponent: string;

beforeAll(async () => {
  values = parse(await readFile(path.join(CHART_DIR, 'values.yaml'), 'utf8'));
  schema = JSON.parse(await readFile(path.join(CHART_DIR, 'values.schema.json'), 'utf8'));
  // deploy/ as its files hold it (kubectl kustomize renders the same: test/e2e/deploy.test.ts).
  base = await readKustomization(DEPLOY_DIR);
  const component = parse(await readFile(path.join(DEPLOY_DIR, 'components/network-policy-api-server/networkpolicy.yaml'), 'utf8'));
  metricsNamespaceOfComponent = component.spec.ingress[1].from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name'];
});

const one = (kind: string): Obj => {
  const found = base.filter((o) => o['kind'] === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind} in deploy/, found ${found.length}`);
  return found[0] as Obj;
};
const container = (): Obj => one('Deployment')['spec']['template']['spec']['containers'][0];
const flag = (name: string): string | undefined => (container()['args'] as string[]).find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);

describe('the chart reads deploy/ itself', () => {
  test('files/ holds exactly the copies scripts/generate/chart-files.ts writes (test/generate.test.ts: equal to deploy/), no symbolic link', async () => {
    const entries = await readdir(path.join(CHART_DIR, 'files'), { withFileTypes: true, recursive: true });
    const links = entries.filter((e) => e.isSymbolicLink()).map((e) => path.relative(REPO_ROOT, path.join(e.parentPath, e.name)));
    const files = entries.filter((e) => e.isFile()).map((e) => path.relative(REPO_ROOT, path.join(e.parentPath, e.name)));
    expect({ links, files: files.sort() }).toEqual({
      links: [],
      files: generateChartFiles()
        .map((f) => f.path)
        .sort(),
    });
  });

  test('every file a template names under files/ exists', async () => {
    const templates = await readdir(path.join(CHART_DIR, 'templates'));
    const named = new Set<string>();
    for (const file of templates) {
      const text = await readFile(path.join(CHART_DIR, 'templates', file), 'utf8');
      for (const m of text.matchAll(/"(files\/[^"*%]+)"/g)) named.add(m[1]!);
    }
    expect([...named].sort()).toEqual(['files/base', 'files/base/kustomization.yaml', 'files/cert-manager', 'files/components/validating-admission-policy']);
    for (const file of named) await expect(realpath(path.join(CHART_DIR, file))).resolves.toEqual(expect.any(String));
  });
});

describe("the chart's defaults are deploy/base's", () => {
  test('image: repository and tag as kustomize sets them, the tag being the chart appVersion and package.json version', async () => {
    const chart = parse(await readFile(path.join(CHART_DIR, 'Chart.yaml'), 'utf8'));
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(values['image']['tag']).toBe('');
    expect(`${values['image']['repository']}:${chart['appVersion']}`).toBe(container()['image']);
    expect(chart['appVersion']).toBe(pkg['version']);
    expect(chart['version']).toBe(pkg['version']);
    expect(values['image']['pullPolicy']).toBe(container()['imagePullPolicy']);
  });

  test('replicas, resources, the PodDisruptionBudget and the NetworkPolicy', () => {
    expect(values['replicas']).toBe(one('Deployment')['spec']['replicas']);
    expect(values['resources']).toEqual(container()['resources']);
    expect(values['podDisruptionBudget']).toEqual({ enabled: true, maxUnavailable: one('PodDisruptionBudget')['spec']['maxUnavailable'] });
    // No CIDRs: base admits the port from anywhere (no `from`). With CIDRs, the metrics
    // rule admits the namespace deploy/components/network-policy-api-server admits.
    expect(values['networkPolicy']).toEqual({ enabled: true, apiServerCIDRs: [], metricsNamespaces: [metricsNamespaceOfComponent] });
    expect(one('NetworkPolicy')['spec']['ingress'].map((rule: Obj) => rule['from'])).toEqual([undefined]);
  });

  test("Spiderpool's namespace and ConfigMap name are the server's flags and the conf-reader Role's", () => {
    expect(values['spiderpool']).toEqual({ namespace: flag('--configmap-namespace'), configName: flag('--configmap-name') });
    expect(values['spiderpool']['configName']).toBe(DEFAULT_CONFIGMAP_NAME);
    const role = base.find((o) => o['kind'] === 'Role' && o['metadata']['name'] === 'spiderpool-iaas-webhook-conf-reader')!;
    expect(role['metadata']['namespace']).toBe(values['spiderpool']['namespace']);
    expect(role['rules'][0]['resourceNames']).toEqual([values['spiderpool']['configName']]);
  });

  test("unsyncedPools is the server's --unsynced-pools, Refuse (the pair rules are refusals)", () => {
    expect(values['unsyncedPools']).toBe(flag('--unsynced-pools'));
    expect(values['unsyncedPools']).toBe('Refuse');
  });

  test('the optional pod fields are unset, as in deploy/base; tolerations add to its own', () => {
    const pod = one('Deployment')['spec']['template']['spec'];
    for (const key of ['nodeSelector', 'affinity', 'priorityClassName'] as const) {
      expect(pod[key]).toBeUndefined();
      expect(values[key]).toEqual(key === 'priorityClassName' ? '' : {});
    }
    expect(pod['tolerations'].map((t: Obj) => t['key'])).toEqual(['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready']);
    expect(values['tolerations']).toEqual([]);
  });

  test("the hostname spread, the peer readiness and rebalance flags and their Role are deploy/base's", () => {
    const spread = one('Deployment')['spec']['template']['spec']['topologySpreadConstraints'];
    expect(values['topologySpread']).toEqual({ whenUnsatisfiable: spread[0]['whenUnsatisfiable'], extraConstraints: [] });
    expect(spread.map((t: Obj) => t['topologyKey'])).toEqual(['kubernetes.io/hostname']);
    expect(values['peerReadiness']).toEqual({ enabled: (container()['args'] as string[]).includes('--peer-readiness') });
    expect(values['rebalance']).toEqual({ enabled: (container()['args'] as string[]).includes('--rebalance') });
    expect(base.filter((o) => o['metadata']['name'] === 'spiderpool-iaas-webhook-peers').map((o) => o['kind'])).toEqual(['Role', 'RoleBinding']);
  });
});

describe('what the chart cannot own, it says', () => {
  test('NOTES.txt gives the command that labels the release namespace as deploy/base/namespace.yaml labels its own (Pod Security "restricted")', async () => {
    const notes = await readFile(path.join(CHART_DIR, 'templates/NOTES.txt'), 'utf8');
    const labels = Object.entries(one('Namespace')['metadata']['labels'] as Record<string, string>).filter(([k]) =>
      k.startsWith('pod-security.kubernetes.io/'),
    );
    expect(labels).toContainEqual(['pod-security.kubernetes.io/enforce', 'restricted']);
    const command = notes.split('\n').find((line) => line.trim().startsWith('kubectl label namespace {{ .Release.Namespace }}'));
    expect(command?.trim().split(/\s+/).slice(6).sort()).toEqual([...labels.map(([k, v]) => `${k}=${v}`), '--overwrite'].sort());
  });
});

describe('the client-certificate option: the chart mounts what deploy/components/client-ca mounts', () => {
  test('the same flag, mount path and ConfigMap name, rendered from clientCA.caCert', async () => {
    const component = parse(await readFile(path.join(DEPLOY_DIR, 'components/client-ca/kustomization.yaml'), 'utf8'));
    const ops: Obj[] = parse(component['patches'][0]['patch']);
    const [arg, mount, volume] = ops.map((op) => op['value']);
    const templates = (
      await Promise.all(['base.yaml', 'client-ca.yaml', 'components.yaml'].map((f) => readFile(path.join(CHART_DIR, 'templates', f), 'utf8')))
    ).join('\n');
    const [flagName, file] = (arg as string).split('=');
    expect(templates).toContain(`"${flagName}" "${file}"`);
    expect(file).toBe(`${mount['mountPath']}/ca.crt`);
    expect(templates).toContain(`"name" "${mount['name']}" "mountPath" "${mount['mountPath']}" "readOnly" true`);
    expect(templates).toContain(`"name" "${volume['name']}" "configMap" (dict "name" "${volume['configMap']['name']}")`);
    expect(templates).toContain(`dict "name" "${volume['configMap']['name']}"`);
    expect(templates).toMatch(/\$asValue := dict [^\n]*"client-ca" "clientCA\.caCert"/);
    expect(values['clientCA']).toEqual({ caCert: '' });
  });
});

/** `.Values.a.b` and `$v.a.b` (base.yaml's and components.yaml's name for .Values) paths the templates read. */
async function valuePathsInTemplates(): Promise<Set<string>> {
  const paths = new Set<string>();
  for (const file of await readdir(path.join(CHART_DIR, 'templates'))) {
    const text = await readFile(path.join(CHART_DIR, 'templates', file), 'utf8');
    for (const m of text.matchAll(/(?:\.Values|\$v)((?:\.[A-Za-z][A-Za-z0-9]*)+)/g)) paths.add(m[1]!.slice(1));
    for (const m of text.matchAll(/\$tls((?:\.[A-Za-z][A-Za-z0-9]*)+)/g)) paths.add(`tls${m[1]!}`);
  }
  return paths;
}

describe('values and templates agree', () => {
  test('every value a template reads is in values.yaml', async () => {
    const missing = [...(await valuePathsInTemplates())].filter((p) => p.split('.').reduce<any>((at, key) => at?.[key], values) === undefined);
    expect(missing).toEqual([]);
  });

  test('every key of values.yaml is read by a template', async () => {
    const read = await valuePathsInTemplates();
    const leaves = (o: Obj, prefix: string): string[] =>
      Object.entries(o).flatMap(([k, v]) =>
        typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0 && !['resources', 'nodeSelector', 'affinity'].includes(k)
          ? leaves(v, `${prefix}${k}.`)
          : [`${prefix}${k}`],
      );
    const unread = leaves(values, '').filter((leaf) => ![...read].some((p) => p === leaf || leaf.startsWith(`${p}.`)));
    expect(unread).toEqual([]);
  });
});

/**
 * Object schemas that take any keys: the Kubernetes types passed to the pod as given
 * (affinity, a toleration, nodeSelector's string map) and Helm's `global`.
 */
const FREE_FORM = new Set(['global', 'affinity', 'tolerations.items', 'topologySpread.extraConstraints.items', 'nodeSelector']);

/** Object schemas (by path) without `additionalProperties: false`, which take misspelt keys. */
const valuesProblems = (value: unknown): string[] => problemsAgainst(schema, value);

function openObjects(schema: Obj, at = ''): string[] {
  const open = schema['type'] === 'object' && !FREE_FORM.has(at) && schema['additionalProperties'] !== false ? [at || '(top)'] : [];
  const children = [
    ...Object.entries<Obj>(schema['properties'] ?? {}).map(([key, sub]) => [sub, at === '' ? key : `${at}.${key}`] as const),
    ...(schema['items'] ? [[schema['items'], `${at}.items`] as const] : []),
    ...(schema['anyOf'] ?? []).map((sub: Obj, i: number) => [sub, `${at}.anyOf.${i}`] as const),
  ];
  return [...open, ...children.flatMap(([sub, where]) => openObjects(sub, where))];
}

describe('values.schema.json', () => {
  test('refuses unknown keys in every object it describes (free-form only where Kubernetes types go)', () => {
    expect(schema['$schema']).toBe('https://json-schema.org/draft-07/schema#');
    expect(openObjects(schema)).toEqual([]);
    expect(openObjects({ type: 'object', properties: { tls: { type: 'object' } } })).toEqual(['(top)', 'tls']);
  });

  test('accepts values.yaml', () => {
    expect(valuesProblems(values)).toEqual([]);
  });

  test.each<[string, (v: Obj) => void, RegExp]>([
    ['a misspelt key', (v) => (v['spiderpool']['namespce'] = 'spiderpool'), /^spiderpool: unknown key "namespce"$/],
    ['an unknown top-level key', (v) => (v['replica'] = 3), /^\(top\): unknown key "replica"$/],
    ['a wrong type', (v) => (v['replicas'] = '2'), /^replicas: must be integer$/],
    ['an unknown tls.method', (v) => (v['tls']['method'] = 'manual'), /^tls\.method: must be equal to one of the allowed values$/],
    ['a key under tls.provided', (v) => (v['tls']['provided']['cert'] = 'x'), /^tls\.provided: unknown key "cert"$/],
    ['a CIDR without a prefix length', (v) => (v['networkPolicy']['apiServerCIDRs'] = ['10.0.0.1']), /^networkPolicy\.apiServerCIDRs\.0: must match pattern/],
    [
      'a metrics namespace that is no namespace name',
      (v) => (v['networkPolicy']['metricsNamespaces'] = ['Monitoring']),
      /^networkPolicy\.metricsNamespaces\.0: must match pattern/,
    ],
    [
      'one metrics namespace not in a list',
      (v) => (v['networkPolicy']['metricsNamespaces'] = 'monitoring'),
      /^networkPolicy\.metricsNamespaces: must be array$/,
    ],
    ['a key under clientCA', (v) => (v['clientCA']['caFile'] = '/ca.crt'), /^clientCA: unknown key "caFile"$/],
    ['an unsyncedPools setting the server does not know', (v) => (v['unsyncedPools'] = 'Deny'), /^unsyncedPools: must be equal to one of the allowed values$/],
  ])('refuses %s', (_name, mutate, expected) => {
    const copy = structuredClone(values);
    mutate(copy);
    expect(valuesProblems(copy)).toEqual([expect.stringMatching(expected)]);
  });
});
