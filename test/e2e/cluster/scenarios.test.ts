/**
 * A real kube-apiserver calls the webhook, and the real kubectl shows the result.
 * The scenarios share one cluster and run in order; 6 stops and restarts the webhook, 7
 * rotates its certificates under it (it reloads them; nothing restarts); 8 is the IaaS pool shape
 * (the pool shape, with the webhook's SpiderIPPool cache).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import { connect } from 'node:tls';
import { startCluster, waitUntilWebhookCalled, type Cluster } from './harness.js';
import { until } from '../../helpers/until.js';
import type { Finished } from './processes.js';
import type { LogLine } from './webhook.js';

const IAAS_ANNOTATION = 'ipam.spidernet.io/iaas-provider';
const PARENT_NIC_ANNOTATION = 'ipam.spidernet.io/parent-nic';
const PAIR_ANNOTATION = 'ipam.spidernet.io/pair-pool';
const POOL_WEBHOOK = 'spiderippool.iaas-webhook.spidernet.io';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster();
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

/**
 * A SpiderIPPool with Spiderpool's usual fields; `iaas` adds the provider annotation, and
 * an IaaS node pool gets the parent NIC it must name (shape rule 3).
 */
function pool(name: string, { iaas = true, nodeName }: { iaas?: boolean; nodeName?: string[] } = {}): Record<string, unknown> {
  const parentNic = nodeName ? { [PARENT_NIC_ANNOTATION]: 'eth0' } : {};
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, ...(iaas ? { annotations: { [IAAS_ANNOTATION]: 'example-cloud', ...parentNic } } : {}) },
    spec: {
      ipVersion: 4,
      subnet: '10.6.0.0/16',
      ips: ['10.6.0.10-10.6.0.20'],
      excludeIPs: ['10.6.0.15'],
      gateway: '10.6.0.1',
      podAffinity: { matchLabels: { app: name } },
      ...(nodeName ? { nodeName } : {}),
    },
  };
}

/** Spiderpool's ConfigMap with the provider enabled (or not) and a given timeout line. */
function spiderpoolConf(
  timeout: string | undefined,
  { serverUrl = 'http://iaas-provider.kube-system.svc:80', name = 'spiderpool-conf', namespace = 'kube-system' } = {},
) {
  const timeoutLine = timeout === undefined ? '' : `  httpRequestTimeout: "${timeout}"\n`;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data: { 'conf.yml': `ipamUnixSocketPath: /var/run/spidernet/spiderpool.sock\niaasNetworkProvider:\n  serverUrl: "${serverUrl}"\n${timeoutLine}` },
  };
}

/** Asserts kubectl succeeded, showing its output when it did not. */
function expectOk(result: Finished): void {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('Error') });
}

/**
 * Runs `write` (a kubectl call) and waits until the webhook has logged one more review of
 * an object called `name` with the given `allowed` than before it: proof that the decision
 * came from the webhook. The webhook logs after answering and its stdout is read
 * asynchronously, so the line may arrive just after kubectl exits.
 *
 * @returns kubectl's result and the webhook's log line for that review.
 */
async function reviewedByWebhook(name: string, allowed: boolean, write: () => Promise<Finished>): Promise<{ result: Finished; logged: LogLine }> {
  const reviews = () => cluster.webhook.reviewsOf(name).filter((line) => line['allowed'] === allowed);
  const before = reviews().length;
  const result = await write();
  const logged = await until(() => reviews()[before], `the webhook to log a review of ${name} (allowed: ${allowed})`, { timeoutMs: 5_000 });
  return { result, logged };
}

/** {@link reviewedByWebhook} for a refusal: kubectl exits 1. */
async function refusedByWebhook(name: string, write: () => Promise<Finished>): Promise<{ result: Finished; logged: LogLine }> {
  const refused = await reviewedByWebhook(name, false, write);
  expect(refused.result.code).toBe(1);
  return refused;
}

/**
 * Asserts `write` is refused by the webhook with its spec.nodeName message. kubectl renders
 * an Invalid status from its causes (`The <Kind> "<name>" is invalid: <field>: <Type>:
 * <detail>`), without the API server's `admission webhook "…" denied the request` prefix.
 */
