/**
 * The wildcard attack through the real HTTPS server, with a synced cache of 3 000 pools: a
 * tenant's Pod reviews carry 13 stars then 64 `?` (a backtracking regular expression took
 * seconds per pool name on it), patterns of thousands of bytes, hundreds of patterns.
 * Meanwhile a well-behaved client from another loopback address (127.0.0.2) sends
 * SpiderIPPool and spiderpool-conf reviews: each is answered, right, before the refusing
 * webhooks' `timeoutSeconds: 5`; the hostile reviews are answered allowed, checked or with
 * the one warning that the review's step budget ran out. Pool names are short, so that the
 * code before the step budget ends this test too (failing it, within a minute) rather than
 * hanging on its expression.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import { IPPOOLS_ANNOTATION, IPPOOL_ANNOTATION } from '../../src/spiderpool/candidate-annotations.js';
import { overBudgetWarning } from '../../src/spiderpool/candidate-warnings.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { PoolIndex } from '../../src/store/pool-index.js';
import { poolObject } from '../spiderpool/candidate-pools.js';
import { loadReview } from '../fixtures/load.js';
import { httpsRequest } from '../helpers/client.js';
import { REFUSING_WEBHOOK_TIMEOUT_MS } from '../helpers/guarded-reviews.js';

jest.setTimeout(120_000);

const POOLS = 3_000;
const HOSTILE_REVIEWS = 6;
const MIN_GOOD_ROUNDS = 10;
const BACKTRACKING = '*'.repeat(13) + '?'.repeat(64);
const LONG = [`*${'?'.repeat(4_000)}`, `*${'[a-z]'.repeat(2_000)}`, `${'*a'.repeat(1_000)}b`];
/** Patterns enough that trying each on every pool is over the review's step budget. */
const MANY = Array.from({ length: 300 }, (_, i) => `*-${i}?`);

let certDir: string;
let server: RunningServer;

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'webhook-wildcards-'));
  const pools = new PoolIndex();
  pools.replaceAll(Array.from({ length: POOLS }, (_, i) => poolObject(`p-${i}`, { iaas: i % 2 === 0 })));
  server = await startServer({
    port: 0,
    host: '127.0.0.1',
    certDir,
    generateCerts: true,
    logger: pino({ level: 'silent' }),
    review: { pools, dualStack: () => ({ known: true, enableIPv6: false }) },
  });
});

afterAll(async () => {
  await server.stop();
  await rm(certDir, { recursive: true, force: true });
});

/** A Pod CREATE whose only pool annotation is `annotations`. */
function podReview(uid: string, annotations: Record<string, string>): string {
  const review = loadReview('pod-create-mixed-pools');
  review.request.uid = uid;
  review.request.object.metadata.annotations = annotations;
  return JSON.stringify(review);
}

const HOSTILE: { annotations: Record<string, string>; warning: string }[] = [
  {
    annotations: { [IPPOOL_ANNOTATION]: JSON.stringify({ ipv4: [BACKTRACKING] }) },
    warning: `pattern ${JSON.stringify(BACKTRACKING)} matches no IPv4 SpiderIPPool`,
  },
  {
    annotations: {
      [IPPOOLS_ANNOTATION]: JSON.stringify([
        { interface: 'eth0', ipv4: [BACKTRACKING, ...LONG] },
        { interface: 'net1', ipv4: [...LONG, ...MANY] },
      ]),
    },
    warning: overBudgetWarning(`metadata.annotations[${IPPOOLS_ANNOTATION}]`, POOLS, 4),
  },
];

/** The refusing webhooks' reviews and whether each is allowed. */
const GOOD = [
  { path: WEBHOOKS.spiderIPPool.path, review: 'pool-update-node-to-global', allowed: false },
  { path: WEBHOOKS.configMap.path, review: 'configmap-update-timeout-50s', allowed: true },
  { path: WEBHOOKS.configMap.path, review: 'configmap-update-timeout-100s', allowed: false },
];

/** The answer, or status 0 and the error's message when the connection failed (a failure the test reports, not throws). */
const post = (path: string, body: string, agent: https.Agent | false) =>
  httpsRequest({ port: server.port, ca: server.caCertPem!, path, body, agent, headers: { 'content-type': 'application/json' } }).catch((e: Error) => ({
    status: 0,
    body: e.message,
  }));

test('hostile wildcards in Pod reviews do not hold the refusing reviews of another client past their deadline', async () => {
  let hostileDone = false;
  const hostile = (async () => {
    const answers: { uid: string; status: number; response: any; warning: string }[] = [];
    for (let i = 0; i < HOSTILE_REVIEWS; i += 2) {
      const sent = [0, 1].map(async (j) => {
        const { annotations, warning } = HOSTILE[j]!;
        const reply = await post(WEBHOOKS.pod.path, podReview(`hostile-${i + j}`, annotations), false);
        answers.push({ uid: `hostile-${i + j}`, status: reply.status, response: reply.status === 200 ? JSON.parse(reply.body).response : reply.body, warning });
      });
      await Promise.all(sent);
    }
    hostileDone = true;
    return answers;
  })();

  // Another loopback address, one connection kept alive, as the API server keeps one.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' });
  const good: { review: string; status: number; allowed: unknown; ms: number }[] = [];
  try {
    for (let round = 0; !hostileDone || round < MIN_GOOD_ROUNDS; round++) {
      for (const { path, review } of GOOD) {
        const started = performance.now();
        const reply = await post(path, JSON.stringify(loadReview(review)), agent);
        good.push({
          review,
          status: reply.status,
          allowed: reply.status === 200 ? JSON.parse(reply.body).response.allowed : reply.body,
          ms: performance.now() - started,
        });
      }
    }
  } finally {
    agent.destroy();
  }
  const answers = await hostile;

  console.log(`${good.length} refusing-path reviews beside ${answers.length} hostile ones: slowest ${Math.max(...good.map((g) => g.ms)).toFixed(0)} ms`);
  for (const g of good) {
    expect({ review: g.review, status: g.status, allowed: g.allowed }).toEqual({
      review: g.review,
      status: 200,
      allowed: GOOD.find((x) => x.review === g.review)!.allowed,
    });
    expect(g.ms).toBeLessThan(REFUSING_WEBHOOK_TIMEOUT_MS);
  }
  expect(answers).toHaveLength(HOSTILE_REVIEWS);
  for (const a of answers) {
    expect(a.status).toBe(200);
    expect(a.response).toEqual({ uid: a.uid, allowed: true, warnings: [expect.stringContaining(a.warning)] });
  }
});
