/**
 * What the two-node scenarios (twonode.test.ts) do to the cluster: the second node
 * (second-node.sh: up, kill, revive, cut, heal, down), where the webhook's replicas run and
 * serve, and placing them there.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { until } from '../helpers/until.js';
import { runProcess } from '../e2e/cluster/processes.js';
import { ROOT } from '../e2e/cluster/webhook.js';
import { clusterDir, getJson, mustKubectl } from './kube.js';
import { DEPLOYMENT, NS, webhookPods } from './webhook-install.js';

/** cluster.sh's NODE_NAME: it also runs the control plane, so it is never killed. */
export const FIRST_NODE = 'k1node';
/** second-node.sh's NODE_NAME. */
export const SECOND_NODE = 'k2node';
export const BOTH_NODES = [FIRST_NODE, SECOND_NODE];

/** Runs `second-node.sh ACTION` on the cluster; throws with its output when it fails. */
export async function secondNode(action: 'up' | 'kill' | 'revive' | 'cut' | 'heal' | 'down'): Promise<void> {
  const r = await runProcess('bash', [path.join(ROOT, 'test/kube/second-node.sh'), action, clusterDir()], { timeoutMs: 240_000 });
  if (r.code !== 0) throw new Error(`second-node.sh ${action} failed (exit ${r.code}): ${r.stdout}${r.stderr}`);
}

const isReady = (pod: any): boolean => pod.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') === true;

/** The nodes of the webhook Service's ready endpoints: where the API server sends reviews. */
export async function servingNodes(): Promise<string[]> {
  const slices = await getJson('endpointslices', undefined, NS);
  return slices.items.flatMap((s: any) => (s.endpoints ?? []).filter((e: any) => e.conditions.ready).map((e: any) => e.nodeName as string)).sort();
}

/** Resolves once exactly the webhook's pods, all Ready, run on `nodes` (one entry per pod, sorted). */
export async function placedOn(nodes: readonly string[], timeoutMs: number): Promise<void> {
  let seen: string[] = [];
  await until(
    async () => {
      const pods = (await getJson('pods', undefined, NS)).items as any[];
      seen = pods.map((p) => `${p.metadata.name}@${p.spec.nodeName ?? '-'}${isReady(p) ? '' : '(not ready)'}`);
      return pods.length === nodes.length && pods.every(isReady) && JSON.stringify(pods.map((p) => p.spec.nodeName).sort()) === JSON.stringify(nodes);
    },
    `the webhook's pods Ready on ${nodes.join(', ')}`,
    { timeoutMs, intervalMs: 1000, describe: () => seen.join(' ') },
  );
}

const cordon = (node: string, on: boolean) => mustKubectl([on ? 'cordon' : 'uncordon', node]);

/**
 * Both replicas on `node`, as a scheduler may leave them: the other node cordoned (no
 * spread domain then), the Deployment restarted. Leaves the other node cordoned:
 * uncordoned, it would let the next rollout move a replica there before the scenario.
 */
export async function crowdOnto(node: string): Promise<void> {
  await cordon(BOTH_NODES.find((n) => n !== node)!, true);
  await mustKubectl(['-n', NS, 'rollout', 'restart', DEPLOYMENT]);
  await placedOn([node, node], 180_000);
}

export const uncordon = (node: string) => cordon(node, false);

/**
 * Polls the webhook's pods every second while `during` runs and returns the longest time
 * one of them was seen not Ready, in seconds (whole polls: ±1 s).
 */
export async function longestNotReadySeconds(during: Promise<void>): Promise<number> {
  let done = false;
  const finished = during.finally(() => {
    done = true;
  });
  const since = new Map<string, number>();
  let longestMs = 0;
  while (!done) {
    const now = Date.now();
    for (const pod of await webhookPods()) {
      const name = pod.metadata.name as string;
      if (isReady(pod)) since.delete(name);
      else longestMs = Math.max(longestMs, now - (since.get(name) ?? since.set(name, now).get(name)!));
    }
    await Promise.race([sleep(1000), finished.catch(() => undefined)]);
  }
  await finished;
  return Math.round(longestMs / 100) / 10;
}