async function expectPoolRefused(name: string, write: () => Promise<Finished>, detail: RegExp): Promise<LogLine> {
  const { result, logged } = await refusedByWebhook(name, write);
  expect(result.stderr).toContain(`The SpiderIPPool "${name}" is invalid: spec.nodeName: Forbidden: `);
  expect(result.stderr).toMatch(detail);
  return logged;
}

describe('the cluster', () => {
  it('is the Kubernetes release pinned in test/e2e/apiserver/go.mod, answering the real kubectl', async () => {
    const goMod = await readFile(new URL('../apiserver/go.mod', import.meta.url), 'utf8');
    const release = /^\s*k8s\.io\/kubernetes (v\S+)$/m.exec(goMod)![1];
    const result = await cluster.kubectl(['version', '-o', 'json']);
    expect(JSON.parse(result.stdout).serverVersion).toMatchObject({ gitVersion: release, major: '1' });
  });
});

describe('1-2. an IaaS node pool loses spec.nodeName', () => {
  const name = 'iaas-node-pool';
  let created: Record<string, any>;

  beforeAll(async () => {
    expectOk(await cluster.apply(pool(name, { nodeName: ['worker-1'] })));
    created = (await cluster.get('spiderippool', name))!;
  });

  it('1. kubectl apply exits non-zero with the field message; the stored pool is unchanged', async () => {
    await expectPoolRefused(
      name,
      () => cluster.apply(pool(name)),
      /changing spec\.nodeName from \["worker-1"\] to none would turn IaaS node pool "iaas-node-pool" into a global pool/,
    );
    const stored = await cluster.get('spiderippool', name);
    expect(stored!['spec'].nodeName).toEqual(['worker-1']);
    expect(stored!['metadata'].resourceVersion).toBe(created['metadata'].resourceVersion);
  });

  it('2. the same with --dry-run=server, and the webhook saw dryRun', async () => {
    const logged = await expectPoolRefused(name, () => cluster.apply(pool(name), ['--dry-run=server']), /into a global pool/);
    expect(logged['dryRun']).toBe(true);
    expect((await cluster.get('spiderippool', name))!['metadata'].resourceVersion).toBe(created['metadata'].resourceVersion);
  });
});

describe('3. pool updates the webhook refuses and accepts', () => {
  it('refuses a global IaaS pool gaining spec.nodeName', async () => {
    expectOk(await cluster.apply(pool('iaas-global-pool')));
    await expectPoolRefused('iaas-global-pool', () => cluster.apply(pool('iaas-global-pool', { nodeName: ['worker-1'] })), /into a node pool/);
    expect((await cluster.get('spiderippool', 'iaas-global-pool'))!['spec'].nodeName).toBeUndefined();
  });

  it('accepts a node pool moving to another node', async () => {
    expectOk(await cluster.apply(pool('iaas-moving-pool', { nodeName: ['worker-1'] })));
    expectOk(await cluster.apply(pool('iaas-moving-pool', { nodeName: ['worker-2'] })));
    expect((await cluster.get('spiderippool', 'iaas-moving-pool'))!['spec'].nodeName).toEqual(['worker-2']);
  });

  it('accepts a traditional pool adding and removing spec.nodeName', async () => {
    expectOk(await cluster.apply(pool('traditional-pool', { iaas: false })));
    expectOk(await cluster.apply(pool('traditional-pool', { iaas: false, nodeName: ['worker-1'] })));
    expect((await cluster.get('spiderippool', 'traditional-pool'))!['spec'].nodeName).toEqual(['worker-1']);
    expectOk(await cluster.apply(pool('traditional-pool', { iaas: false })));
    expect((await cluster.get('spiderippool', 'traditional-pool'))!['spec'].nodeName).toBeUndefined();
  });

  it('refuses removing the IaaS annotation', async () => {
    expectOk(await cluster.apply(pool('iaas-annotated-pool', { nodeName: ['worker-1'] })));
    const { result } = await refusedByWebhook('iaas-annotated-pool', () =>
      cluster.kubectl(['annotate', 'spiderippool', 'iaas-annotated-pool', `${IAAS_ANNOTATION}-`]),
    );
    expect(result.stderr).toContain(`The SpiderIPPool "iaas-annotated-pool" is invalid: metadata.annotations[${IAAS_ANNOTATION}]: Forbidden: `);
    expect((await cluster.get('spiderippool', 'iaas-annotated-pool'))!['metadata'].annotations[IAAS_ANNOTATION]).toBe('example-cloud');
  });

  it('accepts a status update of an IaaS pool', async () => {
    expectOk(await cluster.apply(pool('iaas-status-pool', { nodeName: ['worker-1'] })));
    const result = await cluster.kubectl([
      'patch',
      'spiderippool',
      'iaas-status-pool',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"allocatedIPCount":1,"totalIPCount":10}}',
    ]);
    expectOk(result);
    expect((await cluster.get('spiderippool', 'iaas-status-pool'))!['status']).toEqual({ allocatedIPCount: 1, totalIPCount: 10 });
  });

  it('accepts deleting an IaaS pool', async () => {
    expectOk(await cluster.apply(pool('iaas-deleted-pool', { nodeName: ['worker-1'] })));
    expectOk(await cluster.kubectl(['delete', 'spiderippool', 'iaas-deleted-pool', '--wait=true']));
    expect(await cluster.get('spiderippool', 'iaas-deleted-pool')).toBeUndefined();
  });
});

