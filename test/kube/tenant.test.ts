/**
 * Hostile tenants cannot take the refusing webhooks away from the API server, on the
 * one-node cluster with deploy/ installed through the test overlay. A namespace whose
 * ServiceAccount may create Pods and Deployments there and nothing else runs pods
 * (tenant.ts) while the fault load (faults.ts) sends guarded SpiderIPPool and
 * spiderpool-conf writes through the API server:
 *
 *   1  hostile pool annotations through the API server: backtracking wildcards against
 *      pool names in the cache, very long pattern lists, distinct ~240 KiB lists; Pods and
 *      Deployments, server-side dry runs and real creates
 *   2  hostile bodies straight to the webhook Service: deep and wide JSON of 6 MiB, heads
 *      refused before their body
 *   3  all at once, with slow bodies trickled on 256 connections (test/helpers/attackers.ts)
 *      from the same pod address: there a reset is an answer too (connection caps)
 *
 * Asserted: not one guarded call fails, no webhook pod restarts, the webhook answers a
 * refused write again after each attack, every tenant write is admitted (the candidate-pool
 * webhooks only warn), every hostile body is refused and a head refusal closes its
 * connection. The webhook pods' peak RSS is printed, not judged.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import type { AttackPlan, PlanReport } from '../helpers/attackers.js';
import { runProcess } from '../e2e/cluster/processes.js';
import { CLI } from '../e2e/cluster/webhook.js';
import { runFaults, type FaultRunResult } from './faults.js';
import { ApiClient, clusterDir, getJson, mustKubectl } from './kube.js';
import type { BodiesPlan, Tally, TenantReport, WritesPlan } from './tenant-attacks.js';
import { createTenant, removeTenant, runTenantPod, tenantCan, webhookPodStates, type TenantContainer, type WebhookPodState } from './tenant.js';
import { NS, copyOverlay, prepareSpiderpool, report, webhookAnswers, waitAvailable } from './webhook-install.js';

/**
 * Traditional pools (no webhook reviews their writes) whose names a backtracking
 * expression of BACKTRACKING_PATTERN takes long on: its cost grows ~1.7x per character
 * (18 characters: ~1 s each under Node 20, about a tenth under Node 24).
 */
const TARGET_POOLS = Array.from({ length: 16 }, (_, i) => `tenant-target-${String(i).padStart(4, '0')}`);
const SERVICE_NAME = `spiderpool-iaas-webhook.${NS}.svc`;
/** A tenant pod's own bound; with the wait for steady state (60 s at most) under faults.ts' 240 s per fault. */
const POD_TIMEOUT_MS = 160_000;

let overlay: string;
let before: WebhookPodState[];

const targetPool = (name: string) => ({
  apiVersion: 'spiderpool.spidernet.io/v2beta1',
  kind: 'SpiderIPPool',
  metadata: { name, labels: { 'tenant-test': 'target' } },
  spec: { ipVersion: 4, subnet: '10.7.0.0/16', ips: ['10.7.0.10-10.7.0.20'] },
});

beforeAll(async () => {
  await prepareSpiderpool();
  await mustKubectl(['apply', '-f', '-'], { stdin: stringify({ apiVersion: 'v1', kind: 'List', items: TARGET_POOLS.map(targetPool) }) });
  overlay = await copyOverlay();
  await mustKubectl(['apply', '-k', overlay]);
  await waitAvailable();
  await webhookAnswers();
  await createTenant();
  before = await webhookPodStates();
}, 300_000);

afterAll(async () => {
  await removeTenant();
  const unregister = await runProcess(process.execPath, [
    CLI,
    'unregister',
    `--kubeconfig=${path.join(clusterDir(), 'kubeconfig')}`,
    '--name=spiderpool-iaas-webhook',
  ]);
  if (unregister.code !== 0) throw new Error(`unregister failed: ${unregister.stderr}`);
  await mustKubectl(['delete', '-k', overlay, '--timeout=2m', '--ignore-not-found'], { timeoutMs: 150_000 });
  await mustKubectl(['delete', 'spiderippools', '-l', 'tenant-test=target']);
}, 300_000);

