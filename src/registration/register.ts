/**
 * `register`: the current caBundle and the webhook's address, applied to the cluster as the
 * ValidatingWebhookConfiguration from `deploy/`. Run it after `certs --new-ca` (or any CA
 * change): the API server then trusts the new chain at once, nothing restarts.
 */
import { readFile } from 'node:fs/promises';
import { caBundleBase64 } from '../certs/files.js';
import { loadKubeConfig } from '../cluster/kubeconfig.js';
import { NO_CLUSTER_FOUND } from '../cluster/kubeconfig-source.js';
import { applyWebhookConfiguration, type AppliedWebhookConfiguration } from './apply.js';
import { readWebhookManifest, webhookConfigurationFor, type WebhookTarget } from './webhook-configuration.js';

export interface RegisterOptions {
  /** The CA certificate (PEM) that signed the webhook's serving certificate: `certs --out`'s `ca.crt`. */
  caFile: string;
  target: WebhookTarget;
  /** `--kubeconfig`; otherwise kubectl's search order. */
  kubeconfig?: string;
  /** `--context`: a context of the kubeconfig instead of its current-context. */
  context?: string;
  /** The manifest to start from; the shipped `deploy/base/validatingwebhookconfiguration.yaml` by default. */
  manifest?: string;
}

/** The applied object and the API server it went to. */
export interface Registration extends AppliedWebhookConfiguration {
  server: string;
}

/**
 * Reads the CA, the manifest and the cluster connection, then applies the configuration.
 * Every input is checked before the cluster is contacted.
 *
 * @throws Error with a one-line message when the CA file is missing or holds no PEM
 *   certificate, the manifest is unusable, `target.url` is not an https URL, there is no
 *   kubeconfig to be found or it cannot be read, or the API server is unreachable or refuses.
 */
export async function registerWebhook(opts: RegisterOptions): Promise<Registration> {
  let caPem: string;
  try {
    caPem = await readFile(opts.caFile, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the CA file ${opts.caFile} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); write it with the certs command`);
  }
  const caBundle = caBundleBase64(caPem);
  const configuration = webhookConfigurationFor(await readWebhookManifest(opts.manifest), opts.target, caBundle);
  // Its errors name the source (--kubeconfig, $KUBECONFIG, ...) already.
  const loaded = loadKubeConfig(opts.kubeconfig, undefined, { order: 'kubectl', ...(opts.context !== undefined ? { context: opts.context } : {}) });
  if (loaded === undefined) throw new Error(NO_CLUSTER_FOUND);
  const applied = await applyWebhookConfiguration(loaded.config, configuration);
  return { ...applied, server: loaded.config.getCurrentCluster()?.server ?? '' };
}
