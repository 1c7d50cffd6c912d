/**
 * Where the connection to the cluster comes from, in the order controller-runtime's
 * `config.GetConfig` uses (sigs.k8s.io/controller-runtime/pkg/client/config): an explicit
 * `--kubeconfig`, then `$KUBECONFIG`, then the in-cluster service account, then
 * `$HOME/.kube/config`. No source at all is not an error: callers that can work without a
 * cluster (local `serve`, the `review` CLI) say so instead of dialling a default address.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** The service-account token every in-cluster pod gets mounted (Kubernetes' rest.InClusterConfig). */
const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** What the lookup reads from the process; injectable so tests need no real home or pod. */
export interface KubeConfigEnvironment {
  env: NodeJS.ProcessEnv;
  home: string;
  exists: (path: string) => boolean;
}

const processEnvironment = (): KubeConfigEnvironment => ({ env: process.env, home: homedir(), exists: existsSync });

/** Which source `loadKubeConfig` used, for logs and messages. */
export type KubeConfigSource = 'flag' | 'KUBECONFIG' | 'in-cluster' | 'home';

/** A loaded configuration and where it came from. */
export interface LoadedKubeConfig {
  config: KubeConfig;
  source: KubeConfigSource;
  /** The file read, or the in-cluster token path. */
  from: string;
}

/**
 * Loads the cluster connection, or returns `undefined` when there is none to find.
 *
 * @param explicitPath `--kubeconfig`, when given: the only file tried.
 * @throws Error when the chosen file cannot be read or parsed (a broken kubeconfig is an
 *   operator error to report, never a reason to fall through to another source).
 */
export function loadKubeConfig(explicitPath?: string, from: KubeConfigEnvironment = processEnvironment()): LoadedKubeConfig | undefined {
  const config = new KubeConfig();
  if (explicitPath !== undefined) {
    config.loadFromFile(explicitPath);
    return { config, source: 'flag', from: explicitPath };
  }
  const fromEnv = from.env['KUBECONFIG'];
  if (fromEnv) {
    // `$KUBECONFIG` may list several files; client-node merges them as kubectl does.
    config.loadFromDefault();
    return { config, source: 'KUBECONFIG', from: fromEnv };
  }
  if (from.env['KUBERNETES_SERVICE_HOST'] && from.exists(IN_CLUSTER_TOKEN)) {
    config.loadFromCluster();
    return { config, source: 'in-cluster', from: IN_CLUSTER_TOKEN };
  }
  const homeConfig = join(from.home, '.kube', 'config');
  if (from.exists(homeConfig)) {
    config.loadFromFile(homeConfig);
    return { config, source: 'home', from: homeConfig };
  }
  return undefined;
}
