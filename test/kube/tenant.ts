/**
 * A hostile tenant on the one-node cluster (tenant.test.ts): a namespace whose
 * ServiceAccount may create Pods and Deployments there and nothing else, and pods in it
 * that run tenant-attacks.ts (writes through the API server, bodies to the webhook
 * Service) or test/helpers/attackers.ts (slow bodies), each ending by itself. Also what
 * the webhook pods show afterwards: restarts and peak memory.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { attackerScript, moduleScript } from '../helpers/attacker-process.js';
import { until } from '../helpers/until.js';
import { WEBHOOK_IMAGE } from './image.js';
import { clusterDir, getJson, kubectl, mustKubectl } from './kube.js';
import { NS, webhookPods } from './webhook-install.js';

export const TENANT_NS = 'tenant';
export const TENANT_SA = 'tenant';
const TENANT_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tenant-attacks.ts');

/** The namespace, its ServiceAccount with `create` on Pods and Deployments only, and the ConfigMap of both scripts. */
export async function createTenant(): Promise<void> {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'tenant', namespace: TENANT_NS },
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['create'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['create'] },
    ],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'tenant', namespace: TENANT_NS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
    subjects: [{ kind: 'ServiceAccount', name: TENANT_SA, namespace: TENANT_NS }],
  };
  await mustKubectl(['create', 'namespace', TENANT_NS]);
  await mustKubectl(['-n', TENANT_NS, 'create', 'serviceaccount', TENANT_SA]);
  await mustKubectl(['apply', '-f', '-'], { stdin: [role, binding].map((o) => stringify(o)).join('---\n') });
  const dir = await mkdtemp(path.join(clusterDir(), 'tenant-'));
  await writeFile(path.join(dir, 'tenant.mjs'), moduleScript(TENANT_SCRIPT, 'await runTenant(JSON.parse(process.argv[2]));'));
  await writeFile(path.join(dir, 'attacker.mjs'), attackerScript());
  await mustKubectl(['-n', TENANT_NS, 'create', 'configmap', 'tenant-scripts', `--from-file=${dir}`]);
}

export async function removeTenant(): Promise<void> {
  await mustKubectl(['delete', 'namespace', TENANT_NS, '--ignore-not-found', '--wait=true', '--timeout=2m'], { timeoutMs: 150_000 });
}

/** `kubectl auth can-i VERB RESOURCE` as the tenant's ServiceAccount, in `namespace`. */
export async function tenantCan(verb: string, resource: string, namespace = TENANT_NS): Promise<boolean> {
  const r = await kubectl(['auth', 'can-i', verb, resource, '-n', namespace, `--as=system:serviceaccount:${TENANT_NS}:${TENANT_SA}`]);
  return r.stdout.trim() === 'yes';
}

/** One container of a tenant pod: `node /tenant/SCRIPT '<plan as JSON>'`. */
export interface TenantContainer {
  name: string;
  script: 'tenant.mjs' | 'attacker.mjs';
  plan: unknown;
}

/**
 * Runs the containers side by side in pod `name` of the tenant namespace, waits (at most
 * `timeoutMs`) until all have exited, and returns each container's last log line parsed
 * (its final report).
 *
 * @throws Error when the pod fails (a container exited non-zero) or does not end in time.
 */
export async function runTenantPod(name: string, containers: readonly TenantContainer[], timeoutMs: number): Promise<Record<string, any>> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: TENANT_NS, labels: { app: 'tenant' } },
    spec: {
      serviceAccountName: TENANT_SA,
      restartPolicy: 'Never',
      containers: containers.map((c) => ({
        name: c.name,
        image: WEBHOOK_IMAGE,
        imagePullPolicy: 'IfNotPresent',
        command: ['node', `/tenant/${c.script}`, JSON.stringify(c.plan)],
        // Half a core each of the machine's two: the guard, not the CPU scheduler, is under test.
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
        volumeMounts: [{ name: 'scripts', mountPath: '/tenant', readOnly: true }],
      })),
      volumes: [{ name: 'scripts', configMap: { name: 'tenant-scripts' } }],
    },
  };
  await mustKubectl(['apply', '-f', '-'], { stdin: stringify(pod) });
  const phase = await until(
    async () => {
      const p = (await getJson('pod', name, TENANT_NS)).status.phase as string;
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    },
    `tenant pod ${name} to end`,
    { timeoutMs, intervalMs: 2_000 },
  );
  const reports: Record<string, any> = {};
  for (const c of containers) {
    const log = await mustKubectl(['-n', TENANT_NS, 'logs', name, '-c', c.name]);
    if (phase === 'Failed') throw new Error(`tenant pod ${name} failed; container ${c.name} printed:\n${log.slice(-2000)}`);
    reports[c.name] = JSON.parse(log.trim().split('\n').pop()!);
  }
  return reports;
}

/** One webhook pod's restarts and memory, from its status and inside its container. */
export interface WebhookPodState {
  name: string;
  restarts: number;
  /** Why its container last ended, when it restarted (e.g. OOMKilled, Error). */
  lastTermination: string | undefined;
  /** Peak and current resident memory of the serving process (PID 1: VmHWM, VmRSS), in KiB. */
  peakRssKiB: number | undefined;
  rssKiB: number | undefined;
  /** The container cgroup's peak usage (v1 memory.max_usage_in_bytes, v2 memory.peak), in bytes; page cache included. */
  cgroupPeakBytes: number | undefined;
}

const MEMORY_SCRIPT =
  'grep -E "^Vm(HWM|RSS):" /proc/1/status; cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.peak 2>/dev/null || true';

/** The state of every webhook pod now. */
export async function webhookPodStates(): Promise<WebhookPodState[]> {
  return Promise.all(
    (await webhookPods()).map(async (p) => {
      const status = p.status.containerStatuses?.[0];
      const out = (await kubectl(['-n', NS, 'exec', p.metadata.name, '--', 'sh', '-c', MEMORY_SCRIPT], { timeoutMs: 30_000 })).stdout;
      const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(out)?.[1] ?? NaN) || undefined;
      return {
        name: p.metadata.name as string,
        restarts: (status?.restartCount ?? 0) as number,
        lastTermination: status?.lastState?.terminated?.reason as string | undefined,
        peakRssKiB: kib('VmHWM'),
        rssKiB: kib('VmRSS'),
        cgroupPeakBytes: Number(/^(\d+)$/m.exec(out)?.[1] ?? NaN) || undefined,
      };
    }),
  );
}
