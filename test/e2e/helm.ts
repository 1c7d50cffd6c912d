/**
 * Helm for the e2e and cluster tests: built from its Go module by `.ci/go-tool` (once per
 * content, cached outside the clone; a cached build answers at once), or the binary $HELM
 * names. The chart is deploy/helm/spiderpool-iaas-webhook.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseManifests } from '../deploy/render.js';
import { runProcess, type Finished } from './cluster/processes.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CHART_DIR = path.join(REPO_ROOT, 'deploy/helm/spiderpool-iaas-webhook');
/** The release the README installs, in the namespace deploy/base uses. */
export const RELEASE = 'spiderpool-iaas-webhook';
export const RELEASE_NAMESPACE = 'spiderpool-iaas-webhook';
/** The Helm release the tests and scripts/release build (Helm 4: v3.22.0 is served but not approved here). */
export const HELM_MODULE = 'helm.sh/helm/v4@v4.3.2';

/**
 * Chart.yaml's kubeVersion (matchConditions are GA in 1.30). `helm template` assumes
 * Kubernetes 1.20 without a cluster, so it is told the oldest version the chart installs on.
 */
export const MIN_KUBE_VERSION = '1.30.0';

let binary: Promise<string> | undefined;

/** The helm binary's path, building it on first use (a cold build takes minutes on 2 cores). */
export function helmBinary(): Promise<string> {
  binary ??= (async () => {
    if (process.env['HELM']) return process.env['HELM'];
    const built = await runProcess(path.join(REPO_ROOT, '.ci/go-tool'), ['helm', HELM_MODULE, `${HELM_MODULE.split('@')[0]}/cmd/helm`], {
      timeoutMs: 30 * 60_000,
    });
    if (built.code !== 0) throw new Error(`.ci/go-tool could not build helm:\n${built.stderr}`);
    return path.join(built.stdout.trim(), 'helm');
  })();
  return binary;
}

/** Runs helm to completion; a non-zero exit is a result. */
export async function helm(args: readonly string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Finished> {
  return runProcess(await helmBinary(), args, opts);
}

/**
 * `helm template` of the chart with `--set` pairs (or values files with `-f`), parsed.
 *
 * @throws Error with helm's stderr when it exits non-zero.
 */
export async function helmTemplate(args: readonly string[] = [], namespace = RELEASE_NAMESPACE): Promise<Record<string, any>[]> {
  const result = await helm(['template', RELEASE, CHART_DIR, '--namespace', namespace, `--kube-version=${MIN_KUBE_VERSION}`, ...args]);
  if (result.code !== 0) throw new Error(`helm template ${args.join(' ')} failed: ${result.stderr.trim()}`);
  return parseManifests(result.stdout);
}

/**
 * The notes (templates/NOTES.txt) `helm install` prints with `--set` pairs, from a client-only
 * dry run (`helm template` prints no notes): the text after its `NOTES:` line.
 *
 * @throws Error with helm's stderr when it exits non-zero, or when it prints no notes.
 */
export async function helmNotes(args: readonly string[] = []): Promise<string> {
  const result = await helm(['install', RELEASE, CHART_DIR, '--namespace', RELEASE_NAMESPACE, '--dry-run=client', ...args]);
  if (result.code !== 0) throw new Error(`helm install --dry-run=client ${args.join(' ')} failed: ${result.stderr.trim()}`);
  const at = result.stdout.indexOf('\nNOTES:\n');
  if (at < 0) throw new Error(`helm install --dry-run=client ${args.join(' ')} printed no notes`);
  return result.stdout.slice(at + '\nNOTES:\n'.length);
}

/** The PEM texts of a `tls.method=provided` install (certs/generate.ts' names). */
interface ProvidedPems {
  certPem: string;
  keyPem: string;
  caCertPem: string;
}

/** Stand-ins for charts that are only rendered: base64 `Y2VydA==`, `a2V5`, `Y2E=`. */
export const PLACEHOLDER_PEMS: ProvidedPems = { certPem: 'cert', keyPem: 'key', caCertPem: 'ca' };

/** The `--set` arguments of `tls.method=provided` with these PEMs, base64-encoded as values.yaml asks. */
export function providedTlsArgs({ certPem, keyPem, caCertPem }: ProvidedPems): string[] {
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  const values = { tlsCert: certPem, tlsKey: keyPem, tlsCa: caCertPem };
  return ['--set', 'tls.method=provided', ...Object.entries(values).flatMap(([key, pem]) => ['--set', `tls.provided.${key}=${b64(pem)}`])];
}
