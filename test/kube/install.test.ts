/**
 * deploy/ installed as the README prescribes onto a real one-node
 * cluster (test/kube/cluster.sh: kube-apiserver, controller-manager, scheduler,
 * kube-proxy, kubelet and containerd, all Kubernetes v1.37.2, kubectl too), with the image
 * built from the Dockerfile. The tests run in order on one install:
 *
 *   install   `kubectl apply -k` of a copy of deploy/ under load (guarded writes all the
 *             while): the webhook configuration appears once a pod serves, none fails;
 *             certificates of minutes (--cert-validity 2m, --ca-validity 4m), so the
 *             serving certificate and the CA are renewed while the tests below run
 *   1         both replicas Ready through the Deployment's own probes
 *   2         the pods run as deploy/ says (uid, capabilities, seccomp, read-only root)
 *   3         the API server calls the webhook through its Service
 *   4         what kubectl prints (docs/rules.md, "What kubectl shows")
 *   outage    the webhook scaled to zero: the ValidatingAdmissionPolicy deploy/ installs
 *             still refuses removing spec.nodeName from an IaaS pool, with its message
 *   5         the pool cache syncs in-cluster with deploy/base/rbac.yaml, and does not
 *             without one of its verbs
 *   6         the fault run: a pod deleted, then a rollout restart, under steady load:
 *             no admission call fails
 *   7         a real Prometheus with the alerts (shortened): the webhook scaled to zero
 *             makes the unreachable alert fire and resolve; a pool breaking a rule,
 *             created while the webhook configuration is absent, the violations alert
 *   8         a CA change (new CA added, then signing, the old one expiring) under load:
 *             no admission call fails, the caBundle follows
 *   uninstall as the README says: unregister, then kubectl delete -k
 *
 * What differs from an operator's install, and why: the image comes from the node's
 * containerd (imported; no registry), set by test/kube/overlay/ (its only change), and
 * the certificate lifetimes are minutes and readiness waits 10 s for the first pool list
 * (both added to the copy of the overlay here); the
 * cluster's own differences from a production one are in cluster.sh.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { until } from '../helpers/until.js';
import { runProcess } from '../e2e/cluster/processes.js';
import { CLI, ROOT } from '../e2e/cluster/webhook.js';
import { ApiClient, clusterDir, getJson, kubectl, metric, mustKubectl } from './kube.js';
import { runFaults, type FaultRunResult } from './faults.js';
import { startPrometheus, type TestPrometheus } from './monitoring.js';
import { dashboardQueries, loadDashboard } from '../deploy/monitoring.js';
import {
  DEPLOYMENT,
  NS,
  apply,
  copyOverlay,
  podRaw,
  pool,
  prepareSpiderpool,
  report,
  spiderpoolConf,
  webhookAnswers,
  webhookPods,
  waitAvailable,
} from './webhook-install.js';
import { TOOL_BUILD_MS, toolsBuilt } from './tools-built.js';

const SELECTOR = 'app.kubernetes.io/name=spiderpool-iaas-webhook,app.kubernetes.io/component=admission-webhook';
let overlay: string;

/**
 * What is wrong with one pod's pool cache, or undefined when it follows the cluster: it
 * has listed (`/readyz?verbose` says `[+]pool-cache ok`, the synced gauge is 1) and holds
 * `pools` SpiderIPPools (so it saw the last one created: the watch works). Its error
 * counter is shown, not judged: a pod started while the node's Service routing is still
 * being set up may count a first failed list that its retry then recovers from.
 */
async function poolCacheProblem(pod: string, pools: number): Promise<string | undefined> {
  const readyz = await podRaw(pod, 'readyz?verbose');
  const metrics = await podRaw(pod, 'metrics');
  const state = {
    readyz: readyz.split('\n').find((line) => line.includes('pool-cache')),
    synced: metric(metrics, 'spiderpool_iaas_webhook_pool_cache_synced'),
    pools: metric(metrics, 'spiderpool_iaas_webhook_pool_cache_pools'),
    errors: metric(metrics, 'spiderpool_iaas_webhook_pool_cache_errors_total') ?? 0,
  };
  const ok = state.readyz === '[+]pool-cache ok' && state.synced === 1 && state.pools === pools;
  return ok ? undefined : `${pod}: ${JSON.stringify(state)}, expected ${pools} pools`;
}