describe('4. the spiderpool-conf ConfigMap', () => {
  it.each([
    ['100s', /Invalid value: "100s": is 1m40s, must be less than 100s/],
    ['2m', /Invalid value: "2m": is 2m0s, must be less than 2m .* and less than 100s/],
    ['0s', /Invalid value: "0s": is 0s, must be greater than 0/],
    ['abc', /Invalid value: "abc": is not a Go duration \(time: invalid duration "abc"\)/],
    ['50', /Invalid value: "50": is not a Go duration \(time: missing unit in duration "50"\).*did you mean "50s"\?/],
  ])('refuses httpRequestTimeout "%s" with the value and the limit', async (timeout, detail) => {
    const { result } = await refusedByWebhook('spiderpool-conf', () => cluster.apply(spiderpoolConf(timeout)));
    expect(result.stderr).toContain('The ConfigMap "spiderpool-conf" is invalid: data[conf.yml].iaasNetworkProvider.httpRequestTimeout: ');
    expect(result.stderr).toMatch(detail);
    const stored = await cluster.get('configmap', 'spiderpool-conf', 'kube-system');
    expect(stored?.['data']['conf.yml'] ?? '').not.toContain(`"${timeout}"\n`);
  });

  it.each([['50s'], ['59s'], [undefined]])('accepts httpRequestTimeout %s', async (timeout) => {
    expectOk(await cluster.apply(spiderpoolConf(timeout)));
    const stored = await cluster.get('configmap', 'spiderpool-conf', 'kube-system');
    expect(stored!['data']['conf.yml']).toBe(spiderpoolConf(timeout).data['conf.yml']);
  });

  it('accepts a bad value while the provider is disabled, and kubectl prints the warning', async () => {
    const result = await cluster.apply(spiderpoolConf('abc', { serverUrl: '' }));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^Warning: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: "abc" is ignored while serverUrl and service.name are empty/m,
    );
  });
});

describe('5. other ConfigMaps never reach the webhook', () => {
  it('logs no review for another ConfigMap in kube-system, or for spiderpool-conf in another namespace', async () => {
    expectOk(await cluster.apply(spiderpoolConf('abc', { name: 'other-conf' })));
    expectOk(await cluster.apply(spiderpoolConf('abc', { namespace: 'default' })));
    // A request that does reach the webhook, after them: its log line proves the log is
    // read up to a point later than the two writes above.
    expectOk((await reviewedByWebhook('spiderpool-conf', true, () => cluster.apply(spiderpoolConf('57s')))).result);
    expect(cluster.webhook.reviewsOf('other-conf')).toEqual([]);
    expect(cluster.webhook.reviewsOf('spiderpool-conf').filter((l) => l['namespace'] === 'default')).toEqual([]);
  });
});

