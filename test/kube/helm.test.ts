/**
 * The Helm chart (deploy/helm/spiderpool-iaas-webhook) on the one-node cluster, with the
 * image built from the Dockerfile and helm built from its Go module. In order, on one
 * cluster, the guarded writes of the fault loop (faults.ts) coming all through 1-5:
 *
 *   1  helm install with enforcement.default=Audit over pools stored before it that break
 *      rules, OpenReports' CRDs installed: the loop's rule-breaking writes let through
 *      without a warning, none refused or failed, the pods count them as audit decisions;
 *      the webhook configuration appears once a pod is Ready; the ClusterReports list the
 *      stored pools' violations as `warn`
 *   2  helm upgrade to Warn that rolls the pods: each rule-breaking write let through, with
 *      its rule's warning once no Audit pod is left; 0 failed admission calls
 *   3  helm upgrade to Deny: refused by the rule once no Warn pod is left (the
 *      ValidatingAdmissionPolicy comes with it); 0 failed; the reports say `fail`
 *   4  the pod holding the reports Lease deleted: another replica takes the Lease; a stored
 *      pool fixed, and the report follows within three report rounds; 0 failed
 *   4b helm upgrade with reports.enabled=false: the reports' owner ClusterRole goes, and the
 *      garbage collector deletes the ClusterReports within a minute
 *   4c helm upgrade with the reports on again: they are written again (step 5 checks that
 *      the uninstall removes them)
 *   5  helm uninstall: the pre-delete hook removes the webhook configuration before the
 *      pods go; nothing the release made is left, no ClusterReport either, every write is
 *      accepted afterwards (then the stored pools and OpenReports' CRDs are removed)
 *   6  helm install with tls.method provided: the pods register the operator's CA; then
 *      uninstalled, nothing left
 *   7  helm install with spiderpool.namespace=spiderpool, spiderpool.configName=my-conf:
 *      a bad my-conf in spiderpool is refused, the same in kube-system is not looked at;
 *      then uninstalled, nothing left
 *
 * Calls, outcomes, failures and the worst latency of each loaded step are printed as the
 * fault run of install.test.ts prints them, and written to helm-runs.json in the cluster
 * directory (helm.ts); the takeover and the report's lag are printed. tls.method
 * certmanager, with a real cert-manager: certmanager.test.ts.
 */
import { stringify } from 'yaml';
import type { EnforcementAction } from '../../src/admission/enforcement.js';
import { generateCertificates } from '../../src/certs/generate.js';
import { REPORT_INTERVAL_MS } from '../../src/cluster/pool-reports.js';
import { LEASE_TIMING } from '../../src/kubernetes/lease.js';
import { RELEASE } from '../e2e/helm.js';
import { until } from '../helpers/until.js';
import {
  applyDryRun,
  conf,
  describeUninstallUnderLoad,
  expectNothingLeft,
  guarded,
  helmChart,
  livePods,
  mustHelm,
  NS,
  podsGone,
  prepareCluster,
  underLoad,
  WEBHOOK_CONFIGURATION,
} from './helm.js';
import { getJson, mustKubectl } from './kube.js';
import {
  decisions,
  decisionsWith,
  fixedPool,
  gracePeriodSeconds,
  policyBindings,
  removeBrokenPools,
  reported,
  reportsLeader,
  STORED_BEFORE,
  storeBrokenPools,
  resultLine,
  storedBeforeResults,
} from './rollout.js';
import { TOOL_BUILD_MS, toolsBuilt } from './tools-built.js';

// Built in the background while the files before this one ran (tools-built.ts).
beforeAll(() => toolsBuilt('helm'), TOOL_BUILD_MS);

/**
 * How soon the reports follow a change of the pools or of the actions: the change reaches
 * the leader's watch, its next round comes within REPORT_INTERVAL_MS
 * (src/cluster/pool-reports.ts) and writes the changed report; asserted with room for a
 * loaded machine: three rounds.
 */
const REPORT_BOUND_MS = 3 * REPORT_INTERVAL_MS;

/** The results the reports must hold for `pools` (stored before), each with `result`, as sorted lines. */
const storedBefore = (result: 'fail' | 'warn', pools = STORED_BEFORE): string[] => pools.map((p) => resultLine({ ...p, result })).sort();

