/**
 * The built package as an operator uses it: `dist/` (run `npm run build` first, as
 * `npm run test:e2e` does), certificates from the `certs` command, `deploy/` rendered by
 * the real kustomize (`kubectl kustomize`), and the server answering with those
 * certificates under the in-cluster Service name.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import tls from 'node:tls';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEFAULT_NAMESPACE, DEFAULT_SERVICE_NAME, WEBHOOKS } from '../../src/defaults.js';
import { checkManifests } from '../deploy/consistency.js';
import { parseManifests } from '../deploy/render.js';
import { httpsRequest } from '../helpers/client.js';
import { until } from '../helpers/until.js';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/cli/main.js');
const fixture = (name: string) => path.join(root, 'test/fixtures/reviews', `${name}.json`);

/** Runs the CLI; resolves with its exit code and output (a non-zero exit is not an error here). */
async function run(args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [cli, ...args], env === undefined ? {} : { env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let workDir: string;
let deployDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'webhook-e2e-'));
  deployDir = path.join(workDir, 'deploy');
  await cp(path.join(root, 'deploy'), deployDir, { recursive: true });
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('--version', () => {
  it("prints package.json's version and exits 0", async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });
});

describe('dist/index.js', () => {
  it('exports parseGoDuration, formatGoDuration and reviewAdmission', async () => {
    const api = await import(path.join(root, 'dist/index.js'));
    expect(api.parseGoDuration('1.5m')).toBe(90_000_000_000n);
    expect(api.formatGoDuration(-1n)).toBe('-1ns');
    expect(api.reviewAdmission(JSON.parse(await readFile(fixture('pool-update-node-to-global'), 'utf8'))).response.allowed).toBe(false);
  });
});

