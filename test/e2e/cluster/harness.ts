/**
 * A real cluster for end-to-end scenarios: the kube-apiserver built from the Kubernetes
 * Go modules, the webhook from dist/ with certificates from the project's `certs` command
 * (watching SpiderIPPools through the cluster's kubeconfig),
 * the SpiderIPPool CRD, and the webhook registered by the project's `register` command
 * with `clientConfig.url` on 127.0.0.1. Scenarios talk to it with the real `kubectl`.
 *
 *   const cluster = await startCluster();      // in beforeAll (takes seconds when cached)
 *   await cluster.apply(pool);                 // kubectl apply -f - ; a result, never a throw
 *   const stored = await cluster.get('spiderippool', 'p');
 *   await cluster.stop();                      // in afterAll: no process or temp dir left
 *
 * Every kubectl call is written to `kubectl-transcript.txt` in the work dir (and to
 * $E2E_KUBECTL_TRANSCRIPT when set), so the exact output people see can be quoted.
 */
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { startApiServer, type ApiServer } from './apiserver.js';
import { until } from '../../helpers/until.js';
import { runProcess, type Finished } from './processes.js';
import { CLI, ROOT, WebhookProcess } from './webhook.js';

const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';
/**
 * Spiderpool's own SpiderIPPool CRD, as its chart installs it (read from ../shared, never
 * copied into the repo), so objects carry the defaults and pruning the real API server applies.
 */
export const CRD_FILE = path.resolve(ROOT, '../shared/spiderpool/crds/spiderpool.spidernet.io_spiderippools.yaml');
export const CRD_NAME = 'spiderippools.spiderpool.spidernet.io';

/** A manifest as an object (sent as YAML) or as YAML text. */
export type Manifest = Record<string, unknown> | string;

export interface Cluster {
  apiServer: ApiServer;
  webhook: WebhookProcess;
  /** Temp dir: certificates (certs/), logs, the kubectl transcript. */
  workDir: string;
  certDir: string;
  /** Runs kubectl against the cluster; exit code and output are the result. */
  kubectl(args: readonly string[], opts?: { stdin?: string }): Promise<Finished>;
  /** `kubectl apply -f -` of `manifest`, plus `extraArgs` (e.g. `--dry-run=server`). */
  apply(manifest: Manifest, extraArgs?: readonly string[]): Promise<Finished>;
  /** The stored object (`kubectl get -o json`), or `undefined` when it does not exist. */
  get(resource: string, name: string, namespace?: string): Promise<Record<string, any> | undefined>;
  /** The project's CLI (dist/cli/main.js) with `args`. */
  cli(args: readonly string[]): Promise<Finished>;
  /** `register --url https://127.0.0.1:PORT` with the current CA; throws when it fails. */
  register(): Promise<Finished>;
  /** Stops the webhook and the API server and removes the work dir. */
  stop(): Promise<void>;
}

/** More flags for the kube-apiserver and for `serve`. */
export interface ClusterOptions {
  apiServerArgs?: readonly string[];
  serveArgs?: readonly string[];
}

