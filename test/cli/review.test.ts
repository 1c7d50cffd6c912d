/**
 * `review` of plain manifests: the AdmissionReview is built as the API server
 * would, judged by the server's reviewer, printed as kubectl prints it; `--pools` state
 * makes the pair checks decide as a synced server does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { reviewAdmission } from '../../src/rules/registry.js';
import { ClusterState } from '../../src/store/state.js';
import { parseOperation } from '../../src/cli/arguments.js';
import { FILES_AS_STATE_NOTE, reviewFromArguments, runReview, type ReviewCommand } from '../../src/cli/review.js';
import type { KubeObject } from '../../src/kubernetes/build.js';
import { loadReview } from '../fixtures/load.js';
import { spiderIPPool } from '../helpers/pools.js';

const PAIR_SKIPPED = /^Warning: metadata\.annotations\[ipam\.spidernet\.io\/pair-pool\]: dual-stack pair checks against other pools were skipped/m;

function pool(
  name: string,
  {
    version = 4,
    ips = ['10.6.0.10-10.6.0.20'],
    pair,
    nic = 'eth0',
    status,
  }: { version?: 4 | 6; ips?: string[]; pair?: string; nic?: string; status?: unknown } = {},
): KubeObject {
  return spiderIPPool(name, {
    provider: 'cloud',
    nic,
    ...(pair ? { pair } : {}),
    version,
    ips,
    nodeName: ['worker-1'],
    ...(status !== undefined ? { status } : {}),
  });
}

const yaml = (...objects: KubeObject[]) => objects.map((o) => stringify(o)).join('---\n');
const run = (text: string, extra: Partial<ReviewCommand> = {}) =>
  runReview({ inputs: [{ text, source: 'pools.yaml' }], configMap: { name: 'spiderpool-conf' }, ...extra });
const stateOf = (...objects: KubeObject[]) => ClusterState.of(objects).state;

describe('review of manifests', () => {
  it('an allowed CREATE prints what kubectl prints: notes and warnings on stderr, the object on stdout, exit 0', () => {
    const result = run(yaml(pool('p')));
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('spiderippool.spiderpool.spidernet.io/p created (server dry run)\n');
    expect(result.stderr).not.toMatch(PAIR_SKIPPED);
  });

  it('without --pools or a cluster, the files are the whole cluster state: a broken pair in one file is refused, said once', () => {
    const v4 = pool('v4', { pair: 'v6' });
    const v6 = pool('v6', { version: 6, ips: ['fd00::1'], pair: 'v4' });
    const result = run(yaml(v4, v6));
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('spiderippool.spiderpool.spidernet.io/v4 created (server dry run)\n');
    expect(result.stderr).toMatch(/^The SpiderIPPool "v6" is invalid: /m);
    expect(result.stderr).not.toMatch(PAIR_SKIPPED);
    expect(result.stderr.split(FILES_AS_STATE_NOTE)).toHaveLength(2);
    expect(run(yaml(v4, v6), { output: 'json' }).stderr).toBe(FILES_AS_STATE_NOTE);
  });

  it('a refused CREATE prints the Invalid line and exits 1', () => {
    const result = run(yaml(pool('p', { nic: 'eth0,eth1' })));
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').filter((l) => l.startsWith('The '))).toEqual([
      expect.stringMatching(
        /^The SpiderIPPool "p" is invalid: metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Invalid value: "eth0,eth1": holds a ","/,
      ),
    ]);
  });

  it("decides as the server does for the AdmissionReview it builds: -o json is the reviewer's response", () => {
    const result = run(yaml(pool('p', { nic: ' ' })), { output: 'json' });
    const printed = JSON.parse(result.stdout);
    expect(result.exitCode).toBe(1);
    expect(printed.response.status.details.causes).toEqual([expect.objectContaining({ field: 'metadata.annotations[ipam.spidernet.io/parent-nic]' })]);
    expect(result.stderr).toBe(FILES_AS_STATE_NOTE);
  });

  it('every object of a multi-document file and of a kind: List; -o json gives a List', () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [pool('a'), pool('b', { nic: 'x y' })] };
    const result = run(`${stringify(list)}---\n${yaml(pool('c'))}`, { output: 'json' });
    expect(result.exitCode).toBe(1);
    const printed = JSON.parse(result.stdout);
    expect(printed.kind).toBe('List');
    expect(printed.items.map((r: { response: { allowed: boolean } }) => r.response.allowed)).toEqual([true, false, true]);
    expect(printed.items.map((r: { request: { kind: { kind: string }; name: string } }) => `${r.request.kind.kind}/${r.request.name}`)).toEqual([
      'SpiderIPPool/a',
      'SpiderIPPool/b',
      'SpiderIPPool/c',
    ]);
  });

  it('UPDATE from --old: the stored object is the old one, never the new one twice (kyverno#9188)', () => {
    const old = yaml(pool('p', { status: { allocatedIPCount: 4 } }));
    const changed = yaml(pool('p', { nic: 'eth1' }));
    const result = run(changed, { old: { text: old, source: 'old.yaml' } });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /^The SpiderIPPool "p" is invalid: metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Forbidden: changing the annotation from "eth0" to "eth1" is refused while IaaS pool "p" has addresses in use \(status\.allocatedIPCount 4\)/m,
    );
    const idle = run(changed, { old: { text: yaml(pool('p')), source: 'old.yaml' } });
    expect(idle.exitCode).toBe(0);
    expect(idle.stdout).toBe('spiderippool.spiderpool.spidernet.io/p configured (server dry run)\n');
  });

  it('UPDATE without --old takes the stored object from the state; without one it is a usage error', () => {
    const state = stateOf(pool('p', { status: { allocatedIPCount: 1 } }));
    expect(run(yaml(pool('p', { nic: 'eth1' })), { operation: 'UPDATE', state }).exitCode).toBe(1);
    expect(run(yaml(pool('q')), { operation: 'UPDATE', state })).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: expect.stringMatching(/^error: UPDATE of SpiderIPPool "q" needs the stored object/),
    });
    expect(run(yaml(pool('q')), { old: { text: yaml(pool('p')), source: 'old.yaml' } }).stderr).toMatch(/^error: old\.yaml has no SpiderIPPool "q" to update/);
  });

  it("--pools state: pair checks run as in a synced server, and agree with the server's reviewer on the same review", () => {
    const state = stateOf(pool('v6', { version: 6, ips: ['fd00::1-fd00::5'] }));
    const result = run(yaml(pool('v4', { pair: 'v6' })), { state, output: 'json' });
    expect(result.exitCode).toBe(1);
    const causes = JSON.parse(result.stdout).response.status.details.causes;
    expect(causes).toEqual([expect.objectContaining({ field: 'spec.ips', message: expect.stringContaining('more than the 5 of its IPv6 pair pool "v6"') })]);
    expect(run(yaml(pool('v4', { pair: 'v6' })), { state: stateOf(pool('v6', { version: 6, ips: ['fd00::1-fd00::ff'] })) })).toMatchObject({
      exitCode: 0,
      stderr: '',
    });
  });

  it('an object the state holds is an UPDATE from it, as kubectl apply sends it (found by hostile testing: it was judged a CREATE)', () => {
    const state = () => stateOf(pool('in-use', { nic: 'eth0', status: { allocatedIPCount: 1 } }));
    const refused = run(yaml(pool('in-use', { nic: 'eth1' })), { state: state() });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(
      /^The SpiderIPPool "in-use" is invalid: metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: Forbidden: changing the annotation from "eth0" to "eth1"/m,
    );
    const kept = run(yaml(pool('in-use', { nic: 'eth0', ips: ['10.6.0.10-10.6.0.30'] })), { state: state() });
    expect(kept).toMatchObject({ exitCode: 0, stdout: 'spiderippool.spiderpool.spidernet.io/in-use configured (server dry run)\n' });
    expect(JSON.parse(run(yaml(pool('in-use', { nic: 'eth0' })), { state: state(), output: 'json' }).stdout).response).toMatchObject({ allowed: true });
    // --operation CREATE still judges a CREATE.
    expect(run(yaml(pool('in-use', { nic: 'eth1' })), { state: state(), operation: 'CREATE' }).exitCode).toBe(0);
  });

  it("objects accepted earlier in the run are known to the later ones, as the server's cache would know them", () => {
    const state = stateOf();
    const result = run(yaml(pool('v6', { version: 6, ips: ['fd00::1-fd00::5'] }), pool('v4', { pair: 'v6' })), { state });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/^The SpiderIPPool "v4" is invalid: spec\.ips: /m);
    expect(result.stdout).toBe('spiderippool.spiderpool.spidernet.io/v6 created (server dry run)\n');
  });

  it('DELETE is allowed (not guarded)', () => {
    expect(run(yaml(pool('p')), { operation: 'DELETE' })).toMatchObject({
      exitCode: 0,
      stdout: 'spiderippool.spiderpool.spidernet.io/p deleted (server dry run)\n',
    });
  });

  it('a ConfigMap is judged in the namespace kubectl would send it to', () => {
    const conf = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'spiderpool-conf' },
      data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: 2m\n' },
    };
    const result = run(stringify(conf), { namespace: 'kube-system', output: 'json', configMap: { name: 'spiderpool-conf', namespace: 'kube-system' } });
    expect(result.exitCode).toBe(1);
    expect(run(stringify(conf), { namespace: 'default', configMap: { name: 'spiderpool-conf', namespace: 'kube-system' } }).exitCode).toBe(0);
  });

  it("an AdmissionReview keeps today's output: the response AdmissionReview", () => {
    const review = loadReview('pool-update-node-to-global');
    const result = run(JSON.stringify(review));
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual(reviewAdmission(review));
    expect(run(JSON.stringify(review), { operation: 'CREATE' }).exitCode).toBe(2);
  });

  it.each([
    ['nope', /^error: pools\.yaml: document 1 is not a Kubernetes object \(it needs apiVersion and kind\); review accepts Kubernetes manifests/],
    ['a: [', /^error: pools\.yaml: not valid YAML or JSON: /],
    [
      'apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: {uid: x}\n',
      /^error: pools\.yaml holds an AdmissionReview in YAML .* must be the only document, in JSON, .*; review accepts/,
    ],
    ['{"kind": "AdmissionReview"}', /^error: not an admission\.k8s\.io\/v1 AdmissionReview: /],
    ['', /^error: pools\.yaml holds no object; review accepts/],
    ['apiVersion: v1\nkind: List\nitems: [1]\n', /^error: pools\.yaml: document 1, items\[0\] is not a Kubernetes object/],
    // Found by hostile testing: these were "list/ created" and "spiderippool…/ created", exit 0.
    ['apiVersion: v1\nkind: List\nitems: ~\n', /^error: pools\.yaml holds no object; review accepts/],
    ['apiVersion: v1\nkind: List\nitems: x\n', /^error: pools\.yaml: document 1 is a List whose items is not a list; review accepts/],
    [
      'apiVersion: spiderpool.spidernet.io/v2beta1\nkind: SpiderIPPool\nmetadata: {}\nspec: {}\n',
      /^error: pools\.yaml: SpiderIPPool has no metadata\.name \(the API server refuses it: resource name may not be empty\)\n/,
    ],
    ['apiVersion: spiderpool.spidernet.io/v2beta1\nkind: SpiderIPPool\nspec: {}\n', /^error: pools\.yaml: SpiderIPPool has no metadata\.name/],
  ])('unusable input %j: exit 2, one line saying what review accepts', (text, message) => {
    const result = run(text);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('review from the command line', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'review-'));
    await writeFile(path.join(dir, 'new.yaml'), yaml(pool('v4', { pair: 'v6' })));
    await writeFile(path.join(dir, 'v6.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pool('v6', { version: 6, ips: ['fd00::1'] })] }));
    await writeFile(path.join(dir, 'broken.yaml'), 'a: [');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const args = { pools: [] as string[], configmapName: 'spiderpool-conf' };
  const noStdin = () => Promise.reject(new Error('no stdin in this test'));

  it('--pools reads a folder of manifests (a List in JSON included)', async () => {
    await rm(path.join(dir, 'broken.yaml'));
    const stateDir = await mkdtemp(path.join(dir, 'state-'));
    await writeFile(path.join(stateDir, 'v6.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pool('v6', { version: 6, ips: ['fd00::1'] })] }));
    const result = await reviewFromArguments([path.join(dir, 'new.yaml')], { ...args, pools: [stateDir] }, noStdin);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /^The SpiderIPPool "v4" is invalid: spec\.ips: Invalid value: holds 11 addresses .* more than the 1 of its IPv6 pair pool "v6"/m,
    );
  });

  it.each([
    [{ pools: ['/nonexistent/state'] }, /^error: \/nonexistent\/state: cannot be read: no such file or folder\n$/],
    [{ pools: ['x'], kubeconfig: 'k' }, /^error: give --pools or a cluster \(--cluster, --kubeconfig, --context\), not both\n$/],
    [{ kubeconfig: '/nonexistent/kubeconfig' }, /^error: \/nonexistent\/kubeconfig: cannot be read as a kubeconfig: /],
  ])('state errors name the file in plain words: %j', async (extra, message) => {
    const result = await reviewFromArguments([path.join(dir, 'new.yaml')], { ...args, ...extra }, noStdin);
    expect(result).toEqual({ exitCode: 2, stdout: '', stderr: expect.stringMatching(message) });
  });

  it.each([
    ['not YAML', 'token: secret-value\nusers: [', /^error: cannot read the kubeconfig given by --kubeconfig \(.*broken-kubeconfig\): \S[^\n]*\n$/],
    [
      'without a current-context',
      'apiVersion: v1\nkind: Config\nclusters: []\n',
      /^error: cannot use the kubeconfig given by --kubeconfig \(.*broken-kubeconfig\): it sets no current-context; [^\n]*\n$/,
    ],
  ])("a kubeconfig %s is named once, in the loader's words", async (_, text, message) => {
    const file = path.join(dir, 'broken-kubeconfig');
    await writeFile(file, text);
    const result = await reviewFromArguments([path.join(dir, 'new.yaml')], { ...args, kubeconfig: file }, noStdin);
    expect(result).toEqual({ exitCode: 2, stdout: '', stderr: expect.stringMatching(message) });
    expect(result.stderr).not.toContain('secret-value');
  });

  it('NEW may be a folder of manifests, as for kubectl apply -f', async () => {
    const folder = await mkdtemp(path.join(dir, 'new-'));
    await writeFile(path.join(folder, 'a.yaml'), yaml(pool('a')));
    await writeFile(path.join(folder, 'b.json'), JSON.stringify(pool('b', { nic: 'x,y' })));
    const result = await reviewFromArguments([folder], args, noStdin);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('spiderippool.spiderpool.spidernet.io/a created (server dry run)\n');
    expect(result.stderr).toMatch(/^The SpiderIPPool "b" is invalid: /m);
  });

  it('a write no webhook of the configuration matches is allowed unreviewed, as the API server never sends it, and says so', async () => {
    const conf = (namespace: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'spiderpool-conf', namespace },
      data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: 2m\n' },
    });
    const results = [];
    for (const namespace of ['kube-system', 'default']) {
      const file = path.join(dir, `conf-${namespace}.yaml`);
      await writeFile(file, stringify(conf(namespace)));
      results.push(await reviewFromArguments([file], args, noStdin));
    }
    const [reviewed, unreviewed] = results;
    expect(reviewed!.exitCode).toBe(1);
    expect(reviewed!.stderr).not.toContain('not reviewed');
    expect(unreviewed).toEqual({
      exitCode: 0,
      stdout: 'configmap/spiderpool-conf created (server dry run)\n',
      stderr: `${FILES_AS_STATE_NOTE}configmap/spiderpool-conf: not reviewed: no webhook of the configuration matches (namespace "default")\n`,
    });
  });

  it('an unmatched write of a kind no validator guards, and an unmatched DELETE, are named for what did not match', async () => {
    const service = path.join(dir, 'service.yaml');
    await writeFile(service, stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } }));
    expect(await reviewFromArguments([service], args, noStdin)).toEqual({
      exitCode: 0,
      stdout: 'service/s created (server dry run)\n',
      stderr: FILES_AS_STATE_NOTE,
    });
    const file = path.join(dir, 'delete.yaml');
    await writeFile(file, yaml(pool('gone')));
    const deleted = await reviewFromArguments([file], { ...args, operation: 'DELETE' }, noStdin);
    expect(deleted.exitCode).toBe(0);
    expect(deleted.stderr).toBe(`${FILES_AS_STATE_NOTE}spiderippool/gone: not reviewed: no webhook of the configuration matches (operation DELETE)\n`);
  });

  it('--old naming FILE itself is refused, the message naming the argument OLD: old and new must be two objects', async () => {
    const file = path.join(dir, 'new.yaml');
    expect((await reviewFromArguments([file], { ...args, old: file }, noStdin)).stderr).toMatch(/^error: --old .*new\.yaml: OLD is FILE itself; /);
  });

  it('errors about the --old file name the flag, not FILE', async () => {
    const file = path.join(dir, 'new.yaml');
    const missing = await reviewFromArguments([file], { ...args, old: path.join(dir, 'nope.yaml') }, noStdin);
    expect(missing).toEqual({ exitCode: 2, stdout: '', stderr: `error: --old ${path.join(dir, 'nope.yaml')}: cannot be read: no such file or folder\n` });
    const other = path.join(dir, 'other.yaml');
    await writeFile(other, yaml(pool('other')));
    const unrelated = await reviewFromArguments([file], { ...args, old: other }, noStdin);
    expect(unrelated.stderr).toBe(`error: --old ${other} has no SpiderIPPool "v4" to update; give the stored object of the same kind and name\n`);
  });

  it('-o yaml prints the response AdmissionReviews as YAML, the same as -o json', async () => {
    const file = path.join(dir, 'new.yaml');
    const [json, asYaml] = [
      await reviewFromArguments([file], { ...args, output: 'json' }, noStdin),
      await reviewFromArguments([file], { ...args, output: 'yaml' }, noStdin),
    ];
    expect(asYaml.exitCode).toBe(json.exitCode);
    const { parse } = await import('yaml');
    const strip = (review: any) => ({ ...review, request: { ...review.request, uid: '' }, response: { ...review.response, uid: '' } });
    expect(strip(parse(asYaml.stdout))).toEqual(strip(JSON.parse(json.stdout)));
    expect(asYaml.stdout).toMatch(/^apiVersion: admission\.k8s\.io\/v1\nkind: AdmissionReview\n/);
  });

  it('an AdmissionReview file with -o yaml prints the response AdmissionReview in YAML, not JSON', async () => {
    const file = path.join(dir, 'review.json');
    await writeFile(file, JSON.stringify(loadReview('pool-update-node-to-global')));
    const result = await reviewFromArguments([file], { ...args, output: 'yaml' }, noStdin);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/^apiVersion: admission\.k8s\.io\/v1\nkind: AdmissionReview\nresponse:\n/);
  });

  it('--operation is read in any case, as kubectl users type it', () => {
    expect(['update', 'Update', 'UPDATE', 'delete', 'create'].map(parseOperation)).toEqual(['UPDATE', 'UPDATE', 'UPDATE', 'DELETE', 'CREATE']);
    expect(['patch', '', 'updat'].map(parseOperation)).toEqual([undefined, undefined, undefined]);
  });
});