describe('the tenant', () => {
  it('may create Pods and Deployments in its namespace, and nothing else', async () => {
    expect(await tenantCan('create', 'pods')).toBe(true);
    expect(await tenantCan('create', 'deployments.apps')).toBe(true);
    for (const [verb, resource] of [
      ['get', 'pods'],
      ['delete', 'pods'],
      ['create', 'secrets'],
      ['create', 'configmaps'],
      ['create', 'statefulsets.apps'],
    ]) {
      expect({ verb, resource, allowed: await tenantCan(verb!, resource!) }).toEqual({ verb, resource, allowed: false });
    }
    expect(await tenantCan('create', 'pods', 'default')).toBe(false);
    expect(await tenantCan('create', 'configmaps', 'kube-system')).toBe(false);
    expect(await tenantCan('create', 'spiderippools.spiderpool.spidernet.io')).toBe(false);
  });
});

const WRITES: WritesPlan = {
  mode: 'writes',
  counts: { wildcard: 16, 'long-list': 16, 'distinct-list': 400 },
  realEvery: 20,
  concurrency: 4,
  deadlineMs: 100_000,
  requestTimeoutMs: 30_000,
};

function bodiesPlan(host: string): BodiesPlan {
  return {
    mode: 'bodies',
    host,
    port: 443,
    servername: SERVICE_NAME,
    paths: ['/validate-pod', '/validate-workload', '/validate-spiderippool', '/validate-configmap'],
    counts: { deep: 16, wide: 16, 'early-refused': 16 },
    bodyBytes: 6 * 1024 * 1024,
    closeWaitMs: 10_000,
    concurrency: 4,
    deadlineMs: 100_000,
    requestTimeoutMs: 30_000,
  };
}

function slowPlan(host: string): AttackPlan {
  return {
    host,
    port: 443,
    sources: [],
    servername: SERVICE_NAME,
    durationMs: 60_000,
    reportEveryMs: 5_000,
    attacks: [{ kind: 'slow-body', perSource: 256, reopenMs: 1_000 }],
    slowBody: { path: '/validate-pod', declaredBytes: 7 * 1024 * 1024 },
  };
}

const mib = (kib: number | undefined) => (kib === undefined ? '?' : (kib / 1024).toFixed(0));

/** Per pod: the highest VmHWM and cgroup peak seen after any attack, against its VmHWM before them, and its restarts. */
function peakSummary(before: WebhookPodState[], snapshots: WebhookPodState[][]): string {
  return before
    .map(({ name, peakRssKiB }) => {
      const seen = snapshots.flat().filter((s) => s.name === name);
      const highest = (f: (s: WebhookPodState) => number | undefined) => Math.max(...seen.map((s) => f(s) ?? 0));
      const last = seen[seen.length - 1];
      return `${name} ${mib(highest((s) => s.peakRssKiB))} MiB (VmHWM; before the attacks ${mib(peakRssKiB)}; cgroup peak ${mib(highest((s) => s.cgroupPeakBytes) / 1024)} MiB; restarts ${last?.restarts ?? '?'}${last?.lastTermination ? `, last ${last.lastTermination}` : ''})`;
    })
    .join(', ');
}

