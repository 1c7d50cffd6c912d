/**
 * Where the connection to the cluster comes from: an explicit `--kubeconfig`, then
 * `$KUBECONFIG`, then for `serve` the in-cluster service account before `$HOME/.kube/config`
 * (controller-runtime's `config.GetConfig`, sigs.k8s.io/controller-runtime/pkg/client/config),
 * for the one-shot commands `$HOME/.kube/config` before it (kubectl's, client-go's
 * `clientcmd` deferred loading: in-cluster only when no kubeconfig file is found). Only the lookup, without `@kubernetes/client-node`, so that a
 * process without a cluster connection never loads that library (kubeconfig.ts loads it).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The service-account token every in-cluster pod gets mounted (Kubernetes' rest.InClusterConfig). */
export const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** What to do when no cluster is found, as the one-shot commands say it. */
export const NO_CLUSTER_FOUND = 'no cluster found: pass --kubeconfig FILE, set $KUBECONFIG, create ~/.kube/config, or run in a pod';

/** What the lookup reads from the process; injectable so tests need no real home or pod. */
export interface KubeConfigEnvironment {
  env: NodeJS.ProcessEnv;
  home: string;
  exists: (path: string) => boolean;
}

export const processEnvironment = (): KubeConfigEnvironment => ({ env: process.env, home: homedir(), exists: existsSync });

/** Which source the lookup chose, for logs and messages. */
type KubeConfigSource = 'flag' | 'KUBECONFIG' | 'in-cluster' | 'home';

/** Where the configuration is. */
export interface KubeConfigLocation {
  source: KubeConfigSource;
  /** The file to read (`$KUBECONFIG` may list several), or the in-cluster token path. */
  from: string;
}

/** Which lookup order: `serve`'s (controller-runtime) or the one-shot commands' (kubectl). */
export type KubeConfigOrder = 'controller-runtime' | 'kubectl';

/**
 * Finds the cluster connection without reading it, or `undefined` when there is none.
 *
 * @param explicitPath `--kubeconfig`, when given: the only file considered (whether or not it exists).
 */
export function findKubeConfig(
  explicitPath?: string,
  from: KubeConfigEnvironment = processEnvironment(),
  order: KubeConfigOrder = 'controller-runtime',
): KubeConfigLocation | undefined {
  if (explicitPath !== undefined) return { source: 'flag', from: explicitPath };
  const fromEnv = from.env['KUBECONFIG'];
  if (fromEnv) return { source: 'KUBECONFIG', from: fromEnv };
  const homeConfig = join(from.home, '.kube', 'config');
  const home = from.exists(homeConfig) ? ({ source: 'home', from: homeConfig } as const) : undefined;
  const inCluster =
    from.env['KUBERNETES_SERVICE_HOST'] && from.exists(IN_CLUSTER_TOKEN) ? ({ source: 'in-cluster', from: IN_CLUSTER_TOKEN } as const) : undefined;
  return order === 'kubectl' ? (home ?? inCluster) : (inCluster ?? home);
}
