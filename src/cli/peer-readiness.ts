/**
 * `serve --peer-readiness`: the replicas watch each other and mark a peer whose node died
 * not ready within seconds instead of Kubernetes' ~50 s (src/cluster/peers.ts,
 * docs/adr/0035-peer-readiness.md). The Kubernetes client is imported only with the flag.
 */
import type { Logger } from 'pino';
import type { PeerPolicy } from '../cluster/peer-verdict.js';

/** The `serve` flags this part reads (commander's names). */
export interface PeerReadinessFlags {
  peerReadiness?: boolean;
  podName?: string;
  namespace?: string;
  kubeconfig?: string;
}

/** Milliseconds between rounds: a dead peer is noticed within about two of them. */
export const PEER_ROUND_INTERVAL_MS = 1_000;
/** A probe's deadline, in milliseconds: a healthy peer answers `/healthz` in milliseconds. */
export const PEER_PROBE_TIMEOUT_MS = 1_000;
/** Each API call's deadline in a round, in milliseconds. */
export const PEER_CALL_TIMEOUT_MS = 2_000;
/** Two failed probes in a row, and a heartbeat unchanged for 2.5 rounds. */
export const PEER_POLICY: PeerPolicy = { failedProbesToMark: 2, heartbeatStaleMs: 2_500 };

/**
 * Starts the watch when `--peer-readiness` is given.
 *
 * @returns what stops it, or `undefined` without the flag.
 * @throws Error with one line when the pod's name or namespace is missing or there is no
 *   cluster connection.
 */
export async function watchPeers(flags: PeerReadinessFlags, server: { port: number; ready(): boolean }, logger: Logger): Promise<{ stop(): void } | undefined> {
  if (!flags.peerReadiness) return undefined;
  if (!flags.podName) throw new Error("--peer-readiness needs the pod's name: pass --pod-name or set POD_NAME (the downward API's metadata.name)");
  if (!flags.namespace) throw new Error("--peer-readiness needs the pod's namespace: pass --namespace or set POD_NAMESPACE (the downward API's metadata.namespace)");
  const [{ loadKubeConfig }, { startPeerWatch }] = await Promise.all([import('../cluster/kubeconfig.js'), import('../cluster/peers.js')]);
  const loaded = loadKubeConfig(flags.kubeconfig);
  if (loaded === undefined) throw new Error('--peer-readiness needs a cluster connection: run in a pod, or pass --kubeconfig');
  logger.info({ pod: flags.podName }, 'peer readiness: watching the other replicas of this Deployment');
  return startPeerWatch({
    kubeConfig: loaded.config,
    namespace: flags.namespace,
    podName: flags.podName,
    port: server.port,
    selfServing: () => server.ready(),
    intervalMs: PEER_ROUND_INTERVAL_MS,
    probeTimeoutMs: PEER_PROBE_TIMEOUT_MS,
    callTimeoutMs: PEER_CALL_TIMEOUT_MS,
    policy: PEER_POLICY,
    logger,
  });
}
