/**
 * The node-failure windows the install states (docs/node-failure.md, written from here by
 * scripts/generate/node-failure-windows.ts) and the two-node scenarios assert
 * (test/kube/twonode.test.ts): each the sum of its parts, taken from the replicas' timing
 * (replica-defaults.ts), the Deployment's manifest (its `unreachable` toleration and
 * readiness probe) and the Kubernetes defaults it meets. Pure: manifest text in, windows
 * out. What the parts assume and leave out: docs/adr/0052-node-failure-windows.md.
 */
import { z } from 'zod';
import { parseManifests } from '../kubernetes/manifests.js';
import { tolerates } from './placement-verdict.js';
import { PEER_POLICY, PEER_PROBE_TIMEOUT_MS, PEER_ROUND_INTERVAL_MS } from './replica-defaults.js';

/** One part of a window: what takes the time, where its figure is set, and the figure in seconds. */
export interface WindowPart {
  what: string;
  source: string;
  seconds: number;
}

/** A window: its parts in order and their sum in seconds. */
export interface StatedWindow {
  parts: readonly WindowPart[];
  seconds: number;
}

export interface NodeFailureWindows {
  /** From the kill of a node holding one replica of several to the sending of the last call that fails. */
  deadReplica: StatedWindow;
  /** The same when every replica was on that node. */
  crowdedNode: StatedWindow;
  /** The longest a live replica stays marked not ready by a peer's false alarm. */
  falseMark: StatedWindow;
}

/** kube-controller-manager's defaults (pkg/controller/nodelifecycle/config/v1alpha1/defaults.go, v1.37). */
const NODE_MONITOR_PERIOD_S = 5;
const NODE_MONITOR_GRACE_PERIOD_S = 50;
/** kube-proxy's `minSyncPeriod` default, iptables and nftables (pkg/proxy/apis/config/v1alpha1/defaults.go). */
const KUBE_PROXY_MIN_SYNC_PERIOD_S = 1;
/**
 * A replacement pod scheduled, its container started (image present) and `serve` ready: a
 * stated allowance, not a setting (`serve`'s own start: docs/performance.md, `--scale`).
 */
const REPLACEMENT_START_S = 5;

const UNREACHABLE_TAINT = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };

/** The fields of a Deployment the windows read; k8s.io/api's defaults where a field may be absent. */
const DeploymentSchema = z.object({
  kind: z.literal('Deployment'),
  spec: z.object({
    template: z.object({
      spec: z.object({
        tolerations: z
          .array(
            z.object({
              key: z.string().optional(),
              operator: z.string().optional(),
              value: z.string().optional(),
              effect: z.string().optional(),
              tolerationSeconds: z.number().int().optional(),
            }),
          )
          .default([]),
        containers: z
          .array(
            z.object({
              readinessProbe: z
                .object({ initialDelaySeconds: z.number().int().nonnegative().default(0), periodSeconds: z.number().int().positive().default(10) })
                .optional(),
            }),
          )
          .min(1),
      }),
    }),
  }),
});

type PodSpec = z.infer<typeof DeploymentSchema>['spec']['template']['spec'];

const seconds = (ms: number) => ms / 1000;
/** The parts and their total, rounded to the millisecond (the parts are whole milliseconds). */
const sum = (parts: readonly WindowPart[]): StatedWindow => ({ parts, seconds: Math.round(parts.reduce((total, p) => total + p.seconds, 0) * 1000) / 1000 });

/**
 * From a node's death to a live replica's status write marking the replica there, with API
 * calls answered at once (peers.ts, rounds.ts): the round running at the kill ends; then
 * rounds, each as long as the probe deadline a silent peer makes it wait, until the peer
 * failed its probes and its heartbeat stood still; then that round's probe deadline.
 */