/** Resolves once every webhook pod's cache follows the cluster; throws with the last problems after `timeoutMs`. */
async function poolCachesFollow(timeoutMs: number): Promise<void> {
  let problems: string[] = [];
  await until(
    async () => {
      const pools = (await getJson('spiderippools')).items.length as number;
      const pods = await webhookPods();
      problems = (await Promise.all(pods.map((p) => poolCacheProblem(p.metadata.name, pools)))).filter((p): p is string => p !== undefined);
      return pods.length === 2 && problems.length === 0;
    },
    'the pool caches to follow the cluster',
    { timeoutMs, intervalMs: 1000, describe: () => problems.join('; ') },
  );
}

/** `kubectl rollout restart`, then waits until the new pods alone are left and Ready. */
async function restartAndWait(): Promise<void> {
  await mustKubectl(['-n', NS, 'rollout', 'restart', DEPLOYMENT]);
  await mustKubectl(['-n', NS, 'rollout', 'status', DEPLOYMENT, '--timeout=3m'], { timeoutMs: 200_000 });
  await onlyTwoReadyPods();
}

async function onlyTwoReadyPods(): Promise<void> {
  await until(
    async () => {
      const pods = (await getJson('pods', undefined, NS)).items as any[];
      return pods.length === 2 && pods.every((p) => p.status.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True'));
    },
    'exactly two Ready webhook pods',
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** Certificate lifetimes of the test install: renewals happen while the tests run. */
const SHORT_VALIDITY = ['--cert-validity=2m', '--ca-validity=4m'];
/**
 * Readiness waits 10 s for the first SpiderIPPool list rather than the default 60 s: the
 * RBAC variant of section 5 without "list" rolls pods that can never list, each one held
 * unready for the whole wait, one after the other (maxUnavailable 0). A cache that can
 * list here is synced about a second after its pod starts.
 */
const SYNC_WAIT = '--pool-cache-sync-wait=10s';
let installRun: FaultRunResult;

/** The TLS Secret's data, decoded. */
async function tlsSecret(): Promise<Record<string, string>> {
  const secret = await getJson('secret', 'spiderpool-iaas-webhook-tls', NS);
  return Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** Whether every webhook's caBundle is the TLS Secret's ca.crt now. */
async function caBundleIsSecrets(): Promise<boolean> {
  const [vwc, secret] = await Promise.all([
    getJson('validatingwebhookconfiguration', 'spiderpool-iaas-webhook'),
    getJson('secret', 'spiderpool-iaas-webhook-tls', NS),
  ]);
  return vwc.webhooks.every((w: any) => w.clientConfig.caBundle === secret.data['ca.crt']);
}

// Built in the background while the files before this one ran (tools-built.ts).
beforeAll(() => toolsBuilt('prometheus'), TOOL_BUILD_MS);

beforeAll(async () => {
  // On the cluster before the webhook, as on a cluster that runs Spiderpool.
  await prepareSpiderpool();
  // Copies of deploy/ and the overlay side by side, the lifetimes and the sync wait added to the overlay.
  overlay = await copyOverlay([...SHORT_VALIDITY, SYNC_WAIT]);

  // The README's one command, under load: before the configuration exists nothing is
  // guarded (a refusal due comes back allowed: "unguarded"), after it every call is judged.
  const client = new ApiClient();
  try {
    installRun = await runFaults(client, {
      ratePerSecond: 10,
      unguardedOk: true,
      faults: [
        {
          name: 'kubectl apply -k (one command)',
          run: async () => {
            await mustKubectl(['apply', '-k', overlay]);
            await waitAvailable();
            await webhookAnswers();
          },
        },
      ],
    });
  } finally {
    client.close();
  }
  report('install run', installRun);
  await writeFile(path.join(clusterDir(), 'install-run.json'), JSON.stringify(installRun, null, 2));
}, 400_000);

describe('install', () => {
  it('applied no webhook configuration and an empty Secret: a serving pod wrote the one and filled the other', async () => {
    const transcript = await readFile(path.join(clusterDir(), 'kubectl-transcript.txt'), 'utf8');
    const first = transcript.split('\n\n').find((entry) => entry.startsWith(`$ kubectl apply -k ${overlay}`))!;
    expect(first).toContain('deployment.apps/spiderpool-iaas-webhook created');
    expect(first).not.toContain('validatingwebhookconfiguration');
    expect(first).toContain('secret/spiderpool-iaas-webhook-tls created');
    // kubectl get leaves managedFields out unless asked.
    const vwc = JSON.parse(await mustKubectl(['get', 'validatingwebhookconfiguration', 'spiderpool-iaas-webhook', '-o', 'json', '--show-managed-fields']));
    expect(vwc.metadata.managedFields.map((f: any) => f.manager)).toContain('spiderpool-iaas-webhook');
    expect(vwc.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ClusterRole', name: 'spiderpool-iaas-webhook' })]);
  });

  it('had not one failed admission call while installing, and judged the writes once the configuration was there', () => {
    expect(installRun.failures).toEqual([]);
    expect(installRun.failed).toBe(0);
    expect(installRun.refused).toBeGreaterThan(0);
  });
});

describe('1. the Deployment', () => {
  it('has both replicas Ready through its own readiness probe, none restarted', async () => {
    const deployment = await getJson(DEPLOYMENT, undefined, NS);
    expect(deployment.status).toMatchObject({ replicas: 2, readyReplicas: 2, availableReplicas: 2 });
    const pods = await webhookPods();
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      const container = p.spec.containers[0];
      expect(container.image).toBe('localhost/spiderpool-iaas-webhook:ci');
      expect(container.readinessProbe.httpGet).toMatchObject({ scheme: 'HTTPS', path: '/readyz', port: 8443 });
      expect(p.status.containerStatuses[0]).toMatchObject({ ready: true, restartCount: 0 });
    }
  });
});

describe('2. the pods', () => {
  it('run as deploy/ says: uid/gid 1000, no capabilities, no new privileges, seccomp, read-only root', async () => {
    for (const p of await webhookPods()) {
      const out = await mustKubectl([
        'exec',
        '-n',
        NS,
        p.metadata.name,
        '--',
        'sh',
        '-c',
        'id -u; id -g; grep -E "^(CapPrm|CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/1/status; touch /app/x 2>&1; touch /tmp/x 2>&1; find /app -writable | wc -l',
      ]);
      expect(out.split('\n')).toEqual([
        '1000',
        '1000',
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapBnd:\t0000000000000000',
        'NoNewPrivs:\t1',
        'Seccomp:\t2',
        "touch: cannot touch '/app/x': Read-only file system",
        "touch: cannot touch '/tmp/x': Read-only file system",
        '0',
        '',
      ]);
    }
  });

  it('are admitted by the namespace\'s "restricted" Pod Security level', async () => {
    const namespace = await getJson('namespace', NS);
    expect(namespace.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });
});

describe('3. the API server calls the webhook through its Service', () => {
  it("the webhook configuration names the Service (no URL) with the TLS Secret's CA bundle", async () => {
    const vwc = await getJson('validatingwebhookconfiguration', 'spiderpool-iaas-webhook');
    for (const webhook of vwc.webhooks) {
      expect(webhook.clientConfig.url).toBeUndefined();
      expect(webhook.clientConfig.service).toMatchObject({ name: 'spiderpool-iaas-webhook', namespace: NS, port: 443 });
    }
    // A renewal may be between a Secret write and the pods' next round.
    await until(caBundleIsSecrets, "every caBundle equal to the Secret's ca.crt", { timeoutMs: 30_000, intervalMs: 1000 });
  });

  it("the Service's endpoints are the two pods, and a refused write shows in a pod's log", async () => {
    const slices = await getJson('endpointslices', undefined, NS);
    const addresses = slices.items.flatMap((s: any) => s.endpoints.filter((e: any) => e.conditions.ready).flatMap((e: any) => e.addresses)).sort();
    expect(addresses).toEqual((await webhookPods()).map((p) => p.status.podIP).sort());
    // A refusal of the webhook alone: the ValidatingAdmissionPolicy refuses the pool rules it
    // twins before any webhook is called, so their writes never reach the pods.
    const name = 'spiderpool-conf';
    const result = await apply(spiderpoolConf('http://iaas-provider.kube-system.svc:80', '2m'), ['--dry-run=server']);
    expect(result.code).toBe(1);
    const logs = await until(
      async () => {
        const text = await mustKubectl(['logs', '-n', NS, '-l', SELECTOR, '--tail=-1', '--prefix']);
        return text
          .split('\n')
          .find((line) => line.includes('"msg":"admission review"') && line.includes(`"name":"${name}"`) && line.includes('"allowed":false'));
      },
      'the review in a pod log',
      { timeoutMs: 10_000, intervalMs: 500 },
    );
    expect(logs).toContain('"allowed":false');
  });
});

describe('4. what kubectl prints (docs/rules.md, "What kubectl shows")', () => {
  let readme: string;
  beforeAll(async () => {
    readme = await readFile(path.join(ROOT, 'docs/rules.md'), 'utf8');
  });

  it('a refused pool update: the documented line, exit 1, nothing on stdout', async () => {
    const name = 'iaas-node-pool';
    expect((await apply(pool(name, ['worker-1']))).code).toBe(0);
    const result = await apply(pool(name));
    expect(result).toMatchObject({ code: 1, stdout: '' });
    // The policy's refusal: the API server runs it before the webhook (docs/rules.md, ³).
    expect(result.stderr).toMatch(
      /^The spiderippools "iaas-node-pool" is invalid: : ValidatingAdmissionPolicy 'spiderippool\.iaas-webhook\.spidernet\.io' with binding 'spiderippool\.iaas-webhook\.spidernet\.io' denied request: spec\.nodeName: Forbidden: /,
    );
    expect(readme).toContain(result.stderr.trim());
  });

  it('a refused spiderpool-conf: the documented line, exit 1', async () => {
    const result = await apply(spiderpoolConf('http://iaas-provider.kube-system.svc:80', '100s'));
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(
      /^The ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "100s": /,
    );
    expect(readme).toContain(result.stderr.trim());
  });

  it('a warning: the documented lines, exit 0', async () => {
    const result = await apply(spiderpoolConf('', 'abc'));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^Warning: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: "abc" is ignored while serverUrl and service\.name are empty/,
    );
    expect(readme).toContain(`${result.stderr}${result.stdout}`.trim());
    // Back to a valid configuration for what follows.
    expect((await apply(spiderpoolConf('http://iaas-provider.kube-system.svc:80', '50s'))).code).toBe(0);
  });
});

describe('outage: the webhook scaled to zero', () => {
  it('kubectl removing spec.nodeName from an IaaS pool is still refused, by the ValidatingAdmissionPolicy, with its message', async () => {
    const name = 'outage-node-pool';
    expect((await apply(pool(name, ['worker-1']))).code).toBe(0);
    await mustKubectl(['-n', NS, 'scale', DEPLOYMENT, '--replicas=0']);
    try {
      await until(async () => (await webhookPods()).length === 0 && (await getJson('pods', undefined, NS)).items.length === 0, 'no webhook pod left', {
        timeoutMs: 120_000,
        intervalMs: 500,
      });
      // The webhook is down: a write only it guards fails to reach it (failurePolicy Fail)…
      // A changed value: kubectl apply sends nothing for an unchanged object.
      const conf = await apply(spiderpoolConf('http://iaas-provider.kube-system.svc:80', '51s'), ['--dry-run=server']);
      expect(conf.code).toBe(1);
      expect(conf.stderr).toContain('failed calling webhook');
      // …while the pool rule holds, refused in-process with the policy's message.
      const result = await apply(pool(name));
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toBe(
        `The spiderippools "${name}" is invalid: : ValidatingAdmissionPolicy 'spiderippool.iaas-webhook.spidernet.io' with binding 'spiderippool.iaas-webhook.spidernet.io' denied request: ` +
          `spec.nodeName: Forbidden: changing spec.nodeName from ["worker-1"] to none would turn IaaS node pool "${name}" into a global pool, but an IaaS pool's mode is fixed for its life: ` +
          "a node pool's addresses are sub-ENIs pre-warmed on its node, a global pool allocates them on any node and keeps them there as a cache, and switching would strand those allocations; " +
          'to make it a global pool, delete it once no Pod uses it and create it again without spec.nodeName\n',
      );
      expect((await getJson('spiderippool', name)).spec.nodeName).toEqual(['worker-1']);
    } finally {
      await mustKubectl(['-n', NS, 'scale', DEPLOYMENT, '--replicas=2']);
      await waitAvailable();
      await onlyTwoReadyPods();
      await webhookAnswers();
    }
  });
});

describe('5. the pool cache, in-cluster with deploy/base/rbac.yaml', () => {
  it('lists and watches SpiderIPPools with the RBAC as installed', async () => {
    expect((await apply(pool('cache-follows-1', ['worker-1']))).code).toBe(0);
    await poolCachesFollow(60_000);
  });

  for (const verb of ['list', 'watch']) {
    it(`does not follow the cluster without "${verb}" (the check above can fail)`, async () => {
      const verbs = ['get', 'list', 'watch'].filter((v) => v !== verb);
      await mustKubectl([
        'patch',
        'clusterrole',
        'spiderpool-iaas-webhook',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'replace', path: '/rules/0/verbs', value: verbs }]),
      ]);
      try {
        await restartAndWait();
        const applied = await apply(pool(`cache-without-${verb}`, ['worker-1']));
        // Without "list" the cache never syncs, and --unsynced-pools=Refuse refuses IaaS pool writes.
        if (verb === 'list') expect(applied.stdout + applied.stderr).toContain("IaaS pool writes are refused until the webhook's pool cache is synced");
        else expect(applied.code).toBe(0);
        // Ten times what a cache that lists and watches takes to show a new pool (the test above).
        await expect(poolCachesFollow(10_000)).rejects.toThrow(/pool caches to follow the cluster/);
      } finally {
        // The README's install again restores deploy/base/rbac.yaml.
        await mustKubectl(['apply', '-k', overlay]);
        await restartAndWait();
      }
      await poolCachesFollow(60_000);
    });
  }
});

describe('6. faults under load: no admission call fails', () => {
  let result: FaultRunResult;

  beforeAll(async () => {
    const client = new ApiClient();
    try {
      result = await runFaults(client, {
        ratePerSecond: 10,
        faults: [
          {
            name: 'delete one webhook pod',
            run: async () => {
              const victim = (await webhookPods())[0].metadata.name as string;
              await mustKubectl(['-n', NS, 'delete', 'pod', victim, '--wait=true', '--timeout=2m'], { timeoutMs: 150_000 });
              await onlyTwoReadyPods();
            },
          },
          { name: 'kubectl rollout restart', run: restartAndWait },
        ],
      });
    } finally {
      client.close();
    }
    await writeFile(path.join(clusterDir(), 'fault-run.json'), JSON.stringify(result, null, 2));
    report('fault run', result);
  }, 600_000);

  it('made calls all through both faults, allowed and refused', () => {
    expect(result.faults.map((f) => f.name)).toEqual(['delete one webhook pod', 'kubectl rollout restart']);
    expect(result.allowed).toBeGreaterThan(50);
    expect(result.refused).toBeGreaterThan(50);
  });

  it('had not one failed admission call', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
  });
});

