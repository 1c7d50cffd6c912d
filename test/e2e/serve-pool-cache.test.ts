/**
 * The built `serve` command with and without a cluster connection: with `--kubeconfig`
 * pointing at a fake API server on loopback, it lists SpiderIPPools, says so in
 * `/readyz`, and refuses a dual-stack pair that breaks the capacity rule; without any
 * cluster configuration it serves anyway and warns that pair checks were skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NO_CLUSTER_REASON } from '../../src/rules/registry.js';
import { NOT_SYNCED_REASON } from '../../src/store/pool-index.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { FakePoolApiServer, kubeConfigFor } from '../cluster/fake-api-server.js';
import { loadPool } from '../fixtures/load.js';
import { httpsRequest } from '../helpers/client.js';
import { until } from '../helpers/until.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/cli/main.js');
const fixture = (name: string) => readFile(path.join(root, 'test/fixtures/reviews', `${name}.json`), 'utf8');

interface Served {
  process: ChildProcess;
  port: number;
  ca: string;
  log: () => string;
}

/** Starts `serve` on an OS-chosen port with a fresh HOME (no ~/.kube/config) and no KUBECONFIG. */
async function serve(workDir: string, extraArgs: string[]): Promise<Served> {
  const certDir = path.join(workDir, 'certs');
  const env = { PATH: process.env['PATH'] ?? '', HOME: workDir };
  const child = spawn(process.execPath, [cli, 'serve', '--port=0', '--host=127.0.0.1', `--cert-dir=${certDir}`, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let log = '';
  child.stdout!.on('data', (chunk) => (log += chunk));
  child.stderr!.on('data', (chunk) => (log += chunk));
  // A start is not what these tests time: beside the cluster suite (an arm64 image under qemu) it took over 10 s.
  await until(() => log.includes('serving admission reviews') || child.exitCode !== null, 'the server to start', { timeoutMs: 40_000 });
  if (child.exitCode !== null) throw new Error(`server did not start:\n${log}`);
  const started = log.split('\n').find((line) => line.includes('serving admission reviews'))!;
  return { process: child, port: JSON.parse(started).port, ca: await readFile(path.join(certDir, 'ca.crt'), 'utf8'), log: () => log };
}

const call = async (served: Served, method: string, pathName: string, body?: string) => {
  const { status, body: answer } = await httpsRequest({ port: served.port, ca: served.ca, method, path: pathName, ...(body === undefined ? {} : { body }) });
  return { status, body: answer };
};

async function stop(served: Served | undefined): Promise<number | null> {
  if (served === undefined || served.process.exitCode !== null) return served?.process.exitCode ?? null;
  const exited = new Promise<number | null>((resolve) => served.process.once('exit', (code) => resolve(code)));
  served.process.kill('SIGTERM');
  return exited;
}

let workDir: string;
let served: Served | undefined;
let api: FakePoolApiServer | undefined;

beforeEach(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'webhook-pool-cache-'));
});

afterEach(async () => {
  if (served !== undefined && served.process.exitCode === null) served.process.kill('SIGKILL');
  served = undefined;
  await api?.stop();
  api = undefined;
  await rm(workDir, { recursive: true, force: true });
});

