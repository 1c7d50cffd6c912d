/**
 * A neighbour pod cannot take the webhook away from the API server, on the one-node
 * cluster (test/kube/cluster.sh) with deploy/ installed through the test overlay. In
 * order, on one install:
 *
 *   1  a pod in another namespace holds thousands of idle connections and slow TLS
 *      handshakes to the webhook Service while the fault load sends guarded writes
 *      through the API server: no admission call fails; the attacker's connections held,
 *      the evictions and the worst latency are printed
 *   2  deploy/components/network-policy-api-server in its CIDR form, the CIDR being the
 *      API server's source address as seen in the webhook pods: the object admits that
 *      address and not the attacker (as the NetworkPolicy API defines it)
 *   3  the same policy enforced (policy/enforcer.ts: kube-router's network policy
 *      controller; the bridge plugin enforces none): the attacker cannot open one
 *      connection, while guarded writes under the fault load all pass; the base policy
 *      back, the attacker connects again
 *   uninstall (unregister, kubectl delete -k), so the next file starts without it
 */
import { cp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { AttackPlan, AttackStats, PlanReport } from '../helpers/attackers.js';
import { until } from '../helpers/until.js';
import { runProcess } from '../e2e/cluster/processes.js';
import { CLI } from '../e2e/cluster/webhook.js';
import { runFaults, type FaultRunResult } from './faults.js';
import { ApiClient, clusterDir, getJson, metric, mustKubectl } from './kube.js';
import { NEIGHBOUR_NS, attackerReport, peersOfWebhookPod, policyAdmits, removeAttacker, startAttacker, stopAttacker } from './neighbour.js';
import { nodeFilterRules, startEnforcer, type Enforcer } from './policy/enforcer.js';
import { NS, copyOverlay, podRaw, prepareSpiderpool, report, webhookAnswers, webhookPods, waitAvailable } from './webhook-install.js';
import { TOOL_BUILD_MS, toolsBuilt } from './tools-built.js';

let overlay: string;

// Built in the background while the files before this one ran (tools-built.ts).
beforeAll(() => toolsBuilt('kube-router'), TOOL_BUILD_MS);

beforeAll(async () => {
  await prepareSpiderpool();
  overlay = await copyOverlay();
  await mustKubectl(['apply', '-k', overlay]);
  await waitAvailable();
  await webhookAnswers();
}, 300_000);

afterAll(async () => {
  // As the README says: the configuration the pods wrote first, then the install.
  const unregister = await runProcess(process.execPath, [
    CLI,
    'unregister',
    `--kubeconfig=${path.join(clusterDir(), 'kubeconfig')}`,
    '--name=spiderpool-iaas-webhook',
  ]);
  if (unregister.code !== 0) throw new Error(`unregister failed: ${unregister.stderr}`);
  await mustKubectl(['delete', '-k', overlay, '--timeout=2m', '--ignore-not-found'], { timeoutMs: 150_000 });
}, 180_000);

/** The connection metrics of both webhook pods, summed, by series. */
async function connectionMetrics(): Promise<Record<string, number>> {
  const names = [
    ...['handshaking', 'idle', 'active'].map((state) => `spiderpool_iaas_webhook_connections{state="${state}"}`),
    ...['handshake_timeout', 'address_share', 'evicted_handshaking', 'evicted_idle'].map(
      (reason) => `spiderpool_iaas_webhook_connection_evictions_total{reason="${reason}"}`,
    ),
    'spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}',
  ];
  const pages = await Promise.all((await webhookPods()).map((p) => podRaw(p.metadata.name, 'metrics')));
  return Object.fromEntries(names.map((name) => [name, pages.reduce((sum, page) => sum + (metric(page, name) ?? 0), 0)]));
}

/** Thousands of idle connections and slow handshakes to the webhook Service, reopened a second after each close. */
async function attackPlan(): Promise<AttackPlan> {
  const service = await getJson('service', 'spiderpool-iaas-webhook', NS);
  return {
    host: service.spec.clusterIP,
    port: 443,
    sources: [],
    servername: `spiderpool-iaas-webhook.${NS}.svc`,
    durationMs: 400_000, // stopped before; a bound if the test dies
    reportEveryMs: 2_000,
    attacks: [
      { kind: 'idle', perSource: 2_000, reopenMs: 1_000 },
      { kind: 'trickle', perSource: 1_000, reopenMs: 1_000 },
      { kind: 'tls-idle', perSource: 200, reopenMs: 1_000 },
    ],
  };
}

function expectNoFailedCall(result: FaultRunResult): void {
  expect(result.failures).toEqual([]);
  expect(result.failed).toBe(0);
  expect(result.allowed).toBeGreaterThan(20);
  expect(result.refused).toBeGreaterThan(20);
}

const total = (report: PlanReport, field: keyof AttackStats) => Object.values(report.stats).reduce((n, s) => n + s![field], 0);

let attackerIp: string;

describe('1. a neighbour pod holds thousands of connections to the webhook: no admission call fails', () => {
  let result: FaultRunResult;
  let report_: PlanReport;
  let before: Record<string, number>;
  let after: Record<string, number>;
  let maxHeldOnServer = 0;

  beforeAll(async () => {
    const plan = await attackPlan();
    before = await connectionMetrics();
    const client = new ApiClient();
    try {
      result = await runFaults(client, {
        ratePerSecond: 10,
        faults: [
          {
            name: 'a neighbour pod holding thousands of idle connections and slow handshakes',
            run: async () => {
              attackerIp = await startAttacker(plan);
              await until(async () => ((await attackerReport())?.stats.idle?.opened ?? 0) >= 2_000, 'the attacker to have opened its connections', {
                timeoutMs: 120_000,
                intervalMs: 2_000,
              });
              // Under attack for 30 s, sampling what the webhook pods hold.
              for (let i = 0; i < 15; i++) {
                const m = await connectionMetrics();
                maxHeldOnServer = Math.max(
                  maxHeldOnServer,
                  ['handshaking', 'idle', 'active'].reduce((n, state) => n + m[`spiderpool_iaas_webhook_connections{state="${state}"}`]!, 0),
                );
                await new Promise((resolve) => setTimeout(resolve, 2_000));
              }
            },
          },
        ],
      });
    } finally {
      client.close();
    }
    report_ = await stopAttacker();
    after = await connectionMetrics();
    const delta = Object.fromEntries(
      Object.entries(after)
        .filter(([k]) => k.includes('_total'))
        .map(([k, v]) => [k.replace('spiderpool_iaas_webhook_', ''), v - before[k]!]),
    );
    const summary = {
      admission: { calls: result.calls, allowed: result.allowed, refused: result.refused, failed: result.failed, latencyMs: result.latencyMs },
      attacker: report_.stats,
      heldByBothPodsAtMost: maxHeldOnServer,
      counted: delta,
    };
    await writeFile(path.join(clusterDir(), 'neighbour-attack.json'), JSON.stringify(summary, null, 2));
    report('neighbour attack', result);
    console.log(
      `neighbour attack: attacker opened ${total(report_, 'opened')} connections (at most ${total(report_, 'maxHeld')} held at once as it saw them, ${total(report_, 'closedByServer')} closed by the webhook); ` +
        `both webhook pods held at most ${maxHeldOnServer}; evictions and refusals ${JSON.stringify(delta)}; admission calls ${result.calls}, ${result.failed} failed, worst ${result.latencyMs.max} ms`,
    );
  }, 600_000);

  it('had not one failed admission call, allowed and refused ones all through', () => expectNoFailedCall(result));

  it('the attacker opened thousands of connections; the pods held at most their caps of them', () => {
    expect(total(report_, 'opened')).toBeGreaterThan(2_000);
    // Its handshakes are held to its share (32 per pod); its established idle connections
    // only to each pod's cap (128), where they are the first to give way.
    expect(maxHeldOnServer).toBeLessThanOrEqual(2 * 128);
  });

  it("evicted the attacker's connections, and refused no newcomer for a full cap", () => {
    const evicted = (reason: string) =>
      after[`spiderpool_iaas_webhook_connection_evictions_total{reason="${reason}"}`]! -
      before[`spiderpool_iaas_webhook_connection_evictions_total{reason="${reason}"}`]!;
    expect(evicted('address_share') + evicted('evicted_handshaking') + evicted('evicted_idle') + evicted('handshake_timeout')).toBeGreaterThan(0);
    expect(after['spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}']).toBe(
      before['spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}'],
    );
  });
});

let policy: any;
let apiServerPeers: string[];

describe('2. the NetworkPolicy restricted to the API server (deploy/components/network-policy-api-server)', () => {
  beforeAll(async () => {
    // Guarded writes every 200 ms keep the API server's connections to the pods open (an
    // idle one closes after 5 s): their peers in the pods are its source address.
    const client = new ApiClient();
    const calling = setInterval(() => {
      void client
        .send(
          'PATCH',
          '/api/v1/namespaces/kube-system/configmaps/spiderpool-conf?dryRun=All',
          { data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: "http://probe:80"\n  httpRequestTimeout: "100s"\n' } },
          'application/merge-patch+json',
        )
        .catch(() => undefined);
    }, 200);
    try {
      const pods = await webhookPods();
      apiServerPeers = await until(
        async () => {
          const peers = [...new Set((await Promise.all(pods.map((p) => peersOfWebhookPod(NS, p.metadata.name)))).flat())].sort();
          return peers.length > 0 ? peers : undefined;
        },
        "the API server's connections in the webhook pods",
        { timeoutMs: 30_000, intervalMs: 500 },
      );
    } finally {
      clearInterval(calling);
      client.close();
    }
    const dir = path.join(path.dirname(overlay), 'overlay-network-policy');
    await cp(overlay, dir, { recursive: true });
    await writeFile(
      path.join(dir, 'kustomization.yaml'),
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['../overlay'],
        components: ['../deploy/components/network-policy-api-server'],
        patches: [
          {
            target: { kind: 'NetworkPolicy', name: 'spiderpool-iaas-webhook' },
            patch: JSON.stringify([{ op: 'replace', path: '/spec/ingress/0/from', value: apiServerPeers.map((ip) => ({ ipBlock: { cidr: `${ip}/32` } })) }]),
          },
        ],
      }),
    );
    const rendered = await mustKubectl(['kustomize', dir]);
    policy = rendered
      .split(/^---$/m)
      .map((doc) => (doc.trim() === '' ? undefined : parse(doc)))
      .find((o) => o?.kind === 'NetworkPolicy');
    await mustKubectl(['apply', '-f', '-'], { stdin: stringify(policy) });
    console.log(
      `network policy: API server source addresses seen in the pods ${JSON.stringify(apiServerPeers)}, attacker pod ${attackerIp}; ingress ${JSON.stringify(policy.spec.ingress)}`,
    );
  }, 120_000);

  afterAll(async () => {
    await removeAttacker();
  }, 180_000);

  it('is accepted by the API server and selects exactly the webhook pods', async () => {
    const stored = await getJson('networkpolicy', 'spiderpool-iaas-webhook', NS);
    expect(stored.spec).toEqual(policy.spec);
    const selected = (await getJson('pods', undefined, NS)).items.filter((p: any) =>
      Object.entries(stored.spec.podSelector.matchLabels).every(([k, v]) => p.metadata.labels?.[k] === v),
    );
    expect(selected.map((p: any) => p.metadata.name).sort()).toEqual((await webhookPods()).map((p) => p.metadata.name).sort());
  });

  it("admits the API server's source address, and not the attacker pod (as the NetworkPolicy API defines it)", async () => {
    expect(apiServerPeers.length).toBeGreaterThan(0);
    expect(apiServerPeers).not.toContain(attackerIp);
    for (const ip of apiServerPeers) expect(policyAdmits(policy, { ip }, 8443)).toBe(true);
    const ns = await getJson('namespace', NEIGHBOUR_NS);
    expect(policyAdmits(policy, { ip: attackerIp, namespaceLabels: ns.metadata.labels, podLabels: { app: 'attacker' } }, 8443)).toBe(false);
    // The selector rule admits Prometheus' namespace: the evaluation is not a blanket "no".
    expect(policyAdmits(policy, { ip: attackerIp, namespaceLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, 8443)).toBe(true);
  });

  it('guarded writes are still called through it', async () => {
    await webhookAnswers();
  });
});

describe('3. the same policy enforced (kube-router): the attacker cannot connect at all, guarded writes all pass', () => {
  let enforcer: Enforcer;
  let result: FaultRunResult;
  let enforced: PlanReport;
  let peersDuring: string[] = [];
  let afterwards: PlanReport;
  let stopFailure: Error | undefined;

  beforeAll(async () => {
    enforcer = await startEnforcer();
    try {
      // Its firewall chains for the webhook pods, which the policy applied in 2 selects.
      await until(async () => ((await nodeFilterRules()).match(/^:KUBE-POD-FW-/gm) ?? []).length >= 2, "kube-router's chains for the webhook pods", {
        timeoutMs: 60_000,
        intervalMs: 1000,
      });
      const plan = await attackPlan();
      const client = new ApiClient();
      try {
        result = await runFaults(client, {
          ratePerSecond: 10,
          faults: [
            {
              name: 'the neighbour pod attacking through the enforced policy',
              run: async () => {
                attackerIp = await startAttacker(plan);
                // 30 s of attempts; what the pods hold meanwhile.
                for (let i = 0; i < 10; i++) {
                  await new Promise((resolve) => setTimeout(resolve, 3_000));
                  const pods = await webhookPods();
                  peersDuring = [...new Set([...peersDuring, ...(await Promise.all(pods.map((p) => peersOfWebhookPod(NS, p.metadata.name)))).flat()])];
                }
              },
            },
          ],
        });
      } finally {
        client.close();
      }
      enforced = await stopAttacker();
      report('enforced policy', result);
      console.log(
        `enforced policy: attacker tried ${total(enforced, 'attempted')} connections, opened ${total(enforced, 'opened')}, ${total(enforced, 'failed')} failed; peers seen in the webhook pods ${JSON.stringify(peersDuring)}; ` +
          `admission calls ${result.calls}, ${result.failed} failed, worst ${result.latencyMs.max} ms`,
      );
      await writeFile(
        path.join(clusterDir(), 'neighbour-enforced.json'),
        JSON.stringify({ admission: result, attacker: enforced.stats, peersDuring }, null, 2),
      );

      // The base policy back (from anywhere): the same attacker connects again.
      await removeAttacker();
      await mustKubectl(['apply', '-k', overlay]);
      expect((await getJson('networkpolicy', 'spiderpool-iaas-webhook', NS)).spec.ingress[0].from).toBeUndefined();
      await startAttacker(plan);
      await until(async () => ((await attackerReport())?.stats.idle?.opened ?? 0) > 0, 'the attacker to connect under the base policy', {
        timeoutMs: 60_000,
        intervalMs: 1_000,
      });
      afterwards = await stopAttacker();
      console.log(`base policy back: attacker opened ${total(afterwards, 'opened')} connections`);
    } finally {
      await removeAttacker().catch(() => undefined);
      // Its rules go whatever failed above; that failure, if any, is the one reported.
      await enforcer.stop().catch((err: Error) => (stopFailure = err));
    }
    if (stopFailure !== undefined) throw stopFailure;
  }, 600_000);

  it('had not one failed admission call, allowed and refused ones all through', () => expectNoFailedCall(result));

  it('the attacker tried thousands of connections and established none; the pods held none of it', () => {
    expect(total(enforced, 'attempted')).toBeGreaterThan(2_000);
    expect(total(enforced, 'opened')).toBe(0);
    expect(peersDuring).not.toContain(attackerIp);
  });

  it('with the base policy back, the same attacker connects again (the policy, not the network, stopped it)', () => {
    expect(total(afterwards, 'opened')).toBeGreaterThan(0);
  });
});
