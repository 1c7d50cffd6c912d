/**
 * Loads the cluster connection {@link findKubeConfig} finds (controller-runtime's order:
 * `--kubeconfig`, `$KUBECONFIG`, in-cluster, `$HOME/.kube/config`). No source at all is
 * not an error: callers that can work without a cluster (local `serve`, the `review` CLI)
 * say so instead of dialling a default address.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { findKubeConfig, processEnvironment, type KubeConfigEnvironment, type KubeConfigLocation } from './kubeconfig-source.js';

export type { KubeConfigEnvironment, KubeConfigSource } from './kubeconfig-source.js';

/** A loaded configuration and where it came from. */
export interface LoadedKubeConfig extends KubeConfigLocation {
  config: KubeConfig;
}

/**
 * Loads the cluster connection, or returns `undefined` when there is none to find.
 *
 * @param explicitPath `--kubeconfig`, when given: the only file tried.
 * @throws Error when the chosen file cannot be read or parsed (a broken kubeconfig is an
 *   operator error to report, never a reason to fall through to another source).
 */
export function loadKubeConfig(explicitPath?: string, from: KubeConfigEnvironment = processEnvironment()): LoadedKubeConfig | undefined {
  const location = findKubeConfig(explicitPath, from);
  if (location === undefined) return undefined;
  const config = new KubeConfig();
  if (location.source === 'in-cluster') config.loadFromCluster();
  // `$KUBECONFIG` may list several files; client-node merges them as kubectl does.
  else if (location.source === 'KUBECONFIG') config.loadFromDefault();
  else config.loadFromFile(location.from);
  return { ...location, config };
}
