/**
 * A NetworkPolicy enforcer for the one-node cluster, whose bridge CNI plugin enforces none:
 * kube-router's network policy controller alone (`--run-firewall`; no routing, no service
 * proxy, no CNI), built by build.sh beside this file and run as a process in the node's
 * network namespace like the cluster's other daemons (test/kube/cluster.sh), with the
 * node's kubeconfig. It keeps iptables chains (`KUBE-ROUTER-*`, one `KUBE-POD-FW-*` per
 * pod a policy selects, one `KUBE-NWPLCY-*` per policy) and ipsets in that namespace.
 *
 * What it admits, as NetworkPolicy defines it: traffic from the node's own addresses to a
 * pod always (kube-router pkg/controllers/netpol/pod.go, `--src-type LOCAL -j ACCEPT`:
 * kubelet probes, and here the API server, which runs on the node); a pod's traffic as
 * the policies that select the destination say.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runProcess, type Finished } from '../../e2e/cluster/processes.js';
import { ROOT } from '../../e2e/cluster/webhook.js';
import { until } from '../../helpers/until.js';
import { clusterDir } from '../kube.js';

/** cluster.sh's node name and Service range (its NODE_NAME and SERVICE_RANGE). */
const NODE_NAME = 'k1node';
const SERVICE_RANGE = '10.96.0.0/24';

export interface Enforcer {
  /** Its log so far (stdout and stderr). */
  log(): Promise<string>;
  /**
   * Stops it (SIGTERM, SIGKILL after 10 s) and removes every chain and ipset it made, so
   * the rest of the suite runs unenforced as before. Not `kube-router --cleanup-config`:
   * v2.1.0's removes nothing of the policy controller's (it runs on a controller without
   * its iptables handlers) and then panics in the service proxy's cleanup.
   *
   * @throws Error when something of it is left in the node's iptables.
   */
  stop(): Promise<void>;
}

/** Runs `command` inside the node's network namespace, `stdin` on its standard input. */
function inNode(command: string, args: readonly string[], stdin?: string): Promise<Finished> {
  const netns = readFileSync(path.join(clusterDir(), 'netns'), 'utf8').trim();
  return runProcess('nsenter', [`--net=/run/netns/${netns}`, command, ...args], { timeoutMs: 60_000, ...(stdin === undefined ? {} : { stdin }) });
}

/** The node's iptables rules (filter table), as iptables-save prints them. */
export async function nodeFilterRules(): Promise<string> {
  const r = await inNode('iptables-save', ['-t', 'filter']);
  if (r.code !== 0) throw new Error(`iptables-save in the node failed: ${r.stderr}`);
  return r.stdout;
}

/** The chains kube-router's policy controller makes (pkg/controllers/netpol/network_policy_controller.go). */
const OWN_CHAIN = /^KUBE-(ROUTER|POD-FW|NWPLCY)-/;

/**
 * Removes its rules from the node's filter table (the jumps to its chains from the
 * built-in ones, then its chains) in one iptables-restore, and its ipsets (only it makes
 * ipsets in the node: kube-proxy runs in iptables mode).
 *
 * @throws Error when a rule of it is still there afterwards.
 */
async function removeRules(): Promise<void> {
  const lines = (await nodeFilterRules()).split('\n');
  const chains = lines.filter((l) => l.startsWith(':') && OWN_CHAIN.test(l.slice(1))).map((l) => l.slice(1).split(' ')[0]!);
  const jumps = lines.filter((l) => l.startsWith('-A ') && !OWN_CHAIN.test(l.split(' ')[1]!) && / -j KUBE-(ROUTER|POD-FW|NWPLCY)-/.test(l));
  const script = ['*filter', ...jumps.map((l) => `-D${l.slice(2)}`), ...chains.map((c) => `-F ${c}`), ...chains.map((c) => `-X ${c}`), 'COMMIT', ''].join('\n');
  const restored = await inNode('iptables-restore', ['--noflush'], script);
  const sets = await inNode('ipset', ['destroy']);
  const left = (await nodeFilterRules()).split('\n').filter((l) => /KUBE-(ROUTER|POD-FW|NWPLCY)-/.test(l));
  if (left.length > 0 || restored.code !== 0 || sets.code !== 0) {
    throw new Error(
      `kube-router's rules not removed (iptables-restore exit ${restored.code}: ${restored.stderr.trim()}; ipset destroy exit ${sets.code}: ${sets.stderr.trim()}): ${left.length} left, e.g. ${left[0]}`,
    );
  }
}

async function binary(): Promise<string> {
  const built = await runProcess('bash', [path.join(ROOT, 'test/kube/policy/build.sh')], { timeoutMs: 40 * 60_000 });
  if (built.code !== 0) throw new Error(`test/kube/policy/build.sh could not build kube-router:\n${built.stderr}`);
  return path.join(built.stdout.trim(), 'kube-router');
}

/**
 * Starts the enforcer and resolves once its firewall chains are in the node's iptables
 * (its first sync done).
 *
 * @throws Error with its log when it exits or has not synced within 90 s.
 */
export async function startEnforcer(): Promise<Enforcer> {
  const dir = clusterDir();
  const bin = await binary();
  const flags = [
    `--kubeconfig=${path.join(dir, 'kubeconfig.node')}`,
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    '--enable-cni=false',
    `--hostname-override=${NODE_NAME}`,
    `--service-cluster-ip-range=${SERVICE_RANGE}`,
    '--health-port=0',
    '--metrics-port=0',
    '--v=1',
  ];
  const logFile = path.join(dir, 'logs', 'kube-router.log');
  const fd = openSync(logFile, 'a');
  const netns = readFileSync(path.join(dir, 'netns'), 'utf8').trim();
  // Its own process group, as cluster.sh's daemons: stopped as a whole, and cluster.sh's
  // `down` finds it by DIR in its command line if the test dies first.
  const child: ChildProcess = spawn('nsenter', [`--net=/run/netns/${netns}`, bin, ...flags], { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: number | null | undefined;
  const gone = new Promise<void>((resolve) => child.once('exit', (code) => ((exited = code), resolve())));
  const log = () => readFile(logFile, 'utf8');
  try {
    await until(async () => exited === undefined && (await nodeFilterRules()).includes(':KUBE-ROUTER-FORWARD'), 'kube-router to write its chains', {
      timeoutMs: 90_000,
      intervalMs: 1000,
      describe: () => (exited === undefined ? 'no KUBE-ROUTER-FORWARD chain yet' : `it exited (${exited})`),
    });
  } catch (err) {
    if (exited === undefined) process.kill(-child.pid!, 'SIGKILL');
    throw new Error(`${(err as Error).message}\n${(await log()).slice(-4000)}`);
  }
  return {
    log,
    stop: async () => {
      if (exited === undefined) {
        // kube-router alone (its iptables children finish their run), the group after 10 s.
        process.kill(child.pid!, 'SIGTERM');
        const killer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
        await gone;
        clearTimeout(killer);
      }
      await removeRules();
    },
  };
}