describe('serve --kubeconfig: the SpiderIPPool cache behind the pair checks', () => {
  it('lists the pools, reports the sync in /readyz, and refuses a pair over capacity', async () => {
    api = new FakePoolApiServer();
    api.lists = [{ status: 200, items: [loadPool('pool-a-v6')], resourceVersion: '10' }];
    const kubeconfig = path.join(workDir, 'kubeconfig');
    await writeFile(kubeconfig, kubeConfigFor(await api.start()).exportConfig());
    served = await serve(workDir, [`--kubeconfig=${kubeconfig}`]);
    await until(() => served!.log().includes('SpiderIPPool cache listed'), 'the first list');
    await expect(call(served, 'GET', '/readyz')).resolves.toEqual({ status: 200, body: 'ok\n' });
    await expect(call(served, 'GET', '/readyz?verbose')).resolves.toMatchObject({ status: 200, body: expect.stringContaining('[+]pool-cache ok\n') });
    const metrics = await call(served, 'GET', '/metrics');
    expect(metrics.body).toContain('spiderpool_iaas_webhook_pool_cache_synced 1\n');
    expect(metrics.body).toContain('spiderpool_iaas_webhook_pool_cache_pools 1\n');
    expect(metrics.body).toMatch(/^spiderpool_iaas_webhook_pool_cache_last_sync_timestamp_seconds [1-9][0-9.e+]*$/m);
    expect(metrics.body).toContain('spiderpool_iaas_webhook_pool_cache_errors_total{operation="watch"} 0\n');

    const grown = JSON.parse((await call(served, 'POST', WEBHOOKS.spiderIPPool.path, await fixture('pool-update-pair-v4-grown'))).body);
    expect(grown.response.allowed).toBe(false);
    expect(grown.response.status.message).toContain(
      'spec.ips: Invalid value: holds 241 addresses (spec.ips minus spec.excludeIPs), more than the 200 of its IPv6 pair pool "pool-a-v6"',
    );

    const paired = JSON.parse((await call(served, 'POST', WEBHOOKS.spiderIPPool.path, await fixture('pool-create-pair-v4'))).body);
    expect(paired.response).toEqual({ uid: expect.any(String), allowed: true });

    await expect(stop(served)).resolves.toBe(0);
  }, 70_000);

  it('waits for the first list, bounded: turns ready when the API server cannot be listed, and refuses IaaS pool writes (--unsynced-pools=Refuse, the default)', async () => {
    api = new FakePoolApiServer();
    api.lists = [{ status: 503 }];
    const kubeconfig = path.join(workDir, 'kubeconfig');
    await writeFile(kubeconfig, kubeConfigFor(await api.start()).exportConfig());
    // 6 s rather than 2: under load the failed list can come late in the wait, so the
    // answer read during it is judged by the log read after it.
    served = await serve(workDir, [`--kubeconfig=${kubeconfig}`, '--pool-cache-sync-wait=6s']);
    await until(() => served!.log().includes('SpiderIPPool list failed'), 'the failed list to be logged');
    const during = await call(served, 'GET', '/readyz');
    if (during.status !== 200 || !served.log().includes('SpiderIPPool cache not synced after')) {
      expect(during).toMatchObject({
        status: 503,
        body: expect.stringContaining('[-]pool-cache failed: SpiderIPPools not listed yet; readiness waits for them, up to 6 s'),
      });
    }
    await until(() => served!.log().includes('SpiderIPPool cache not synced after 6 s (the list failed: HTTP 503)'), 'the end of the wait to be logged');
    await expect(call(served, 'GET', '/readyz')).resolves.toEqual({ status: 200, body: 'ok\n' });
    await expect(call(served, 'GET', '/readyz?verbose')).resolves.toMatchObject({
      status: 200,
      body: expect.stringMatching(
        /^\[-\]pool-cache failed: SpiderIPPools not listed yet; .*\n\[-\]spiderpool-conf-cache failed: spiderpool-conf not listed yet; .*\nreadyz check passed\n$/m,
      ),
    });
    expect((await call(served, 'GET', '/metrics')).body).toContain('spiderpool_iaas_webhook_pool_cache_synced 0\n');
    const answer = JSON.parse((await call(served, 'POST', WEBHOOKS.spiderIPPool.path, await fixture('pool-update-pair-v4-grown'))).body);
    expect(answer.response.allowed).toBe(false);
    expect(answer.response.status.details.causes).toEqual([
      expect.objectContaining({
        reason: 'FieldValueForbidden',
        message: expect.stringContaining(`IaaS pool writes are refused until the webhook's pool cache is synced (${NOT_SYNCED_REASON})`),
      }),
    ]);
    await expect(stop(served)).resolves.toBe(0);
  }, 70_000);

  it('--unsynced-pools=warn (any case): the same unsynced cache lets IaaS pool writes through with a warning; an unknown setting stops the start in one line', async () => {
    api = new FakePoolApiServer();
    api.lists = [{ status: 503 }];
    const kubeconfig = path.join(workDir, 'kubeconfig');
    await writeFile(kubeconfig, kubeConfigFor(await api.start()).exportConfig());
    served = await serve(workDir, [`--kubeconfig=${kubeconfig}`, '--unsynced-pools=warn']);
    await until(() => served!.log().includes('SpiderIPPool list failed; dual-stack pair checks are skipped with a warning'), 'the failed list to be logged');
    const answer = JSON.parse((await call(served, 'POST', WEBHOOKS.spiderIPPool.path, await fixture('pool-update-pair-v4-grown'))).body);
    expect(answer.response.allowed).toBe(true);
    expect(answer.response.warnings).toEqual([expect.stringContaining(`dual-stack pair checks against other pools were skipped (${NOT_SYNCED_REASON})`)]);
    await expect(stop(served)).resolves.toBe(0);

    const bad = spawn(process.execPath, [cli, 'serve', '--no-pool-cache', '--unsynced-pools=deny'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: workDir },
    });
    let stderr = '';
    bad.stderr!.on('data', (chunk) => (stderr += chunk));
    await expect(new Promise((resolve) => bad.once('exit', resolve))).resolves.toBe(2);
    expect(stderr.split('\n')[0]).toBe(
      "error: option '--unsynced-pools <setting>' argument 'deny' is invalid. must be Refuse (refuse IaaS pool writes while the pool cache has not synced) or Warn (let them through with a warning)",
    );
  }, 70_000);

  it('exits on SIGTERM even while a watch waits for a hung API server', async () => {
    api = new FakePoolApiServer();
    api.lists = [{ status: 200, items: [] }];
    api.holdWatchHeaders = true;
    const kubeconfig = path.join(workDir, 'kubeconfig');
    await writeFile(kubeconfig, kubeConfigFor(await api.start()).exportConfig());
    served = await serve(workDir, [`--kubeconfig=${kubeconfig}`]);
    await until(() => api!.openWatches === 1, 'the watch request');
    await expect(stop(served)).resolves.toBe(0);
  }, 70_000);

  it('without any cluster configuration: serves, and warns that pair checks were skipped', async () => {
    served = await serve(workDir, []);
    expect(served.log()).toContain('no kubeconfig or in-cluster configuration found');
    await expect(call(served, 'GET', '/readyz?verbose')).resolves.toMatchObject({ status: 200, body: expect.not.stringContaining('pool-cache') });
    expect((await call(served, 'GET', '/metrics')).body).not.toContain('pool_cache');
    const answer = JSON.parse((await call(served, 'POST', WEBHOOKS.spiderIPPool.path, await fixture('pool-create-pair-v4'))).body);
    expect(answer.response.warnings).toEqual([expect.stringContaining(`skipped (${NO_CLUSTER_REASON})`)]);
    await expect(stop(served)).resolves.toBe(0);
  }, 70_000);

  it('a kubeconfig that cannot be read stops the start with exit 2 (unusable input; 1 means findings)', async () => {
    const child = spawn(
      process.execPath,
      [cli, 'serve', '--port=0', '--host=127.0.0.1', `--cert-dir=${workDir}`, `--kubeconfig=${path.join(workDir, 'missing')}`],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env['PATH'] ?? '', HOME: workDir },
      },
    );
    let log = '';
    child.stdout!.on('data', (chunk) => (log += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(log).toContain('cannot start');
  }, 70_000);
});
