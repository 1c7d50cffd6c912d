/**
 * `review --pools STATE` (candidate pools): Pod, workload and Namespace manifests get the same
 * candidate-pool warnings as through the served webhook, with pools, Namespaces and the
 * spiderpool-conf ConfigMap from files.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/kubernetes/build.js';
import { loadState } from '../../src/cli/cluster-state.js';
import { runReview } from '../../src/cli/review.js';
import { poolObject } from '../spiderpool/candidate-pools.js';

const conf = (enableIPv6: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
  data: { 'conf.yml': `enableIPv4: true\nenableIPv6: ${enableIPv6}\n` },
});

const STATE: KubeObject[] = [
  poolObject('iaas-a', { iaas: true }) as KubeObject,
  poolObject('plain-b') as KubeObject,
  poolObject('pair-v4', { iaas: true, pair: 'pair-v6' }) as KubeObject,
  poolObject('pair-v6', { version: 6, iaas: true, pair: 'pair-v4' }) as KubeObject,
];

const mixed = { 'ipam.spidernet.io/ippools': JSON.stringify([{ interface: 'eth0', ipv4: ['iaas-a', 'plain-b'] }]) };
const paired = { 'ipam.spidernet.io/ippools': JSON.stringify([{ interface: 'eth0', ipv4: ['pair-v4', 'iaas-a'] }]) };
const template = (annotations: Record<string, string>) => ({
  metadata: { labels: { app: 'web' }, annotations },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});
const deployment = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: template(annotations) },
});
const cronJob: KubeObject = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'default' },
  spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: template(mixed) } } },
};
const pod = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'solo', namespace: 'default', annotations },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});
const namespace: KubeObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a', annotations: { 'ipam.spidernet.io/default-ipv4-ippool': '["plain-b","iaas-a"]' } },
};

const MIXED =
  'Warning: spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'review-candidates-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function review(objects: KubeObject[], state: KubeObject[]) {
  const file = path.join(dir, 'state.yaml');
  await writeFile(file, state.map((o) => stringify(o)).join('---\n'));
  const loaded = await loadState({ pools: [file], configMapName: 'spiderpool-conf' });
  return runReview({
    inputs: [{ text: objects.map((o) => stringify(o)).join('---\n'), source: 'new.yaml' }],
    configMap: { name: 'spiderpool-conf' },
    state: loaded!.state,
  });
}

describe('review --pools: candidate-pool warnings for manifests', () => {
  it('a Deployment, a CronJob, a Pod and a Namespace, as kubectl prints them', async () => {
    const result = await review(
      [deployment(mixed), cronJob, pod({ 'ipam.spidernet.io/ippool': '{"ipv4":["plain-b","iaas-a"]}' }), namespace],
      [...STATE, conf('false')],
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(
      [
        'deployment.apps/web created (server dry run)',
        'cronjob.batch/nightly created (server dry run)',
        'pod/solo created (server dry run)',
        'namespace/team-a created (server dry run)',
        '',
      ].join('\n'),
    );
    // kubectl prints a warning once per command, however many objects get it (its warning writer deduplicates).
    expect(result.stderr.split('\n').filter((l) => l !== '')).toEqual([
      MIXED,
      'Warning: spiderpool: every NIC IPv4 (ipam.spidernet.io/ippool): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback',
      'Warning: spiderpool: every NIC IPv4 (ipam.spidernet.io/default-ipv4-ippool): only IaaS pools [iaas-a] will be used; traditional pools [plain-b] are ignored, with no fallback',
    ]);
  });

  it("enableIPv6 comes from the state's spiderpool-conf", async () => {
    const on = await review([deployment(paired)], [...STATE, conf('yes')]);
    expect(on.stderr).toContain(
      'Warning: spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only paired IaaS primary pools [pair-v4] will be used; IaaS pools [iaas-a] are ignored, with no fallback',
    );
    const off = await review([deployment(paired)], [...STATE, conf('false')]);
    expect(off.stderr).toBe('');
  });

  it('without spiderpool-conf in the state, a paired pool is said not known', async () => {
    const result = await review([deployment(paired)], STATE);
    expect(result.stderr).toContain(
      'paired IaaS primary pools [pair-v4] rank first only if dual-stack is on, which is not known: ConfigMap spiderpool-conf does not exist',
    );
  });

  it('a quoted "true" is no bool to Go: not known either', async () => {
    const result = await review([deployment(paired)], [...STATE, conf('"true"')]);
    expect(result.stderr).toContain('which is not known: ConfigMap spiderpool-conf: enableIPv6 in conf.yml is not true or false');
  });

  it('without --pools, the candidates are checked against the pools of the files given (the whole cluster state)', async () => {
    const text = [...STATE, deployment(mixed)].map((o) => stringify(o)).join('---\n');
    const result = runReview({ inputs: [{ text, source: 'new.yaml' }], configMap: { name: 'spiderpool-conf' } });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('Warning: spiderpool: NIC "eth0" IPv4 (ipam.spidernet.io/ippools): only IaaS pools [iaas-a] will be used;');
    expect(result.stderr).not.toContain('candidate pools were not checked');
  });
});
