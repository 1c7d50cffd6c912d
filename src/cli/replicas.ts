/**
 * What the replicas do about each other (docs/adr/0035-peer-readiness.md): `serve
 * --peer-readiness` marks a peer whose node died not ready within seconds instead of
 * Kubernetes' ~50 s (src/cluster/peers.ts); `serve --rebalance` moves a replica off a node it
 * shares while another node could take it (src/cluster/rebalance.ts). The Kubernetes client
 * is imported only with one of the flags.
 */
import type { Logger } from 'pino';
import { PEER_POLICY, PEER_PROBE_TIMEOUT_MS, PEER_ROUND_INTERVAL_MS, REPLICA_CALL_TIMEOUT_MS } from '../cluster/replica-defaults.js';

/** The `serve` flags this part reads (commander's names). */
export interface ReplicaFlags {
  peerReadiness?: boolean;
  rebalance?: boolean;
  podName?: string;
  namespace?: string;
  kubeconfig?: string;
  /** `--context`: the same kubeconfig context as the caches'. */
  context?: string;
}

/** Milliseconds between placement rounds, and how long a crowded node must last before a replica leaves it. */
const REBALANCE_INTERVAL_MS = 10_000;
const REBALANCE_SETTLE_MS = 30_000;

/**
 * Starts what the flags ask for.
 *
 * @returns what stops them, or `undefined` with neither flag.
 * @throws Error with one line when the pod's name or namespace is missing or there is no
 *   cluster connection.
 */
export async function watchReplicas(flags: ReplicaFlags, server: { port: number; ready(): boolean }, logger: Logger): Promise<{ stop(): void } | undefined> {
  if (!flags.peerReadiness && !flags.rebalance) return undefined;
  const which = flags.peerReadiness ? '--peer-readiness' : '--rebalance';
  if (!flags.podName) throw new Error(`${which} needs the pod's name: pass --pod-name or set POD_NAME (the downward API's metadata.name)`);
  if (!flags.namespace) throw new Error(`${which} needs the pod's namespace: pass --namespace or set POD_NAMESPACE (the downward API's metadata.namespace)`);
  const { loadKubeConfig } = await import('../cluster/kubeconfig.js');
  const loaded = loadKubeConfig(flags.kubeconfig, undefined, flags.context !== undefined ? { context: flags.context } : {});
  if (loaded === undefined) throw new Error(`${which} needs a cluster connection: run in a pod, or pass --kubeconfig`);
  const pod = { kubeConfig: loaded.config, namespace: flags.namespace, podName: flags.podName, callTimeoutMs: REPLICA_CALL_TIMEOUT_MS, logger };
  logger.info(
    { pod: flags.podName, peerReadiness: flags.peerReadiness === true, rebalance: flags.rebalance === true },
    'watching the other replicas of this Deployment',
  );
  const started: { stop(): void }[] = [];
  if (flags.peerReadiness) {
    const { startPeerWatch } = await import('../cluster/peers.js');
    const policy = { intervalMs: PEER_ROUND_INTERVAL_MS, probeTimeoutMs: PEER_PROBE_TIMEOUT_MS, policy: PEER_POLICY };
    started.push(startPeerWatch({ ...pod, ...policy, port: server.port, selfServing: () => server.ready() }));
  }
  if (flags.rebalance) {
    const { startRebalance } = await import('../cluster/rebalance.js');
    started.push(startRebalance({ ...pod, intervalMs: REBALANCE_INTERVAL_MS, settleMs: REBALANCE_SETTLE_MS }));
  }
  return {
    stop: () => {
      for (const rounds of started) rounds.stop();
    },
  };
}
