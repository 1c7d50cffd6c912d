/**
 * What `serve` does around the server for an install that needs no workstation step:
 * `--tls-secret` (the certificates kept in a Secret, src/cluster/tls-secret.ts) before the
 * server starts, `--manage-webhook-configuration` (src/registration/manage.ts) once it
 * serves. The Kubernetes client is imported only when one of them is asked for.
 */
import type { Logger } from 'pino';
import { assertRotationPolicy } from '../certs/rotation.js';
import { WEBHOOKS } from '../defaults.js';
import { CA_BUNDLE_OVERLAP_MS } from '../registration/ca-bundle.js';
import type { WebhookConfigurationManager } from '../registration/manage.js';
import type { ReadinessCheck } from '../kubernetes/healthz.js';
import { parseObjectName } from './arguments.js';

/** How often the Secret is read again and the webhook configuration compared, in milliseconds. */
const LIFECYCLE_INTERVAL_MS = 10_000;
/**
 * A CA change's overlap (a sixth of the CA validity, src/certs/rotation.ts) and a serving
 * certificate's renewal margin (a third of its validity) must each span at least three
 * rounds, so every replica has the new content before it is needed.
 */
const MIN_CA_VALIDITY_MS = 18 * LIFECYCLE_INTERVAL_MS;
const MIN_CERT_VALIDITY_MS = 9 * LIFECYCLE_INTERVAL_MS;

/** The `serve` flags these parts read (commander's names). */
export interface LifecycleFlags {
  tlsSecret?: string;
  manageWebhookConfiguration?: string;
  ownerClusterRole?: string;
  webhookConfigurationAnnotation: [string, string][];
  namespace?: string;
  service: string;
  certValidity: number;
  caValidity: number;
  kubeconfig?: string;
  context?: string;
  certDir: string;
  host?: string;
  configmapName: string;
  configmapNamespace: string;
}

function clusterConnection(flags: LifecycleFlags, needs: string) {
  return import('../cluster/kubeconfig.js').then(({ loadKubeConfig }) => {
    const loaded = loadKubeConfig(flags.kubeconfig, undefined, flags.context !== undefined ? { context: flags.context } : {});
    if (loaded === undefined) throw new Error(`${needs} needs a cluster connection: run in a pod, or pass --kubeconfig`);
    return loaded.config;
  });
}

function namespaceOf(flags: LifecycleFlags, needs: string): string {
  if (flags.namespace === undefined || flags.namespace === '') {
    throw new Error(`${needs} needs the pod's namespace: pass --namespace or set POD_NAMESPACE (the downward API's metadata.namespace)`);
  }
  return parseObjectName(flags.namespace);
}

/**
 * With `--tls-secret`: the Secret brought up to date and the served pair written into
 * `--cert-dir`, then kept so every {@link LIFECYCLE_INTERVAL_MS}.
 *
 * @returns what stops it, or `undefined` without `--tls-secret`.
 * @throws Error with one line for lifetimes too short or out of proportion, no namespace,
 *   no cluster connection, or a Secret that cannot be read, written or used.
 */
export async function provisionCertificates(flags: LifecycleFlags, logger: Logger): Promise<{ stop(): void } | undefined> {
  if (flags.tlsSecret === undefined) return undefined;
  if (flags.caValidity < MIN_CA_VALIDITY_MS)
    throw new Error(`--ca-validity must be at least ${MIN_CA_VALIDITY_MS / 1000}s (a CA change overlaps for a sixth of it)`);
  if (flags.certValidity < MIN_CERT_VALIDITY_MS)
    throw new Error(`--cert-validity must be at least ${MIN_CERT_VALIDITY_MS / 1000}s (it is renewed with a third left)`);
  const policy = {
    serviceName: flags.service,
    namespace: namespaceOf(flags, '--tls-secret'),
    certValidityMs: flags.certValidity,
    caValidityMs: flags.caValidity,
  };
  assertRotationPolicy(policy);
  const [kubeConfig, { startTlsSecretSync }] = await Promise.all([clusterConnection(flags, '--tls-secret'), import('../cluster/tls-secret.js')]);
  return startTlsSecretSync({
    kubeConfig,
    secret: { namespace: policy.namespace, name: flags.tlsSecret },
    policy,
    certDir: flags.certDir,
    intervalMs: LIFECYCLE_INTERVAL_MS,
    ...(flags.ownerClusterRole === undefined ? {} : { ownerClusterRole: flags.ownerClusterRole }),
    logger,
  });
}

