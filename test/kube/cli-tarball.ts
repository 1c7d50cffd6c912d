/**
 * The CLI as a release gives it (release.test.ts step 5): the npm tarball installed with
 * `npm install -g` into an empty prefix, run from that prefix with its bin/ first on PATH,
 * both as `spiderpool-iaas-webhook` and as the kubectl plugin: kubectl runs
 * `kubectl-spiderpool_iaas` (package.json `bin`) for `kubectl spiderpool-iaas`, a dash in the
 * command being an underscore in the file name (kubectl's plugin lookup). The repository's
 * examples/ are copied into the prefix and reviewed by the paths docs/cli.md gives.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { reviewFromArguments } from '../../src/cli/review.js';
import { runProcess, type Finished } from '../e2e/cluster/processes.js';
import { REPO_ROOT } from '../e2e/helm.js';

/** Bounds `npm install -g` of the tarball (beforeAll) and each command run in the prefix, in ms. */
const INSTALL_TIMEOUT_MS = 300_000;
/** What `review examples/pools/good/node-pool.yaml` prints on stdout (image/arm64-smoke.sh expects it too). */
const NODE_POOL_STDOUT = readFileSync(path.join(REPO_ROOT, 'test/fixtures/cli/review-node-pool.stdout'), 'utf8');

/** What the checkout's own `review FILE` prints for an examples/ file: the installed CLI must print the same. */
async function checkoutReview(example: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await reviewFromArguments([path.join(REPO_ROOT, example)], { pools: [], configmapName: 'spiderpool-conf' }, () =>
    Promise.reject(new Error('review read standard input')),
  );
  return { code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Describes `title`: `tarball()` (a path, read in beforeAll) installed into an empty prefix,
 * the commands run there with `pathDirs()` (where kubectl is) after the prefix's bin/ on PATH.
 */
export function describeCliFromTarball(title: string, tarball: () => string, pathDirs: () => string[]): void {
  describe(title, () => {
    let prefix = '';
    const inPrefix = (script: string, ...args: string[]): Promise<Finished> =>
      runProcess('bash', ['-c', `cd "$PREFIX_DIR" && ${script}`, 'bash', ...args], {
        env: { ...process.env, PREFIX_DIR: prefix, PATH: [`${prefix}/bin`, ...pathDirs(), process.env['PATH']].join(':') },
        timeoutMs: INSTALL_TIMEOUT_MS,
      });

    beforeAll(async () => {
      prefix = await mkdtemp(path.join(tmpdir(), 'spiderpool-iaas-cli-'));
      const r = await inPrefix('npm install -g --prefix "$PREFIX_DIR" --prefer-offline --no-audit --no-fund "$1"', tarball());
      if (r.code !== 0) throw new Error(`npm install -g of ${tarball()} failed: ${r.stdout}${r.stderr}`);
      await cp(path.join(REPO_ROOT, 'examples'), path.join(prefix, 'examples'), { recursive: true });
    }, INSTALL_TIMEOUT_MS);
    afterAll(() => rm(prefix, { recursive: true, force: true }));

    it('`spiderpool-iaas-webhook review examples/pools/good/dual-stack-pair.yaml` accepts both pools of the pair', async () => {
      const r = await inPrefix('spiderpool-iaas-webhook review examples/pools/good/dual-stack-pair.yaml');
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 0,
        stdout:
          'spiderippool.spiderpool.spidernet.io/worker-2-eth0-v4 created (server dry run)\n' +
          'spiderippool.spiderpool.spidernet.io/worker-2-eth0-v6 created (server dry run)\n',
        stderr: (await checkoutReview('examples/pools/good/dual-stack-pair.yaml')).stderr,
      });
    });

    it('`kubectl spiderpool-iaas review examples/pools/good/node-pool.yaml` runs the plugin, which accepts the pool', async () => {
      const r = await inPrefix('kubectl spiderpool-iaas review examples/pools/good/node-pool.yaml');
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 0,
        stdout: NODE_POOL_STDOUT,
        stderr: (await checkoutReview('examples/pools/good/node-pool.yaml')).stderr,
      });
    });

    it("`kubectl spiderpool-iaas review -f` of a pool that breaks a rule exits 1 with the rule's message on stderr, as kubectl prints it", async () => {
      const example = 'examples/pools/broken/node-pool-two-nodes.yaml';
      const r = await inPrefix(`kubectl spiderpool-iaas review -f ${example}`);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ ...(await checkoutReview(example)), code: 1, stdout: '' });
      expect(r.stderr).toMatch(/^The SpiderIPPool "workers-eth0-v4" is invalid: spec\.nodeName: Invalid value: lists 2 nodes \(\["worker-3", "worker-4"\]\)/m);
    });
  });
}