describe('6. the webhook stopped: fail closed for what it guards only', () => {
  const name = 'iaas-outage-pool';

  beforeAll(async () => {
    expectOk(await cluster.apply(pool(name, { nodeName: ['worker-1'] })));
    expectOk(await cluster.apply(pool('traditional-outage-pool', { iaas: false })));
    await cluster.webhook.stop();
  });

  afterAll(async () => {
    // Later scenarios need it running, even when a test above failed before restarting it.
    await cluster?.webhook.start();
  });

  it('refuses IaaS pool updates with the API server\'s "failed calling webhook" error', async () => {
    const result = await cluster.apply(pool(name, { nodeName: ['worker-2'] }));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Internal error occurred: failed calling webhook "${POOL_WEBHOOK}"`);
    expect(result.stderr).toMatch(/connect: connection refused/);
    expect((await cluster.get('spiderippool', name))!['spec'].nodeName).toEqual(['worker-1']);
  });

  it('leaves other ConfigMaps and traditional pools unaffected', async () => {
    expectOk(await cluster.apply(spiderpoolConf('abc', { name: 'other-conf' })));
    expectOk(await cluster.kubectl(['create', 'configmap', 'outage-check', '-n', 'kube-system', '--from-literal=a=b']));
    expectOk(await cluster.apply(pool('traditional-outage-pool', { iaas: false, nodeName: ['worker-1'] })));
  });

  it('works again once the webhook is started again', async () => {
    await cluster.webhook.start();
    expectOk(await cluster.apply(pool(name, { nodeName: ['worker-2'] })));
    await expectPoolRefused(name, () => cluster.apply(pool(name)), /into a global pool/);
  });
});

describe('7. certificates rotated to a new CA, then register again', () => {
  const name = 'iaas-rotation-pool';
  let apiServerPid: number;

  beforeAll(async () => {
    apiServerPid = cluster.apiServer.pid;
    expectOk(await cluster.apply(pool(name, { nodeName: ['worker-1'] })));
  });

  /** The SHA-256 fingerprint of the certificate the webhook serves on a new connection. */
  function servedFingerprint(): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: cluster.webhook.port, rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.once('error', reject);
    });
  }

  /** Waits until the running webhook serves the pair now in its cert dir: it reloads by itself. */
  async function waitUntilWebhookServesNewCertificate(): Promise<void> {
    const wanted = new X509Certificate(await readFile(path.join(cluster.certDir, 'tls.crt'))).fingerprint256;
    await until(async () => (await servedFingerprint()) === wanted, 'the webhook to reload its certificate', { timeoutMs: 30_000, intervalMs: 250 });
  }

  it('the API server keeps the old CA until register runs, then trusts the new chain', async () => {
    const webhookPid = cluster.webhook.pid;
    const rotated = await cluster.cli(['certs', `--out=${cluster.certDir}`, '--new-ca', '--ip=127.0.0.1']);
    expect(rotated.code).toBe(0);
    await waitUntilWebhookServesNewCertificate();

    // The registered caBundle is the old CA: the API server cannot verify the new chain. A
    // connection it opened before the rotation keeps the old certificate (TLS picks it at the
    // handshake) until it has been idle for the harness's 5 s `--idle-timeout`, so ask at
    // longer intervals until a new connection is made.
    const untrusted = await until(
      async () => {
        const attempt = await cluster.apply(pool(name, { nodeName: ['worker-2'] }), ['--dry-run=server']);
        return attempt.code === 0 ? undefined : attempt;
      },
      'the API server to open a connection that sees the new certificate',
      { timeoutMs: 40_000, intervalMs: 6_000 },
    );
    expect(untrusted.stderr).toContain(`failed calling webhook "${POOL_WEBHOOK}"`);
    expect(untrusted.stderr).toMatch(/x509: certificate signed by unknown authority/);

    const registered = await cluster.register();
    expect(registered.stdout).toMatch(/applied \(resourceVersion \d+\)/);
    await waitUntilWebhookCalled(cluster);
    expectOk(await cluster.apply(pool(name, { nodeName: ['worker-2'] })));
    await expectPoolRefused(name, () => cluster.apply(pool(name)), /into a global pool/);
    expect(cluster.apiServer.pid).toBe(apiServerPid);
    expect(cluster.webhook.pid).toBe(webhookPid);
  });
});

describe('register against the real API server', () => {
  it('is idempotent and keeps fields other managers set', async () => {
    await cluster.register();
    expectOk(await cluster.kubectl(['label', 'validatingwebhookconfiguration', 'spiderpool-iaas-webhook', 'team=network']));
    const before = await cluster.get('validatingwebhookconfiguration', 'spiderpool-iaas-webhook');
    const again = await cluster.register();
    expect(again.stdout).toContain(`unchanged (resourceVersion ${before!['metadata'].resourceVersion})`);
    const after = await cluster.get('validatingwebhookconfiguration', 'spiderpool-iaas-webhook');
    expect(after!['metadata'].labels).toMatchObject({ team: 'network', 'app.kubernetes.io/name': 'spiderpool-iaas-webhook' });
    // The two refusing webhooks, then the four warning-only candidate-pool ones.
    const paths = ['/validate-spiderippool', '/validate-configmap', '/validate-pod', '/validate-workload', '/validate-namespace', '/validate-spiderippool'];
    expect(after!['webhooks'].map((w: any) => w.clientConfig.url)).toEqual(paths.map((p) => `https://127.0.0.1:${cluster.webhook.port}${p}`));
  });

  it('fails with one line, exit 2, when the API server refuses the token', async () => {
    const badConfig = path.join(cluster.workDir, 'bad-kubeconfig');
    const view = await cluster.kubectl(['config', 'view', '--raw', '--minify', '-o', 'json']);
    const config = JSON.parse(view.stdout);
    config.users[0].user.token = 'wrong';
    await writeFile(badConfig, JSON.stringify(config));
    const result = await cluster.cli([
      'register',
      `--kubeconfig=${badConfig}`,
      `--ca-file=${path.join(cluster.certDir, 'ca.crt')}`,
      '--url=https://127.0.0.1:1',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: the API server at https:\/\/127\.0\.0\.1:\d+ refused the ValidatingWebhookConfiguration: Unauthorized/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

/**
 * One pool of a dual-stack pair, pinned to worker-1: IPv4 in 10.7.0.0/16 or IPv6 in
 * fd00:7::/64, naming `pair` in its pair-pool annotation.
 */
function pairPool(name: string, ipVersion: 4 | 6, ips: string[], pair: string): Record<string, unknown> {
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, annotations: { [IAAS_ANNOTATION]: 'example-cloud', [PARENT_NIC_ANNOTATION]: 'eth0', [PAIR_ANNOTATION]: pair } },
    spec: {
      ipVersion,
      subnet: ipVersion === 4 ? '10.7.0.0/16' : 'fd00:7::/64',
      ips,
      podAffinity: { matchLabels: { app: 'dual-stack' } },
      nodeName: ['worker-1'],
    },
  };
}

/**
 * Resolves once a server-side dry run of `manifest` is refused with `detail`: the webhook's
 * cache has seen the pool the refusal depends on (it learns of writes through its watch, a
 * moment after kubectl returns). A dry run stores nothing, so probing changes no state.
 */
async function untilDryRunRefused(manifest: Record<string, unknown>, detail: string): Promise<void> {
  let last: Finished | undefined;
  await until(
    async () => {
      last = await cluster.apply(manifest, ['--dry-run=server']);
      return last.code !== 0 && last.stderr.includes(detail);
    },
    `a dry run to be refused with ${JSON.stringify(detail)}`,
    { timeoutMs: 10_000, intervalMs: 200, describe: () => `${last?.stdout ?? ''}${last?.stderr ?? ''}` },
  );
}

describe('8. the whole IaaS pool shape, pairs checked through the SpiderIPPool cache', () => {
  beforeAll(async () => {
    await cluster.webhook.poolCacheSynced(); // scenarios 6 and 7 restarted it
  });

  it('refuses a node pool without parent-nic', async () => {
    const name = 'iaas-no-nic-pool';
    const manifest = pool(name, { nodeName: ['worker-1'] }) as { metadata: { annotations: Record<string, string> } };
    delete manifest.metadata.annotations[PARENT_NIC_ANNOTATION];
    const { result } = await refusedByWebhook(name, () => cluster.apply(manifest));
    expect(result.stderr).toContain(
      `The SpiderIPPool "${name}" is invalid: metadata.annotations[${PARENT_NIC_ANNOTATION}]: Required value: an IaaS node pool must name the interface on its node`,
    );
    expect(await cluster.get('spiderippool', name)).toBeUndefined();
  });

  it('refuses a pool naming itself as its pair', async () => {
    const { result } = await refusedByWebhook('self-paired', () => cluster.apply(pairPool('self-paired', 4, ['10.7.0.10'], 'self-paired')));
    expect(result.stderr).toContain(
      `The SpiderIPPool "self-paired" is invalid: metadata.annotations[${PAIR_ANNOTATION}]: Invalid value: "self-paired": names the pool itself`,
    );
    expect(await cluster.get('spiderippool', 'self-paired')).toBeUndefined();
  });

  it('creates a v4/v6 pair, then refuses shrinking the IPv6 side below the IPv4 side', async () => {
    const v4 = pairPool('dual-v4', 4, ['10.7.0.10-10.7.0.29'], 'dual-v6'); // 20 addresses
    const v6 = pairPool('dual-v6', 6, ['fd00:7::10-fd00:7::2f'], 'dual-v4'); // 32 addresses
    expectOk(await cluster.apply(v4));
    expectOk(await cluster.apply(v6));
    expect((await cluster.get('spiderippool', 'dual-v6'))!['spec'].ips).toEqual(['fd00:7::10-fd00:7::2f']);

    const shrunk = pairPool('dual-v6', 6, ['fd00:7::10-fd00:7::1f'], 'dual-v4'); // 16 addresses
    const detail = 'spec.ips: Invalid value: holds 16 addresses (spec.ips minus spec.excludeIPs), fewer than the 20 of its IPv4 pair pool "dual-v4"';
    await untilDryRunRefused(shrunk, detail);
    const { result } = await refusedByWebhook('dual-v6', () => cluster.apply(shrunk));
    expect(result.stderr).toContain(`The SpiderIPPool "dual-v6" is invalid: ${detail}`);
    expect((await cluster.get('spiderippool', 'dual-v6'))!['spec'].ips).toEqual(['fd00:7::10-fd00:7::2f']);
  });

  it('accepts a pool whose sibling does not exist yet, with a warning, and checks the sibling when it arrives', async () => {
    const created = await cluster.apply(pairPool('late-v4', 4, ['10.7.1.10-10.7.1.29'], 'late-v6')); // 20 addresses
    expect(created.code).toBe(0);
    expect(created.stderr).toMatch(
      /^Warning: metadata\.annotations\[ipam\.spidernet\.io\/pair-pool\]: pair pool "late-v6" does not exist yet, so the pairing is not checked now/m,
    );

    const tooSmall = pairPool('late-v6', 6, ['fd00:7::1:10-fd00:7::1:19'], 'late-v4'); // 10 addresses
    const detail = 'spec.ips: Invalid value: holds 10 addresses (spec.ips minus spec.excludeIPs), fewer than the 20 of its IPv4 pair pool "late-v4"';
    await untilDryRunRefused(tooSmall, detail);
    const { result } = await refusedByWebhook('late-v6', () => cluster.apply(tooSmall));
    expect(result.stderr).toContain(`The SpiderIPPool "late-v6" is invalid: ${detail}`);

    const fits = await cluster.apply(pairPool('late-v6', 6, ['fd00:7::1:10-fd00:7::1:2f'], 'late-v4')); // 32 addresses
    expectOk(fits);
    expect(fits.stderr).not.toContain('Warning');
  });
});
