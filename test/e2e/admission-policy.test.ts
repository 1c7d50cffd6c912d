/**
 * The ValidatingAdmissionPolicy of deploy/components/validating-admission-policy/ decides
 * as the webhook does, on the real kube-apiserver with Spiderpool's own CRD: thousands of
 * generated (old, new) pool pairs (fast-check, seeded by seed.ts; the seed is printed and
 * `VAP_SEED` replays it, `VAP_PAIRS` sets the count), each stored while no guard is
 * installed (so old pools may break any rule), then written as server-side dry-run
 * UPDATEs and CREATEs once with only the policy and once with only the webhook. Every
 * write must be allowed by both or refused by both, and refused first for the same field.
 * The generated pools stay inside the rules the policy covers (no stored pair partner,
 * few `spec.ips`), so the webhook-only rules of src/rules/admission-policy.ts never fire.
 *
 * Then both are installed: kubectl shows the policy's refusal (it runs before webhooks),
 * which is the webhook's first cause.
 */
import fc from 'fast-check';
import { ADMISSION_POLICY_NAME, SPIDERIPPOOL_ENFORCEMENT } from '../../src/rules/admission-policy.js';
import { noPoolDirectory } from '../../src/rules/pool-pair.js';
import { judgeSpiderIPPoolWrite, SpiderIPPoolSchema } from '../../src/rules/spiderippool.js';
import { apiClient, mapLimit, type ApiClient, type ApiResponse } from './cluster/api-client.js';
import { clusterGuards, POOLS_PATH as POOLS, type Guards } from './cluster/guards.js';
import { startCluster, type Cluster } from './cluster/harness.js';
import { differentialSeed } from './seed.js';
import { manifest, pair, type Pair } from '../helpers/pool-pairs.js';

const PAIRS = Number(process.env['VAP_PAIRS'] ?? 1500);
const SEED = differentialSeed('VAP_SEED');
/** Requests in flight: enough to keep the API server busy on two cores. */
const CONCURRENCY = 12;

/** No stored partner: none of the generated pairs names a pool that exists. */
const NO_POOLS = noPoolDirectory('not needed: no generated pool names a stored partner');

/** A write's outcome: allowed, or refused with the first field and the text after the API server's prefix. */
type Outcome = { allowed: true } | { allowed: false; by: 'policy' | 'webhook'; field: string; text: string };

/** The outcome of a dry run by whichever guard answered. @throws Error for anything but allowed or refused. */
function outcome(response: ApiResponse, what: string): Outcome {
  if (response.status === 200 || response.status === 201) return { allowed: true };
  const message: string = response.body?.message ?? '';
  if (response.status === 422 && message.includes(' denied request: ')) {
    const text = message.slice(message.indexOf(' denied request: ') + ' denied request: '.length);
    return { allowed: false, by: 'policy', field: text.slice(0, text.indexOf(': ')), text };
  }
  const cause = response.body?.details?.causes?.[0];
  if (response.status === 422 && message.includes('admission webhook') && cause !== undefined) {
    return { allowed: false, by: 'webhook', field: cause.field, text: `${cause.field}: ${cause.message}` };
  }
  throw new Error(`${what}: unexpected answer ${response.status}: ${JSON.stringify(response.body)}`);
}

let cluster: Cluster;
let api: ApiClient;
let guards: Guards;

/** The stored version of each old pool `d-i`, which its UPDATEs replace. */
const storedVersions: string[] = [];

/** Dry-run UPDATE (of the stored old pool) and CREATE (as a new pool `c-i`) of every pair. */
async function judgeAll(pairs: readonly Pair[], guard: string): Promise<{ update: Outcome; create: Outcome }[]> {
  return mapLimit(pairs, CONCURRENCY, async (p, i) => ({
    update: outcome(await api.request('PUT', `${POOLS}/d-${i}?dryRun=All`, manifest(`d-${i}`, p.next, storedVersions[i])), `${guard} UPDATE d-${i}`),
    create: outcome(await api.request('POST', `${POOLS}?dryRun=All`, manifest(`c-${i}`, p.next)), `${guard} CREATE c-${i}`),
  }));
}

beforeAll(async () => {
  cluster = await startCluster();
  api = await apiClient(cluster.apiServer.kubeconfig, CONCURRENCY);
  guards = await clusterGuards(cluster, api);
}, 300_000);

afterAll(async () => {
  api?.close();
  await cluster?.stop();
});