/** Waits until the reports hold `expected` for the stored pools (and nothing else for them); returns the milliseconds it took. */
async function reportsSay(expected: readonly string[], what: string): Promise<number> {
  const start = performance.now();
  let last: string[] = [];
  await until(async () => (last = storedBeforeResults((await reported()).results)).join('\n') === expected.join('\n'), what, {
    timeoutMs: REPORT_BOUND_MS,
    intervalMs: 500,
    describe: () => last.join(', '),
  });
  return Math.round(performance.now() - start);
}

/**
 * A loaded `helm upgrade` from the enforcement action `from` to `to` (`values` besides):
 * while pods of both may answer, a rule-breaking write may get either's answer; once no pod
 * from before the upgrade exists, only `to`'s. Returns the run's result and the replaced pods.
 */
function upgradeTo(from: EnforcementAction, to: EnforcementAction, values: Record<string, string> = {}) {
  let due: readonly EnforcementAction[] = [from, to];
  let replaced: string[] = [];
  const result = underLoad(
    `helm upgrade to ${to}`,
    {
      name: `helm upgrade --wait (enforcement.default=${to}), the old pods gone`,
      run: async () => {
        replaced = await livePods();
        await helmChart('upgrade', { 'enforcement.default': to, ...values });
        await podsGone(replaced);
        due = [to];
      },
    },
    { actions: () => due },
  );
  return { result, replaced: () => replaced };
}

beforeAll(async () => {
  await prepareCluster();
  await storeBrokenPools();
}, 30 * 60_000);

describe('1. helm install with enforcement.default=Audit over pools that already break rules, under load', () => {
  // Before the configuration exists, nothing is judged: a write let through is unguarded.
  let due: readonly EnforcementAction[] = [];
  const result = underLoad(
    'helm install (Audit)',
    {
      name: 'helm install --wait (enforcement.default=Audit), the pods judging',
      run: async () => {
        await helmChart('install', { 'enforcement.default': 'Audit' });
        await until(
          async () => {
            const counted = await decisions();
            return (counted.get('mode-fixed audit') ?? 0) > 0 && (counted.get('conf-yml audit') ?? 0) > 0;
          },
          'both webhooks to audit the rule-breaking writes',
          { timeoutMs: 180_000, intervalMs: 1000 },
        );
        due = ['Audit'];
      },
    },
    { unguardedOk: true, actions: () => due },
  );

  it('refused nothing: every rule-breaking write was let through without a warning', () => {
    expect(result().refused).toBe(0);
    expect(result().warned).toBe(0);
    expect(result().audited).toBeGreaterThan(20);
    expect(result().allowed).toBeGreaterThan(20);
  });

  it('the pods recorded those writes as audit decisions, none denied or warned; no admission policy is bound', async () => {
    const counted = await decisions();
    expect(decisionsWith(counted, 'audit')).toBeGreaterThan(20);
    expect([decisionsWith(counted, 'deny'), decisionsWith(counted, 'warn')]).toEqual([0, 0]);
    expect(await policyBindings()).toEqual([]);
  });

  it('the configuration is written by the pods (not a Helm object), with the AKS annotation', async () => {
    const vwc = await getJson('validatingwebhookconfiguration', WEBHOOK_CONFIGURATION);
    expect(vwc.metadata.annotations?.['meta.helm.sh/release-name']).toBeUndefined();
    expect(vwc.metadata.annotations?.['admissions.enforcer/disabled']).toBe('true');
    for (const webhook of vwc.webhooks) expect(webhook.clientConfig.caBundle).toEqual(expect.any(String));
  });

  it('the ClusterReports list the violations of the pools stored before, as warn (Audit)', async () => {
    console.log(
      `reports: the stored pools listed ${await reportsSay(storedBefore('warn'), 'the reports to list the stored pools')} ms after the install's checks`,
    );
  });
});

describe('2. helm upgrade to Warn that rolls the pods, under load', () => {
  const { result, replaced } = upgradeTo('Audit', 'Warn', {
    'resources.requests.cpu': '60m',
    'resources.requests.memory': '192Mi',
    'resources.limits.memory': '512Mi',
  });

  it('replaced every pod', async () => {
    expect(replaced().length).toBeGreaterThan(0);
    expect((await livePods()).filter((p) => replaced().includes(p))).toEqual([]);
  });

  it('refused nothing: each rule-breaking write let through, with its warning once only Warn pods answered', async () => {
    expect(result().refused).toBe(0);
    expect(result().warned).toBeGreaterThan(20);
    expect(await policyBindings()).toEqual([]);
  });
});