/**
 * With `--manage-webhook-configuration`: the shipped configuration, named so, calling the
 * Service `--service` in the pod's namespace, matching `--configmap-name` in
 * `--configmap-namespace`, with the annotations given, written once the server answers
 * with `caBundlePem()` and kept equal to it (without `--tls-secret`, a mounted CA: plus, for
 * the overlap, the CAs other replicas may still serve; src/registration/ca-bundle.ts).
 *
 * @returns the manager (call `sync()` after a certificate change), or `undefined` without the flag.
 * @throws Error with one line for no namespace, no cluster connection, or an unusable manifest.
 */
export async function manageWebhookConfiguration(
  flags: LifecycleFlags,
  server: { port: number },
  caBundlePem: () => string | undefined,
  logger: Logger,
): Promise<WebhookConfigurationManager | undefined> {
  const name = flags.manageWebhookConfiguration;
  if (name === undefined) return undefined;
  const namespace = namespaceOf(flags, '--manage-webhook-configuration');
  const [kubeConfig, manage, configuration] = await Promise.all([
    clusterConnection(flags, '--manage-webhook-configuration'),
    import('../registration/manage.js'),
    import('../registration/webhook-configuration.js'),
  ]);
  const shipped = configuration.forSpiderpoolConf(await configuration.readWebhookManifest(), WEBHOOKS.configMap.path, {
    name: flags.configmapName,
    namespace: flags.configmapNamespace,
  });
  const manifest = {
    ...shipped,
    metadata: {
      ...shipped.metadata,
      name,
      annotations: { ...(shipped.metadata['annotations'] as Record<string, string> | undefined), ...Object.fromEntries(flags.webhookConfigurationAnnotation) },
    },
  };
  const endpoint = {
    host: flags.host === undefined || flags.host === '0.0.0.0' || flags.host === '::' ? '127.0.0.1' : flags.host,
    port: server.port,
    serverName: `${flags.service}.${namespace}.svc`,
  };
  const manager = manage.startWebhookConfigurationManager({
    kubeConfig,
    manifest,
    target: { service: { name: flags.service, namespace } },
    caBundlePem,
    servingProblem: async (caPem) =>
      (await manage.servingProblem(endpoint, caPem)) ?? manage.serviceEndpointProblem(kubeConfig, { name: flags.service, namespace }),
    ...(flags.ownerClusterRole === undefined ? {} : { ownerClusterRole: flags.ownerClusterRole }),
    // A mounted Secret's CA changes without an overlap; --tls-secret's ca.crt carries its own.
    ...(flags.tlsSecret === undefined ? { caOverlapMs: CA_BUNDLE_OVERLAP_MS } : {}),
    intervalMs: LIFECYCLE_INTERVAL_MS,
    logger,
  });
  void manager.sync();
  return manager;
}

/**
 * With `--manage-webhook-configuration`: the `/readyz` check `webhook-ca-bundle`, failing
 * while `manager()` (the one {@link manageWebhookConfiguration} started, `undefined` before)
 * judges this pod behind: its CA left out of caBundle for a newer one past the overlap
 * (src/registration/ca-bundle.ts), so the API server could not call it. None without the flag.
 */
export function webhookCaBundleReadiness(
  flags: Pick<LifecycleFlags, 'manageWebhookConfiguration'>,
  manager: () => Pick<WebhookConfigurationManager, 'behind'> | undefined,
): ReadinessCheck[] {
  return flags.manageWebhookConfiguration === undefined ? [] : [{ name: 'webhook-ca-bundle', check: () => manager()?.behind() }];
}