export function peerMarkParts(): WindowPart[] {
  const silentRoundMs = Math.max(PEER_ROUND_INTERVAL_MS, PEER_PROBE_TIMEOUT_MS);
  const { failedProbesToMark, heartbeatStaleMs } = PEER_POLICY;
  const rounds = Math.max(failedProbesToMark - 1, Math.ceil(heartbeatStaleMs / silentRoundMs));
  return [
    { what: "the other replica's round running at the kill", source: '`PEER_ROUND_INTERVAL_MS`', seconds: seconds(PEER_ROUND_INTERVAL_MS) },
    {
      what: `${failedProbesToMark} failed probes and a heartbeat still for ${seconds(heartbeatStaleMs)} s: ${rounds} rounds of ${seconds(silentRoundMs)} s`,
      source: '`PEER_POLICY`, `PEER_PROBE_TIMEOUT_MS`',
      seconds: seconds(rounds * silentRoundMs),
    },
    { what: "the marking round's probe deadline", source: '`PEER_PROBE_TIMEOUT_MS`', seconds: seconds(PEER_PROBE_TIMEOUT_MS) },
  ];
}

const PROXY_SYNC: WindowPart = {
  what: "the endpoint's change applied at kube-proxy's next sync",
  source: 'kube-proxy `minSyncPeriod` (default)',
  seconds: KUBE_PROXY_MIN_SYNC_PERIOD_S,
};

/**
 * When the pods leave an unreachable node: the shortest `tolerationSeconds` of the tolerations
 * matching the taint (pkg/controller/tainteviction `getMinTolerationTime`).
 *
 * @throws Error when none matching has `tolerationSeconds` (the pods would stay, or get the
 *   DefaultTolerationSeconds admission plugin's).
 */
function evictionSeconds(spec: PodSpec, source: string): number {
  const timed = spec.tolerations.filter((t) => tolerates(t, UNREACHABLE_TAINT) && t.tolerationSeconds !== undefined);
  if (timed.length === 0) throw new Error(`${source}: no toleration of ${UNREACHABLE_TAINT.key} with tolerationSeconds: the window needs one`);
  return Math.max(0, Math.min(...timed.map((t) => t.tolerationSeconds!)));
}

/** A pod is Ready when its slowest container's probe first passes: its initial delay and one period (pkg/kubelet/prober/worker.go). */
const readinessSeconds = (spec: PodSpec) =>
  Math.max(...spec.containers.map((c) => (c.readinessProbe ? c.readinessProbe.initialDelaySeconds + c.readinessProbe.periodSeconds : 0)));

/** The committed Deployment the stated windows are read from (a path from the repository root). */
export const DEPLOYMENT_FILE = 'deploy/base/deployment.yaml';

/**
 * The windows for the Deployment in `manifest` (YAML, one Deployment among its objects).
 *
 * @param source the manifest's file, for messages.
 * @throws Error (or ManifestError) in one line naming `source` when it holds no Deployment,
 *   one of another shape, or no timed `unreachable` toleration.
 */
export function nodeFailureWindows(manifest: string, source: string): NodeFailureWindows {
  const deployment = parseManifests(manifest, source).find((m) => m.object.kind === 'Deployment');
  if (deployment === undefined) throw new Error(`${source}: no Deployment`);
  const parsed = DeploymentSchema.safeParse(deployment.object);
  if (!parsed.success) throw new Error(`${source}: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`);
  const spec = parsed.data.spec.template.spec;
  const deployed = `\`${source}\``;
  return {
    deadReplica: sum([...peerMarkParts(), PROXY_SYNC]),
    crowdedNode: sum([
      { what: "the node's last heartbeat seen by the node lifecycle controller", source: '`--node-monitor-period` (default)', seconds: NODE_MONITOR_PERIOD_S },
      { what: 'no heartbeat for the grace period', source: '`--node-monitor-grace-period` (default)', seconds: NODE_MONITOR_GRACE_PERIOD_S },
      { what: 'the check that marks it unreachable', source: '`--node-monitor-period` (default)', seconds: NODE_MONITOR_PERIOD_S },
      { what: "the pods' `unreachable` toleration", source: deployed, seconds: evictionSeconds(spec, source) },
      { what: 'a replacement scheduled, started and serving', source: 'allowance', seconds: REPLACEMENT_START_S },
      { what: 'its readiness probe: initial delay and one period', source: deployed, seconds: readinessSeconds(spec) },
      PROXY_SYNC,
    ]),
    falseMark: sum([
      { what: "the marked replica's next round sets its `Ready` back", source: '`PEER_ROUND_INTERVAL_MS`', seconds: seconds(PEER_ROUND_INTERVAL_MS) },
    ]),
  };
}