describe('3. helm upgrade to Deny, under load', () => {
  const { result } = upgradeTo('Warn', 'Deny');

  it('refused the rule-breaking writes by their rules once only Deny pods answered; the admission policy is bound', async () => {
    expect(result().refused).toBeGreaterThan(20);
    expect((await policyBindings()).length).toBeGreaterThan(0);
  });

  it('the reports say fail for the stored pools (Deny)', async () => {
    console.log(`reports: fail for the stored pools ${await reportsSay(storedBefore('fail'), 'the reports to follow Deny')} ms after the upgrade's checks`);
  });
});

describe("4. the reports leader's pod deleted, then a stored pool fixed, under load", () => {
  let leader: string | undefined;
  let next: string | undefined;
  let fixedLagMs = 0;
  let countBefore = 0;
  let countAfter = 0;
  underLoad(
    'reports leader deleted, a stored pool fixed',
    {
      name: "the leader's pod deleted, another replica leading; a pool fixed, the report following",
      run: async () => {
        leader = await until(reportsLeader, 'a replica to hold the reports Lease', { timeoutMs: 60_000, intervalMs: 1000 });
        // A deleted leader hands the Lease back once stopped; a stuck one holds it until the kubelet kills it and it expires.
        const takeoverBoundMs = 2 * ((await gracePeriodSeconds()) * 1000 + LEASE_TIMING.leaseDurationSeconds * 1000 + LEASE_TIMING.retryPeriodMs);
        const deletedAt = performance.now();
        await mustKubectl(['-n', NS, 'delete', 'pod', leader, '--wait=false']);
        next = await until(
          async () => {
            const holder = await reportsLeader();
            return holder !== undefined && holder !== leader && holder;
          },
          'another replica to take the Lease',
          { timeoutMs: takeoverBoundMs, intervalMs: 500 },
        );
        console.log(
          `reports: ${next} took the Lease ${Math.round(performance.now() - deletedAt)} ms after ${leader} was deleted (bound ${takeoverBoundMs} ms)`,
        );
        countBefore = (await reported()).summaries.get('parent-nic-one')?.fail ?? 0;
        await mustKubectl(['apply', '-f', '-'], { stdin: stringify(fixedPool()) });
        fixedLagMs = await reportsSay(storedBefore('fail', STORED_BEFORE.slice(1)), 'the report to follow the fix');
        countAfter = (await reported()).summaries.get('parent-nic-one')?.fail ?? 0;
        console.log(`reports: the fix of ${STORED_BEFORE[0]!.pool} shown ${fixedLagMs} ms after it was stored (bound ${REPORT_BOUND_MS} ms)`);
      },
    },
    { actions: () => ['Deny'] },
  );

  it('another live replica took the reports Lease', async () => {
    expect([leader, next]).toEqual([expect.any(String), expect.any(String)]);
    expect(next).not.toBe(leader);
    expect(await livePods()).toContain(next);
  });

  it('the new leader followed the fix (within three report rounds): its result gone, one violation fewer', () => {
    expect(countBefore).toBeGreaterThanOrEqual(2);
    expect(countAfter).toBe(countBefore - 1);
  });
});

/** How soon the garbage collector deletes the reports once their owner ClusterRole is gone: seconds measured, a minute allowed. */
const REPORTS_GONE_BOUND_MS = 60_000;

describe('4b. helm upgrade with reports.enabled=false, under load', () => {
  upgradeTo('Deny', 'Deny', { 'reports.enabled': 'false' });

  it("deleted the reports' owner ClusterRole, and so the reports, within the bound", async () => {
    const start = performance.now();
    await until(async () => (await reported()).summaries.size === 0, 'the ClusterReports to be garbage-collected', {
      timeoutMs: REPORTS_GONE_BOUND_MS,
      intervalMs: 500,
    });
    console.log(`reports: gone ${Math.round(performance.now() - start)} ms after the upgrade's checks (bound ${REPORTS_GONE_BOUND_MS} ms)`);
    expect(await mustKubectl(['get', 'clusterrole', '--ignore-not-found', '-o', 'name', 'spiderpool-iaas-webhook-reports-owner'])).toBe('');
  });
});