test(`the policy and the webhook decide alike on generated pool pairs (VAP_PAIRS, VAP_SEED)`, async () => {
  const started = Date.now();
  const pairs = fc.sample(pair, { seed: SEED, numRuns: PAIRS });
  console.log(`admission-policy differential: seed ${SEED} (VAP_SEED=${SEED} replays it), ${pairs.length} (old, new) pairs`);

  // The old pools, stored while no guard is installed: they may break any rule already.
  await guards.set({ policy: false, webhook: false });
  await mapLimit(pairs, CONCURRENCY, async (p, i) => {
    const created = await api.request('POST', POOLS, manifest(`d-${i}`, p.old));
    if (created.status !== 201) throw new Error(`storing d-${i}: ${created.status} ${JSON.stringify(created.body)}`);
    storedVersions[i] = created.body.metadata.resourceVersion;
    if (p.status.count === undefined && p.status.ips === undefined) return;
    const status = {
      ...(p.status.count !== undefined ? { allocatedIPCount: p.status.count } : {}),
      ...(p.status.ips !== undefined ? { allocatedIPs: p.status.ips } : {}),
    };
    const written = await api.request('PUT', `${POOLS}/d-${i}/status`, { ...created.body, status });
    if (written.status !== 200) throw new Error(`status of d-${i}: ${written.status} ${JSON.stringify(written.body)}`);
    storedVersions[i] = written.body.metadata.resourceVersion;
  });

  await guards.set({ policy: true, webhook: false });
  const byPolicy = await judgeAll(pairs, 'policy');
  await guards.set({ policy: false, webhook: true });
  const byWebhook = await judgeAll(pairs, 'webhook');

  const disagreements: string[] = [];
  const otherText: string[] = [];
  const fired = new Map<string, number>();
  let refused = 0;
  let sameText = 0;
  const counts = { update: { allowed: 0, refused: 0 }, create: { allowed: 0, refused: 0 } };
  pairs.forEach((p, i) => {
    for (const op of ['update', 'create'] as const) {
      const a = byPolicy[i]![op];
      const b = byWebhook[i]![op];
      counts[op][b.allowed ? 'allowed' : 'refused']++;
      const agree = a.allowed === b.allowed && (a.allowed || (!b.allowed && a.field === b.field));
      if (!agree)
        disagreements.push(
          `${op} of pair ${i}: policy ${JSON.stringify(a)}, webhook ${JSON.stringify(b)}; old ${JSON.stringify(manifest(`d-${i}`, p.old))} status ${JSON.stringify(p.status)}, new ${JSON.stringify(manifest(`d-${i}`, p.next))}`,
        );
      if (!a.allowed && !b.allowed) {
        refused++;
        if (a.text === b.text) sameText++;
        else otherText.push(`policy: ${a.text}\n  webhook: ${b.text}`);
      }
    }
    // Which rules the webhook's own judgement says refused (the pure function, on the same objects).
    const name = `d-${i}`;
    const old = SpiderIPPoolSchema.parse({ ...manifest(name, p.old), status: { allocatedIPCount: p.status.count, allocatedIPs: p.status.ips } });
    const next = SpiderIPPoolSchema.parse({ ...manifest(name, p.next), status: old.status });
    const judged = [
      ...judgeSpiderIPPoolWrite(old, next, name, NO_POOLS).refused,
      ...judgeSpiderIPPoolWrite(undefined, SpiderIPPoolSchema.parse(manifest(`c-${i}`, p.next)), `c-${i}`, NO_POOLS).refused,
    ];
    for (const { rule } of judged) fired.set(rule, (fired.get(rule) ?? 0) + 1);
  });
  console.log(
    `admission-policy differential: ${pairs.length} pairs, ${2 * pairs.length} writes (UPDATE ${counts.update.allowed} allowed / ${counts.update.refused} refused; ` +
      `CREATE ${counts.create.allowed} allowed / ${counts.create.refused} refused), ${2 * pairs.length - disagreements.length} agree, ${disagreements.length} disagree; ` +
      `of ${refused} refused by both, the policy's message is the webhook's first cause word for word in ${sameText}; ${Math.round((Date.now() - started) / 1000)} s`,
  );
  console.log(`rules refusing (count of writes): ${[...fired].map(([rule, n]) => `${rule} ${n}`).join(', ')}`);
  if (otherText.length > 0) console.log(`messages in other words (${otherText.length}), e.g.:\n  ${otherText.slice(0, 3).join('\n  ')}`);
  expect(disagreements.slice(0, 5)).toEqual([]);
  // Every rule with a policy twin is reached.
  const twinned = Object.entries(SPIDERIPPOOL_ENFORCEMENT)
    .filter(([, e]) => 'policyVariable' in e)
    .map(([rule]) => rule);
  expect(twinned.filter((rule) => !fired.has(rule))).toEqual([]);
  // The generator reaches both sides of the rules.
  expect(counts.update.refused).toBeGreaterThan(pairs.length / 10);
  expect(counts.update.allowed).toBeGreaterThan(pairs.length / 10);
  expect(counts.create.refused).toBeGreaterThan(pairs.length / 10);
});

test("with both installed, kubectl shows the policy's refusal, which names the field and says what to do", async () => {
  await guards.set({ policy: true, webhook: true });
  const name = 'both-guards';
  const nodePool = manifest(name, { provider: 'cloud', nodes: ['w1'], nic: 'eth0', pair: undefined, other: undefined });
  expect((await cluster.apply(nodePool)).code).toBe(0);
  const both = await cluster.apply(manifest(name, { provider: 'cloud', nodes: undefined, nic: 'eth0', pair: undefined, other: undefined }), [
    '--dry-run=server',
  ]);
  expect(both.code).toBe(1);
  expect(both.stderr).toBe(
    `The spiderippools "${name}" is invalid: : ValidatingAdmissionPolicy '${ADMISSION_POLICY_NAME}' with binding '${ADMISSION_POLICY_NAME}' denied request: ` +
      `spec.nodeName: Forbidden: changing spec.nodeName from ["w1"] to none would turn IaaS node pool "${name}" into a global pool, ` +
      "but an IaaS pool's mode is fixed for its life: a node pool's addresses are sub-ENIs pre-warmed on its node, a global pool allocates them " +
      'on any node and keeps them there as a cache, and switching would strand those allocations; to make it a global pool, delete it once no Pod uses it ' +
      'and create it again without spec.nodeName\n',
  );
  // A rule of the webhook alone still reaches it, and kubectl shows the webhook's refusal.
  const conf = await cluster.apply(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
      data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: 2m\n' },
    },
    ['--dry-run=server'],
  );
  expect(conf.stderr).toMatch(/^The ConfigMap "spiderpool-conf" is invalid: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "2m"/);
});
