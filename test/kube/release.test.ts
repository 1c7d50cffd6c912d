/**
 * The release on the one-node cluster, installed as an operator installs it
 * (scripts/release/release.sh, docs/release.md). run.sh runs the suite beside a loopback
 * registry ($REGISTRY, scripts/release/registry.sh). In order:
 *
 *   1  `npm run release` to that registry (the script verifies the image's and the chart's
 *      signatures and the SBOM attestation offline, with the run's public key); the node
 *      told to pull from it (cluster.sh registry: plain HTTP, hosts.toml)
 *   2  `helm install oci://REGISTRY/charts/spiderpool-iaas-webhook --version VERSION`, with
 *      no value and nothing from the checkout, under the fault loop's load: 0 failed calls;
 *      the pods run the image by digest, pulled by the node from the registry
 *   3  a second release, VERSION-upgrade.1 (a copy of the checkout, its package.json bumped),
 *      and `helm upgrade` to it under load: 0 failed calls, the pods on the new digest
 *   4  helm uninstall under load, nothing left
 *   5  the CLI's npm tarball installed into an empty prefix: `spiderpool-iaas-webhook review`
 *      and `kubectl spiderpool-iaas review` (the plugin, with the cluster's kubectl) of
 *      examples/ files from there, one refused (cli-tarball.ts)
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from '../helpers/until.js';
import { runProcess } from '../e2e/cluster/processes.js';
import { describeCliFromTarball } from './cli-tarball.js';
import { RELEASE, REPO_ROOT } from '../e2e/helm.js';
import { describeUninstallUnderLoad, guarded, livePods, mustHelm, NS, prepareCluster, underLoad } from './helm.js';
import { clusterDir, getJson } from './kube.js';
import { TOOL_BUILD_MS, toolsBuilt } from './tools-built.js';

const RELEASE_TIMEOUT_MS = 25 * 60_000;

/** $REGISTRY, the loopback registry run.sh started; throws when the suite runs otherwise. */
function registry(): string {
  const r = process.env['REGISTRY'];
  if (!r?.startsWith('127.0.0.1:')) throw new Error('REGISTRY is not a loopback registry: run these tests with `npm run test:cluster` (test/kube/run.sh)');
  return r;
}

/** What release.sh wrote to OUT/release.env: image (repository@digest), chart, version, tarball. */
interface Released {
  image: string;
  chart: string;
  version: string;
  tarball: string;
}

/** `npm run release` of the checkout at `root` into `out`; throws with its output when it fails. */
async function release(root: string, out: string, extra: string[] = []): Promise<Released> {
  const r = await runProcess('bash', [path.join(root, 'scripts/release/release.sh'), '--registry', registry(), '--plain-http', '--out', out, ...extra], {
    timeoutMs: RELEASE_TIMEOUT_MS,
    env: { ...process.env, COSIGN_PASSWORD: '' },
  });
  if (r.code !== 0) throw new Error(`release.sh failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  console.log(
    r.stderr
      .split('\n')
      .filter((l) => l.startsWith('release: '))
      .join('\n'),
  );
  const env = Object.fromEntries(
    (await readFile(path.join(out, 'release.env'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return env as unknown as Released;
}

/** A copy of the checkout's files (git's view, untracked ones included) whose package.json says `version`. */
async function bumpedCopy(version: string): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), 'spiderpool-iaas-release-'));
  temporary.push(copy);
  const r = await runProcess('bash', [
    '-c',
    'cd "$1" && git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$2" && { [[ -e "$2/node_modules" ]] || ln -s "$1/node_modules" "$2/node_modules"; }',
    'bash',
    REPO_ROOT,
    copy,
  ]);
  if (r.code !== 0) throw new Error(`copying the checkout failed: ${r.stderr}`);
  const pkg = JSON.parse(await readFile(path.join(copy, 'package.json'), 'utf8'));
  await writeFile(path.join(copy, 'package.json'), `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  return copy;
}

/** The webhook pods' image and the imageID the node reports, one pair per pod. */
async function podImages(): Promise<{ image: string; imageID: string }[]> {
  const pods = (await getJson('pods', undefined, NS)).items.filter((p: any) => p.metadata.deletionTimestamp === undefined);
  return pods.map((p: any) => ({ image: p.spec.containers[0].image, imageID: p.status.containerStatuses?.[0]?.imageID ?? '' }));
}

/** helm against the cluster with the chart from the registry, run from an empty folder. */
const fromRegistry = (verb: 'install' | 'upgrade', version: string) =>
  mustHelm([
    verb,
    RELEASE,
    `oci://${registry()}/charts/spiderpool-iaas-webhook`,
    '--version',
    version,
    '--plain-http',
    '-n',
    NS,
    ...(verb === 'install' ? ['--create-namespace'] : []),
    '--wait',
    '--timeout=4m',
  ]);

let first: Released;
const out = path.join(tmpdir(), `spiderpool-iaas-release-${process.pid}`);
const temporary: string[] = [out];
afterAll(() => Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true }))));

// Built in the background while the files before this one ran (tools-built.ts).
beforeAll(() => toolsBuilt('helm', 'cosign'), TOOL_BUILD_MS);

beforeAll(async () => {
  await prepareCluster();
  first = await release(REPO_ROOT, path.join(out, 'first'));
  const r = await runProcess('bash', [path.join(REPO_ROOT, 'test/kube/cluster.sh'), 'registry', clusterDir(), registry().split(':')[1] ?? '']);
  if (r.code !== 0) throw new Error(`cluster.sh registry failed: ${r.stderr}`);
}, RELEASE_TIMEOUT_MS + 60_000);

describe('2. helm install from the registry, by version, under load', () => {
  underLoad(
    'helm install from the release',
    {
      name: 'helm install oci:// --wait',
      run: async () => {
        await fromRegistry('install', first.version);
        await guarded();
      },
    },
    { unguardedOk: true },
  );

  it('the pods run the released image by digest, pulled by the node from the registry', async () => {
    expect(first.image).toMatch(new RegExp(`^${registry()}/spiderpool-iaas-webhook@sha256:[0-9a-f]{64}$`));
    const images = await podImages();
    expect(images.length).toBeGreaterThan(0);
    for (const { image, imageID } of images) {
      expect(image).toBe(first.image);
      expect(imageID).toContain(first.image.split('@')[1]);
    }
  });
});

describe('3. helm upgrade to a second release under load', () => {
  let second: Released;
  let before: string[] = [];
  beforeAll(async () => {
    const copy = await bumpedCopy(`${first.version}-upgrade.1`);
    second = await release(copy, path.join(out, 'second'), ['--key', path.join(out, 'first/cosign.key')]);
    before = await livePods();
  }, RELEASE_TIMEOUT_MS + 60_000);
  underLoad('helm upgrade to the next release', {
    name: 'helm upgrade oci:// --wait',
    run: () => fromRegistry('upgrade', second.version).then(() => undefined),
  });

  it('replaced every pod with the second image, by digest', async () => {
    expect(second.image).not.toBe(first.image);
    // Old pods may still be terminating (preStop, grace period) when the rollout is done.
    await until(async () => (await livePods()).every((p) => !before.includes(p)), 'only new webhook pods', { timeoutMs: 120_000, intervalMs: 1000 });
    for (const { image } of await podImages()) expect(image).toBe(second.image);
  });
});

describeUninstallUnderLoad('4. helm uninstall of the release under load', 'helm uninstall of the release', 'left nothing of the release; every write accepted');

describeCliFromTarball(
  '5. the CLI from its npm tarball, in an empty prefix',
  () => first.tarball,
  () => [clusterDir()],
);