describe('7. the alerts fire in a real Prometheus (deploy/components/monitoring, shortened by 30)', () => {
  let prometheus: TestPrometheus;
  const firing = async (alertname: string) => (await prometheus.alerts(alertname)).filter((a) => a.state === 'firing');

  beforeAll(async () => {
    prometheus = await startPrometheus(NS);
    let targets: { job: string; health: string; lastError: string }[] = [];
    await until(
      async () => {
        targets = await prometheus.targets();
        return targets.length === 2 && targets.every((t) => t.health === 'up');
      },
      'Prometheus to scrape the API server and the webhook',
      { timeoutMs: 60_000, intervalMs: 1000, describe: () => JSON.stringify(targets) },
    );
  }, 3_000_000);

  afterAll(async () => {
    await prometheus?.stop();
  });

  it('evaluates every rule without an error, and neither alert is active on a healthy install', async () => {
    // The webhook's gauges and the API server's admission counters scraped, each rule evaluated since.
    await until(async () => (await prometheus.query('max(spiderpool_iaas_webhook_pool_cache_synced)'))[0] === 1, 'the synced pool caches to be scraped', {
      timeoutMs: 30_000,
      intervalMs: 1000,
    });
    await until(
      async () => (await prometheus.query('count(apiserver_admission_webhook_admission_duration_seconds_count)')).length === 1,
      'the API server to be scraped',
      { timeoutMs: 30_000, intervalMs: 1000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(await prometheus.ruleErrors()).toEqual([]);
    expect(await prometheus.alerts('SpiderpoolIaasWebhookUnreachable')).toEqual([]);
    expect(await prometheus.alerts('SpiderpoolIaasPoolsBreakRules')).toEqual([]);
  });

  it('a refused spiderpool-conf write shows under rule conf-yml in the "Refusals by rule" panel\'s query; every rule\'s series is there from the start', async () => {
    expect(await prometheus.query('spiderpool_iaas_webhook_refusals_total{webhook="/validate-spiderippool", rule="nodes-count"}')).toHaveLength(1);
    const panel = dashboardQueries(loadDashboard().dashboard).filter((q) => q.panel === 'Refusals by rule');
    expect(panel).toHaveLength(1);
    const expr = panel[0]!.expr.replaceAll('$job', '.+').replaceAll('$__rate_interval', '20s');
    const client = new ApiClient();
    const badConf = { data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: "http://probe:80"\n  httpRequestTimeout: "100s"\n' } };
    let last = '';
    let refusedByWebhook = false;
    try {
      const shown = await until(
        async () => {
          const answer = await client.send(
            'PATCH',
            '/api/v1/namespaces/kube-system/configmaps/spiderpool-conf?dryRun=All',
            badConf,
            'application/merge-patch+json',
          );
          last = `${answer.status} ${answer.body.slice(0, 200)}`;
          refusedByWebhook =
            answer.status === 422 && answer.body.includes('spiderpool-conf.iaas-webhook.spidernet.io') && answer.body.includes('httpRequestTimeout');
          const rules = (await prometheus.series(expr)).filter((s) => s.value > 0).map((s) => s.labels['rule']);
          return rules.includes('conf-yml') ? rules : undefined;
        },
        'the refusal to show in the panel query',
        { timeoutMs: 60_000, intervalMs: 1000, describe: () => `last write: ${last}` },
      );
      console.log(`refusals by rule: ${JSON.stringify(shown)}; last write: ${last}`);
      expect({ refusedByWebhook, last }).toEqual({ refusedByWebhook: true, last: expect.stringMatching(/^422 /) });
    } finally {
      client.close();
    }
  });

  it('webhook scaled to zero, guarded writes: SpiderpoolIaasWebhookUnreachable fires; restored: it resolves', async () => {
    const client = new ApiClient();
    const write = () => client.send('POST', '/apis/spiderpool.spidernet.io/v2beta1/spiderippools?dryRun=All', pool('alert-probe', ['worker-1']));
    let last = '';
    try {
      await mustKubectl(['-n', NS, 'scale', DEPLOYMENT, '--replicas=0']);
      await until(async () => (await webhookPods()).length === 0 && (await getJson('pods', undefined, NS)).items.length === 0, 'the webhook pods to be gone', {
        timeoutMs: 90_000,
        intervalMs: 1000,
      });
      const alerts = await until(
        async () => {
          const answer = await write();
          last = `${answer.status} ${answer.body.slice(0, 200)}`;
          const found = await firing('SpiderpoolIaasWebhookUnreachable');
          return found.length > 0 ? found : undefined;
        },
        'SpiderpoolIaasWebhookUnreachable to fire',
        { timeoutMs: 90_000, intervalMs: 1000, describe: () => `last write: ${last}` },
      );
      console.log(`fired: SpiderpoolIaasWebhookUnreachable ${JSON.stringify(alerts.map((a) => a.labels))}; last write: ${last}`);
      expect(last).toContain('failed calling webhook');
      expect(alerts.map((a) => a.labels['name'])).toEqual(['spiderippool.iaas-webhook.spidernet.io']);
      expect(alerts[0]!.labels['severity']).toBe('critical');
    } finally {
      client.close();
      await mustKubectl(['-n', NS, 'scale', DEPLOYMENT, '--replicas=2']);
      await onlyTwoReadyPods();
      await webhookAnswers();
    }
    await until(async () => (await prometheus.alerts('SpiderpoolIaasWebhookUnreachable')).length === 0, 'SpiderpoolIaasWebhookUnreachable to resolve', {
      timeoutMs: 90_000,
      intervalMs: 1000,
    });
  });

  it('a pool created while the webhook configuration (and the policy twin) is absent: SpiderpoolIaasPoolsBreakRules fires with its rule', async () => {
    // As a pool that predates the install: neither the webhook nor the ValidatingAdmissionPolicy
    // twin of its stateless rules (deploy/components/validating-admission-policy) is there.
    const deleteGuards = () =>
      Promise.all([
        kubectl(['delete', 'validatingwebhookconfiguration', 'spiderpool-iaas-webhook', '--ignore-not-found']),
        kubectl(['delete', 'validatingadmissionpolicybinding', '-l', 'app.kubernetes.io/name=spiderpool-iaas-webhook', '--ignore-not-found']),
      ]);
    await deleteGuards();
    try {
      // Two nodes: an IaaS node pool names exactly one. The API server drops a deleted
      // webhook or binding from its admission chain a moment later, so ask until it has;
      // a pod whose first registration was still being retried may write it once more.
      let last = '';
      let recreated = 0;
      await until(
        async () => {
          const r = await apply(pool('alert-two-nodes', ['worker-1', 'worker-2']));
          last = r.stderr.trim();
          if (r.code === 0) return true;
          recreated += (await deleteGuards()).filter((d) => d.stdout.includes('deleted')).length;
          return false;
        },
        'the deleted guards to leave the admission chain',
        { timeoutMs: 60_000, intervalMs: 500, describe: () => `${last} (guards written again ${recreated} times)` },
      );
      console.log(`guards written again after their deletion: ${recreated}`);
    } finally {
      // The install again brings the policy's binding back; the pods write the configuration
      // again when they start (a running pod never rewrites one deleted after it wrote it:
      // that is how an uninstall removes it).
      await mustKubectl(['apply', '-k', overlay]);
      await restartAndWait();
      await webhookAnswers();
    }
    try {
      const alerts = await until(
        async () => {
          const found = await firing('SpiderpoolIaasPoolsBreakRules');
          return found.length > 0 ? found : undefined;
        },
        'SpiderpoolIaasPoolsBreakRules to fire',
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      console.log(`fired: SpiderpoolIaasPoolsBreakRules ${JSON.stringify(alerts.map((a) => a.labels))}`);
      expect(alerts.map((a) => a.labels['rule'])).toContain('nodes-count');
      expect(alerts[0]!.labels['severity']).toBe('warning');
    } finally {
      await mustKubectl(['delete', 'spiderippool', 'alert-two-nodes']);
    }
    await until(async () => (await prometheus.alerts('SpiderpoolIaasPoolsBreakRules')).length === 0, 'SpiderpoolIaasPoolsBreakRules to resolve', {
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
  });
});

describe('8. a CA change under load: no admission call fails', () => {
  let result: FaultRunResult;
  let before: Record<string, string>;
  let after: Record<string, string>;

  beforeAll(async () => {
    before = await tlsSecret();
    const client = new ApiClient();
    try {
      result = await runFaults(client, {
        ratePerSecond: 10,
        faults: [
          {
            // --ca-validity 4m: a new CA joins with 80 s left, signs with 40 s left, the old one leaves at its end.
            name: 'the CA changes (new CA added, then signing, the old one expired)',
            run: async () => {
              const signingBefore = before['ca.key'];
              await until(async () => (await tlsSecret())['ca.key'] !== signingBefore, 'a new signing CA', { timeoutMs: 230_000, intervalMs: 2000 });
              await until(async () => ((await tlsSecret())['ca.crt']!.match(/BEGIN CERTIFICATE/g) ?? []).length === 1, 'the old CA to leave the bundle', {
                timeoutMs: 120_000,
                intervalMs: 2000,
              });
              await until(caBundleIsSecrets, "every caBundle equal to the Secret's ca.crt", { timeoutMs: 30_000, intervalMs: 1000 });
            },
          },
        ],
      });
    } finally {
      client.close();
    }
    after = await tlsSecret();
    await writeFile(path.join(clusterDir(), 'renewal-run.json'), JSON.stringify(result, null, 2));
    report('renewal run', result);
  }, 600_000);

  it('replaced the CA and the serving certificate', () => {
    expect(after['ca.crt']).not.toBe(before['ca.crt']);
    expect(after['tls.crt']).not.toBe(before['tls.crt']);
    expect(after['ca-next.key']).toBeUndefined();
  });

  it('had not one failed admission call', () => {
    expect(result.failures).toEqual([]);
    expect(result.failed).toBe(0);
    expect(result.refused).toBeGreaterThan(50);
  });

  it("reloaded the pods' certificates without a restart", async () => {
    for (const p of await webhookPods()) {
      expect(metric(await podRaw(p.metadata.name, 'metrics'), 'spiderpool_iaas_webhook_certificate_reloads_total')).toBeGreaterThan(0);
    }
  });
});

describe('uninstall, as the README says', () => {
  it('unregister first, then kubectl delete -k: nothing left, every write accepted', async () => {
    const unregister = await runProcess(process.execPath, [
      CLI,
      'unregister',
      `--kubeconfig=${path.join(clusterDir(), 'kubeconfig')}`,
      '--name=spiderpool-iaas-webhook',
    ]);
    expect(unregister).toMatchObject({ code: 0, stdout: 'validatingwebhookconfiguration.admissionregistration.k8s.io "spiderpool-iaas-webhook" deleted\n' });
    await mustKubectl(['delete', '-k', overlay, '--ignore-not-found', '--timeout=2m'], { timeoutMs: 150_000 });
    expect((await kubectl(['get', 'namespace', NS])).stderr).toContain('NotFound');
    expect((await kubectl(['get', 'validatingwebhookconfiguration', 'spiderpool-iaas-webhook'])).stderr).toContain('NotFound');
    expect(await mustKubectl(['get', 'validatingadmissionpolicy,validatingadmissionpolicybinding', '-o', 'name'])).toBe('');
    // Guarded writes no longer depend on the webhook, nor pool writes on the policy.
    expect((await apply(pool('outage-node-pool'), ['--dry-run=server'])).code).toBe(0);
    expect((await apply(spiderpoolConf('http://iaas-provider.kube-system.svc:80', '100s'), ['--dry-run=server'])).code).toBe(0);
  });
});