describe('certs, then kubectl kustomize deploy/', () => {
  let caBundle: string;

  beforeAll(async () => {
    const result = await run(['certs', '--out', path.join(deployDir, 'tls')]);
    expect(result.code).toBe(0);
    caBundle = result.stdout.trim();
  });

  it('prints the CA it wrote as a caBundle; deploy/ renders consistent manifests beside it and takes none of them (the pods keep their own Secret)', async () => {
    const ca = await readFile(path.join(deployDir, 'tls/ca.crt'), 'utf8');
    expect(Buffer.from(caBundle, 'base64').toString('utf8')).toBe(ca);
    const { stdout } = await execFileAsync(process.env['KUBECTL'] ?? 'kubectl', ['kustomize', deployDir], { maxBuffer: 16 << 20 });
    const objects = parseManifests(stdout);
    expect(checkManifests(objects)).toEqual([]);
    // The only Secret is the empty one the pods fill: none carries what `certs` wrote.
    expect(
      objects.filter(
        (o) => o['kind'] === 'ValidatingWebhookConfiguration' || (o['kind'] === 'Secret' && (o['data'] !== undefined || o['stringData'] !== undefined)),
      ),
    ).toEqual([]);
    expect(objects.filter((o) => o['kind'] === 'Secret').map((o) => (o['metadata'] as { name: string }).name)).toEqual(['spiderpool-iaas-webhook-tls']);
  });

  describe('serve with those certificates, as the Deployment runs it', () => {
    let server: ChildProcess;
    let port: number;
    let ca: string;
    let log = '';

    beforeAll(async () => {
      port = await freePort();
      ca = await readFile(path.join(deployDir, 'tls/ca.crt'), 'utf8');
      server = spawn(
        process.execPath,
        [cli, 'serve', `--cert-dir=${path.join(deployDir, 'tls')}`, '--no-generate-certs', `--port=${port}`, '--host=127.0.0.1'],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      server.stdout!.on('data', (chunk) => (log += chunk));
      server.stderr!.on('data', (chunk) => (log += chunk));
      await until(() => log.includes('serving admission reviews') || server.exitCode !== null, 'the server to start');
      if (server.exitCode !== null) throw new Error(`server did not start:\n${log}`);
    });

    afterAll(() => {
      if (server.exitCode === null) server.kill('SIGKILL');
    });

    /** POSTs to 127.0.0.1 presenting the in-cluster Service name, verifying against the generated CA. */
    const post = (pathName: string, body: string) =>
      httpsRequest({ port, ca, servername: `${DEFAULT_SERVICE_NAME}.${DEFAULT_NAMESPACE}.svc`, path: pathName, body });

    it('answers under the Service name, as the kube-apiserver calls it', async () => {
      const body = await readFile(fixture('configmap-update-timeout-100s'), 'utf8');
      const res = await post(WEBHOOKS.configMap.path, body);
      expect(res.status).toBe(200);
      const answer = JSON.parse(res.body);
      expect(answer.response.uid).toBe(JSON.parse(body).request.uid);
      expect(answer.response.status.message).toContain('httpRequestTimeout: Invalid value: "100s"');
      await until(() => log.includes('"msg":"admission review"'), 'the review log line');
    });

    it('on SIGTERM finishes the review in flight, then exits 0', async () => {
      // A review whose body is half sent when the signal arrives.
      const body = Buffer.from(await readFile(fixture('configmap-update-timeout-100s'), 'utf8'));
      const socket = tls.connect({ host: '127.0.0.1', port, servername: `${DEFAULT_SERVICE_NAME}.${DEFAULT_NAMESPACE}.svc`, ca });
      await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(`POST ${WEBHOOKS.configMap.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body.subarray(0, 100));

      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      server.kill('SIGTERM');
      await until(() => log.includes('"msg":"stopping: no longer ready, finishing in-flight reviews"'), 'the stop to begin');
      socket.write(body.subarray(100));
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(answer).toContain('httpRequestTimeout: Invalid value: \\"100s\\"');
      await expect(exited).resolves.toBe(0);
      expect(log).toContain('"msg":"stopped"');
    });
  });
});

describe('review and validate-config', () => {
  it('review prints the response AdmissionReview and exits 1 for a denial', async () => {
    const result = await run(['review', fixture('pool-update-node-to-global')]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).response.status.message).toMatch(/"pool-a" is invalid: spec\.nodeName: Forbidden: /);
  });

  it('validate-config exits 1 with the webhook message for a bad conf.yml', async () => {
    const review = JSON.parse(await readFile(fixture('configmap-update-timeout-100s'), 'utf8'));
    const confFile = path.join(workDir, 'conf.yml');
    await (await import('node:fs/promises')).writeFile(confFile, review.request.object.data['conf.yml']);
    const result = await run(['validate-config', confFile]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^The ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "100s": /m,
    );
  });

  it('certs keeps the CA (and so the caBundle) unless --new-ca', async () => {
    const out = path.join(workDir, 'rotate');
    const first = await run(['certs', '--out', out]);
    const renewed = await run(['certs', '--out', out]);
    const replaced = await run(['certs', '--out', out, '--new-ca']);
    expect([first.code, renewed.code, replaced.code]).toEqual([0, 0, 0]);
    expect(renewed.stdout).toBe(first.stdout);
    expect(renewed.stderr).toContain('signed by the CA already there');
    expect(renewed.stderr).not.toContain('warning');
    expect(replaced.stdout).not.toBe(first.stdout);
    // Past the CA's ten years, the serving certificate is cut to the CA's end, and says so.
    const capped = await run(['certs', '--out', out, '--days', '4000']);
    expect(capped.code).toBe(0);
    expect(capped.stderr).toMatch(/warning: the serving certificate ends with the CA on \d{4}-/);
  });

  it('usage errors exit 2, apart from refusals (1)', async () => {
    expect((await run(['validate-config'])).code).toBe(2);
    expect((await run(['serve', '--log-level', 'loud'])).code).toBe(2);
    const unitless = await run(['serve', '--shutdown-timeout', '10']); // a Go duration needs its unit
    expect(unitless.code).toBe(2);
    expect(unitless.stderr).toContain('time: missing unit in duration "10"; did you mean "10s"?');
    expect((await run(['serve', '--shutdown-timeout', '1min'])).stderr).toContain('did you mean "1m"?');
    expect((await run(['serve', '--max-connections', '0'])).code).toBe(2);
    expect((await run(['--help'])).code).toBe(0);
  });

  it.each(['serve', 'review', 'audit', 'validate-config', 'certs'])('%s --help shows what a repeatable flag defaults to, never "[]"', async (command) => {
    const help = await run([command, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).not.toContain('[]');
    if (command !== 'certs') expect(help.stdout.replace(/\s+/g, ' ')).toContain('(repeatable; any case) (default: Deny)');
  });

  it('refuses serve --reports=true --no-pool-cache (no pools, no reports) in one line, exit 2, before starting', async () => {
    expect(await run(['serve', '--reports=true', '--no-pool-cache'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: --reports=true needs the pool cache (the reports are of the pools it lists): drop --no-pool-cache, or pass --reports=false\n(run with --help for usage)\n',
    });
  });

  it('refuses serve --reports=true with no kubeconfig found (no cluster, no reports) in one line, exit 2, before starting', async () => {
    // An empty home, no $KUBECONFIG and no in-cluster variables: findKubeConfig finds nothing.
    const env = { PATH: process.env['PATH'], HOME: path.join(workDir, 'no-cluster-home') };
    expect(await run(['serve', '--reports=true', `--cert-dir=${path.join(workDir, 'no-cluster-certs')}`], env)).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: --reports=true needs a cluster (the reports are of the pools it lists): pass --kubeconfig FILE, set $KUBECONFIG, create ~/.kube/config, run in a pod, or pass --reports=false\n(run with --help for usage)\n',
    });
  });

  it('a port in use stops serve with a hint how to choose another, exit 2 (not 1, which means findings)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const result = await run(['serve', '--host=127.0.0.1', `--port=${port}`, `--cert-dir=${path.join(workDir, 'busy-certs')}`, '--no-pool-cache']);
      expect(result.code).toBe(2);
      expect(result.stdout).toContain('cannot start: the port is in use; choose another with --port or PORT');
    } finally {
      taken.close();
    }
  });

  it('a missing file is a one-line error, not a stack trace', async () => {
    const result = await run(['validate-config', path.join(workDir, 'nope.yml')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: ${path.join(workDir, 'nope.yml')}: cannot be read: no such file or folder\n`);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('audit flags', () => {
  // audit reads only SpiderIPPools; it once accepted --configmap-name and ignored it.
  it('refuses --configmap-name, which it would not read, with exit 2 and one line', async () => {
    const result = await run(['audit', '--pools', fixture('pool-update-node-to-global'), '--configmap-name', 'my-spiderpool-conf']);
    expect(result).toEqual({ code: 2, stdout: '', stderr: "error: unknown option '--configmap-name'\n(run with --help for usage)\n" });
  });
});
