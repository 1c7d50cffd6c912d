/**
 * A neighbour pod that attacks the webhook from another namespace (neighbour.test.ts):
 * the webhook's own image running test/helpers/attackers.ts (transpiled, mounted from a
 * ConfigMap) against the webhook Service; the peers of the webhook pods' connections; and
 * which sources a NetworkPolicy object admits, evaluated as the NetworkPolicy API defines
 * it, for the addresses seen here (the bridge plugin enforces none; policy/enforcer.ts does).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { attackerScript } from '../helpers/attacker-process.js';
import type { AttackPlan, PlanReport } from '../helpers/attackers.js';
import { until } from '../helpers/until.js';
import { WEBHOOK_IMAGE } from './image.js';
import { clusterDir, getJson, kubectl, mustKubectl } from './kube.js';

export const NEIGHBOUR_NS = 'neighbour';
const POD = 'attacker';

/** Starts the attacker pod with `plan` and resolves once it reports; returns its pod IP. */
export async function startAttacker(plan: AttackPlan): Promise<string> {
  const dir = await mkdtemp(path.join(clusterDir(), 'attacker-'));
  await writeFile(path.join(dir, 'attacker.mjs'), attackerScript());
  await mustKubectl(['create', 'namespace', NEIGHBOUR_NS]);
  await mustKubectl(['-n', NEIGHBOUR_NS, 'create', 'configmap', 'attacker', `--from-file=attacker.mjs=${path.join(dir, 'attacker.mjs')}`]);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD, namespace: NEIGHBOUR_NS, labels: { app: 'attacker' } },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'attacker',
          image: WEBHOOK_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: ['node', '/attack/attacker.mjs', JSON.stringify(plan)],
          // Half a core of the machine's two: the test is about connection slots, not about
          // which process the CPU scheduler favours.
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
          volumeMounts: [{ name: 'attack', mountPath: '/attack', readOnly: true }],
        },
      ],
      volumes: [{ name: 'attack', configMap: { name: 'attacker' } }],
    },
  };
  await mustKubectl(['apply', '-f', '-'], { stdin: stringify(pod) });
  await until(async () => (await attackerReport()) !== undefined, 'the attacker to report', { timeoutMs: 120_000, intervalMs: 1000 });
  return (await getJson('pod', POD, NEIGHBOUR_NS)).status.podIP as string;
}

/** The attacker's last report line, if it printed one yet. */
export async function attackerReport(): Promise<PlanReport | undefined> {
  const r = await kubectl(['-n', NEIGHBOUR_NS, 'logs', POD, '--tail=1']);
  if (r.code !== 0 || !r.stdout.startsWith('{')) return undefined;
  return JSON.parse(r.stdout) as PlanReport;
}

/** Stops the attack (SIGTERM to the attacker) and returns its final report. */
export async function stopAttacker(): Promise<PlanReport> {
  await mustKubectl(['-n', NEIGHBOUR_NS, 'exec', POD, '--', 'sh', '-c', 'kill -TERM 1']);
  await until(async () => (await getJson('pod', POD, NEIGHBOUR_NS)).status.phase === 'Succeeded', 'the attacker to exit', {
    timeoutMs: 60_000,
    intervalMs: 1000,
  });
  const report = await attackerReport();
  if (report?.final !== true) throw new Error(`the attacker ended without a final report: ${JSON.stringify(report)}`);
  return report;
}

export async function removeAttacker(): Promise<void> {
  await mustKubectl(['delete', 'namespace', NEIGHBOUR_NS, '--wait=true', '--timeout=2m'], { timeoutMs: 150_000 });
}

/**
 * The remote IPv4 addresses of the established TCP connections to port 8443 inside a
 * webhook pod (its /proc/net/tcp and tcp6: the image has no ss or netstat; the server
 * listens on `::`, so IPv4 peers show in tcp6 as ::ffff:a.b.c.d).
 */
export async function peersOfWebhookPod(namespace: string, pod: string): Promise<string[]> {
  const table = await mustKubectl(['-n', namespace, 'exec', pod, '--', 'cat', '/proc/net/tcp', '/proc/net/tcp6']);
  const peers: string[] = [];
  for (const line of table.split('\n')) {
    const [, local, remote, state] = line.trim().split(/\s+/);
    if (local === undefined || remote === undefined || state !== '01') continue; // 01: ESTABLISHED
    if (local.split(':')[1] !== '20FB') continue; // 8443
    const hex = remote.split(':')[0]!;
    if (hex.length === 32 && !hex.startsWith('0000000000000000FFFF0000')) continue; // IPv6 proper
    // Each 32-bit word little-endian on x86: the bytes of the IPv4 address in reverse.
    const word = hex.slice(-8);
    peers.push([3, 2, 1, 0].map((i) => parseInt(word.slice(i * 2, i * 2 + 2), 16)).join('.'));
  }
  return peers;
}

/** A source of a connection to the webhook pods, as NetworkPolicy sees it. */
export interface PolicySource {
  ip: string;
  /** The labels of the source pod's namespace; absent for a source that is no pod (the API server, a node). */
  namespaceLabels?: Record<string, string>;
  podLabels?: Record<string, string>;
}

/**
 * Whether `policy` (a NetworkPolicy with `Ingress` in its policyTypes, selecting the pod)
 * admits `source` to TCP `port`, as networking.k8s.io/v1 defines it: some ingress rule
 * whose ports include the port (or that lists none) and whose `from` is empty or has a peer
 * that matches: an ipBlock containing the address (and not in an `except`), or for a pod
 * source a namespaceSelector and/or podSelector matching its labels. Only `matchLabels`
 * selectors, which is what deploy/ uses; a `matchExpressions` throws.
 */
export function policyAdmits(policy: any, source: PolicySource, port: number): boolean {
  return (policy.spec.ingress ?? []).some((rule: any) => {
    const ports = rule.ports ?? [];
    if (ports.length > 0 && !ports.some((p: any) => (p.protocol ?? 'TCP') === 'TCP' && p.port === port)) return false;
    const from = rule.from ?? [];
    return from.length === 0 || from.some((peer: any) => peerMatches(peer, source));
  });
}

function peerMatches(peer: any, source: PolicySource): boolean {
  if (peer.ipBlock !== undefined) {
    return inCidr(source.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c: string) => inCidr(source.ip, c));
  }
  if (source.namespaceLabels === undefined) return false; // selectors match pods only
  // A podSelector alone selects pods of the policy's own namespace, never another's.
  const nsOk = peer.namespaceSelector === undefined ? false : labelsMatch(peer.namespaceSelector, source.namespaceLabels);
  const podOk = peer.podSelector === undefined ? true : labelsMatch(peer.podSelector, source.podLabels ?? {});
  return nsOk && podOk;
}

function labelsMatch(selector: any, labels: Record<string, string>): boolean {
  if (selector.matchExpressions !== undefined) throw new Error('policyAdmits handles matchLabels selectors only');
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/') as [string, string];
  const toInt = (a: string) => a.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}