describe('4c. helm upgrade with the reports on again, under load', () => {
  upgradeTo('Deny', 'Deny');

  it('the reports are written again: fail for the stored pools still broken', async () => {
    console.log(
      `reports: back ${await reportsSay(storedBefore('fail', STORED_BEFORE.slice(1)), 'the reports to be written again')} ms after the upgrade's checks`,
    );
  });
});

describeUninstallUnderLoad(
  '5. helm uninstall under load',
  'helm uninstall',
  'left nothing: no webhook configuration, Secret, Role, hook object, ClusterReport or other cluster-scoped object; every write accepted',
);

describe('5. (after the uninstall) the reports', () => {
  afterAll(removeBrokenPools, 120_000);

  it('left no ClusterReport, though the stored pools still break rules', async () => {
    expect(await reported()).toEqual({ results: [], summaries: new Map() });
  });
});

describe('6. helm install with tls.method provided', () => {
  let caPem: string;
  beforeAll(async () => {
    const pems = await generateCertificates({ serviceName: 'spiderpool-iaas-webhook', namespace: NS });
    caPem = pems.caCertPem;
    const b64 = (pem: string) => Buffer.from(pem).toString('base64');
    await helmChart('install', {
      'tls.method': 'provided',
      'tls.provided.tlsCert': b64(pems.certPem),
      'tls.provided.tlsKey': b64(pems.keyPem),
      'tls.provided.tlsCa': b64(pems.caCertPem),
    });
    await guarded();
  }, 600_000);

  it("the pods wrote the configuration with the operator's CA as every caBundle", async () => {
    const vwc = await getJson('validatingwebhookconfiguration', WEBHOOK_CONFIGURATION);
    for (const webhook of vwc.webhooks) expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString()).toBe(caPem);
  });

  it('uninstalls leaving nothing, the provided Secret included', async () => {
    await mustHelm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout=4m']);
    await expectNothingLeft([NS, 'kube-system']);
    await mustKubectl(['delete', 'namespace', NS, '--timeout=2m'], { timeoutMs: 150_000 });
  });
});

describe('7. helm install for Spiderpool in namespace "spiderpool", ConfigMap "my-conf"', () => {
  beforeAll(async () => {
    await mustKubectl(['create', 'namespace', 'spiderpool']);
    await mustKubectl(['apply', '-f', '-'], { stdin: stringify(conf('spiderpool', 'my-conf', '50s')) });
    await helmChart('install', { 'spiderpool.namespace': 'spiderpool', 'spiderpool.configName': 'my-conf' });
    let last = '';
    await until(
      async () => {
        const r = await applyDryRun(conf('spiderpool', 'my-conf', '100s'));
        last = r.stderr;
        return r.code === 1;
      },
      'the webhook to guard spiderpool/my-conf',
      { timeoutMs: 180_000, intervalMs: 1000, describe: () => last },
    );
  }, 600_000);

  it('refuses a bad my-conf in spiderpool, by the rule', async () => {
    const r = await applyDryRun(conf('spiderpool', 'my-conf', '100s'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^The ConfigMap "my-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "100s": /);
  });

  it('does not look at the same ConfigMap in kube-system, nor at spiderpool-conf there', async () => {
    expect((await applyDryRun(conf('kube-system', 'my-conf', '100s'))).code).toBe(0);
    expect((await applyDryRun(conf('kube-system', 'spiderpool-conf', '100s'))).code).toBe(0);
  });

  it('the conf-reader Role is in spiderpool, for my-conf only', async () => {
    const role = await getJson('role', 'spiderpool-iaas-webhook-conf-reader', 'spiderpool');
    expect(role.rules[0].resourceNames).toEqual(['my-conf']);
  });

  it('uninstalls leaving nothing', async () => {
    await mustHelm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout=4m']);
    await expectNothingLeft([NS, 'spiderpool', 'kube-system']);
    await mustKubectl(['delete', 'namespace', NS, 'spiderpool', '--timeout=2m'], { timeoutMs: 150_000 });
  });
});