/**
 * Starts everything and resolves when Spiderpool's CRD ({@link CRD_FILE}) is Established and the API server calls
 * the webhook.
 *
 * @throws Error when a step fails (the API server binary missing, a command failing, a
 *   bounded wait running out); whatever was started is stopped first.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const workDir = await mkdtemp(path.join(tmpdir(), 'webhook-cluster-e2e-'));
  const certDir = path.join(workDir, 'certs');
  const transcript = path.join(workDir, 'kubectl-transcript.txt');
  let webhook: WebhookProcess | undefined;
  let apiServer: ApiServer | undefined;

  const stop = async (): Promise<void> => {
    await webhook?.stop();
    await apiServer?.stop();
    await rm(workDir, { recursive: true, force: true });
  };

  try {
    apiServer = await startApiServer(path.join(workDir, 'apiserver.log'), options.apiServerArgs);
    const { kubeconfig } = apiServer;
    const kubectl = async (args: readonly string[], opts: { stdin?: string } = {}): Promise<Finished> => {
      // The discovery cache goes with the work dir, not into ~/.kube/cache.
      const result = await runProcess(KUBECTL, [`--kubeconfig=${kubeconfig}`, `--cache-dir=${path.join(workDir, 'kube-cache')}`, ...args], {
        stdin: opts.stdin,
      });
      const entry = `$ kubectl ${args.join(' ')}\n${opts.stdin ? `# stdin:\n${opts.stdin}` : ''}${result.stdout}${result.stderr}# exit ${result.code}\n\n`;
      await appendFile(transcript, entry);
      if (process.env['E2E_KUBECTL_TRANSCRIPT']) await appendFile(process.env['E2E_KUBECTL_TRANSCRIPT'], entry);
      return result;
    };
    const cli = (args: readonly string[]) => runProcess(process.execPath, [CLI, ...args]);
    const succeed = async (what: string, run: Promise<Finished>): Promise<Finished> => {
      const result = await run;
      if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stdout}${result.stderr}`);
      return result;
    };

    await succeed('certs', cli(['certs', `--out=${certDir}`, '--ip=127.0.0.1']));
    // The CRD first, so that the webhook's pool cache lists SpiderIPPools at its first try.
    await succeed('applying the CRD', kubectl(['apply', '-f', CRD_FILE]));
    await succeed('waiting for the CRD', kubectl(['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']));
    const started = new WebhookProcess(certDir, kubeconfig, options.serveArgs);
    webhook = started;
    await started.start();

    const cluster: Cluster = {
      apiServer,
      webhook: started,
      workDir,
      certDir,
      kubectl,
      apply: (manifest, extraArgs = []) =>
        kubectl(['apply', '-f', '-', ...extraArgs], { stdin: typeof manifest === 'string' ? manifest : stringify(manifest) }),
      get: async (resource, name, namespace) => {
        const result = await kubectl(['get', resource, name, '-o', 'json', ...(namespace ? ['-n', namespace] : [])]);
        if (result.code !== 0) {
          if (/NotFound|not found/.test(result.stderr)) return undefined;
          throw new Error(`kubectl get ${resource} ${name} failed:\n${result.stderr}`);
        }
        return JSON.parse(result.stdout) as Record<string, any>;
      },
      cli,
      register: () =>
        succeed(
          'register',
          cli(['register', `--kubeconfig=${kubeconfig}`, `--ca-file=${path.join(certDir, 'ca.crt')}`, `--url=https://127.0.0.1:${started.port}`]),
        ),
      stop,
    };
    await cluster.register();
    await waitUntilWebhookCalled(cluster);
    return cluster;
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Resolves once the API server calls the webhook with the CA registered last: a server-side
 * dry run of an invalid `spiderpool-conf` is refused by the webhook itself (not with
 * "failed calling webhook"). The API server
 * picks up a changed ValidatingWebhookConfiguration through an informer, so the first
 * requests after `register` may still use the previous one.
 *
 * @throws Error when that does not happen within 30 s.
 */
export async function waitUntilWebhookCalled(cluster: Cluster): Promise<void> {
  let last: Finished | undefined;
  const probe = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
    data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://probe:80\n  httpRequestTimeout: not-a-duration\n' },
  };
  await until(
    async () => {
      last = await cluster.apply(probe, ['--dry-run=server']);
      // Only the webhook refuses with this field path (kubectl prints the Invalid status's causes).
      return last.code !== 0 && last.stderr.includes('The ConfigMap "spiderpool-conf" is invalid: data[conf.yml].iaasNetworkProvider.httpRequestTimeout: ');
    },
    'the API server to call the webhook',
    { timeoutMs: 30_000, intervalMs: 500, describe: () => `${last?.stdout ?? ''}${last?.stderr ?? ''}` },
  );
}