const sumOf = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe('hostile tenants while the fault load writes guarded objects', () => {
  let result: FaultRunResult;
  const reports: Record<string, Record<string, any>> = {};
  const statesAfter: Record<string, WebhookPodState[]> = {};
  const unsteady: string[] = [];

  /** Runs a tenant pod, then waits for the webhook to answer a refused write again (a miss is recorded, not thrown). */
  const attack = (name: string, containers: TenantContainer[]) => async () => {
    reports[name] = await runTenantPod(name, containers, POD_TIMEOUT_MS);
    try {
      await webhookAnswers();
    } catch (e) {
      unsteady.push(`${name}: ${(e as Error).message.slice(0, 300)}`);
    }
    statesAfter[name] = await webhookPodStates();
    console.log(`tenant ${name}: ${JSON.stringify(reports[name])}\nwebhook pods after it: ${JSON.stringify(statesAfter[name])}`);
  };

  beforeAll(async () => {
    const host = (await getJson('service', 'spiderpool-iaas-webhook', NS)).spec.clusterIP as string;
    const client = new ApiClient();
    try {
      result = await runFaults(client, {
        ratePerSecond: 10,
        faults: [
          { name: 'hostile pool annotations through the API server', run: attack('tenant-writes', [{ name: 'writes', script: 'tenant.mjs', plan: WRITES }]) },
          { name: 'hostile bodies to the webhook Service', run: attack('tenant-bodies', [{ name: 'bodies', script: 'tenant.mjs', plan: bodiesPlan(host) }]) },
          {
            name: 'hostile writes, bodies and slow bodies at once',
            run: attack('tenant-all', [
              { name: 'writes', script: 'tenant.mjs', plan: WRITES },
              { name: 'bodies', script: 'tenant.mjs', plan: bodiesPlan(host) },
              { name: 'slow', script: 'attacker.mjs', plan: slowPlan(host) },
            ]),
          },
        ],
      });
    } finally {
      client.close();
    }
    report('tenant attacks', result);
    console.log(
      `tenant attacks: webhook pods' peak RSS ${peakSummary(before, Object.values(statesAfter))} (a restart starts its count again; OOMKilled: it reached its memory limit)` +
        `; steady after each attack: ${unsteady.length === 0 ? 'yes' : JSON.stringify(unsteady)}`,
    );
    await writeFile(path.join(clusterDir(), 'tenant-attack.json'), JSON.stringify({ admission: result, reports, before, statesAfter, unsteady }, null, 2));
  }, 600_000);

  it('not one guarded call failed, allowed and refused ones all through', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.allowed).toBeGreaterThan(20);
    expect(result.refused).toBeGreaterThan(20);
  });

  it('no webhook pod restarted or was replaced', () => {
    const seen = (states: WebhookPodState[]) =>
      states.map((s) => ({ name: s.name, restarts: s.restarts, lastTermination: s.lastTermination })).sort((a, b) => a.name.localeCompare(b.name));
    for (const states of Object.values(statesAfter)) expect(seen(states)).toEqual(seen(before));
  });

  it('the webhook answered a refused write again after each attack', () => {
    expect(unsteady).toEqual([]);
  });

  it('sent every tenant write, and each was admitted (the candidate-pool webhooks only warn)', () => {
    for (const pod of ['tenant-writes', 'tenant-all']) {
      const writes = reports[pod]!['writes'] as TenantReport;
      for (const [kind, count] of Object.entries(WRITES.counts)) {
        const tally = writes.tallies[kind] as Tally;
        expect({ pod, kind, sent: tally.sent, errors: tally.errors }).toEqual({ pod, kind, sent: count, errors: {} });
        expect({ pod, kind, statuses: Object.keys(tally.statuses) }).toEqual({ pod, kind, statuses: ['201'] });
      }
    }
  });

  const BODY_KINDS = ['deep', 'wide', 'early-refused'] as const;
  // A wide body (within the JSON bounds) on a warn-only path may run the worker out of its
  // heap: that review is answered allowed, unchecked, by design (never a refusal for load).
  const notRefusals = (tally: Tally, kind?: string) => Object.keys(tally.statuses).filter((s) => !/^4\d\d$/.test(s) && !(kind === 'wide' && s === '200'));

  it('answered every hostile body posted to the Service alone with a 4xx refusal', () => {
    const bodies = reports['tenant-bodies']!['bodies'] as TenantReport;
    for (const kind of BODY_KINDS) {
      const tally = bodies.tallies[kind]!;
      expect({ kind, sent: tally.sent, answered: sumOf(tally.statuses), errors: tally.errors, notRefusals: notRefusals(tally, kind) }).toEqual({
        kind,
        sent: 16,
        answered: 16,
        errors: {},
        notRefusals: [],
      });
    }
  });

  it('in the mix, refused or reset every hostile body: none accepted, none failed with 5xx, none left unanswered', () => {
    const bodies = reports['tenant-all']!['bodies'] as TenantReport;
    for (const kind of BODY_KINDS) {
      const tally = bodies.tallies[kind]!;
      const unanswered = Object.keys(tally.errors).filter((e) => e.startsWith('no answer within'));
      expect({ kind, sent: tally.sent, notRefusals: notRefusals(tally, kind), unanswered }).toEqual({ kind, sent: 16, notRefusals: [], unanswered: [] });
    }
  });

  it('closed each connection whose request it refused before reading the body', () => {
    const early = (reports['tenant-bodies']!['bodies'] as TenantReport).tallies['early-refused']!;
    expect({ sent: early.sent, closedAfterAnswer: early.closedAfterAnswer }).toEqual({ sent: 16, closedAfterAnswer: 16 });
  });

  it('the slow bodies were sent: the attacker opened its connections', () => {
    const slow = reports['tenant-all']!['slow'] as PlanReport;
    expect(slow.final).toBe(true);
    expect(slow.stats['slow-body']!.opened).toBeGreaterThanOrEqual(256);
  });
});
