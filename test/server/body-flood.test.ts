/**
 * A stray client floods the refusing path with large valid reviews: from 127.0.0.1, on
 * several connections in a loop, SpiderIPPool UPDATEs just under 7 MiB (half the body budget
 * each) sent whole. The API server's stand-in, on 127.0.0.2, sends ordinary SpiderIPPool
 * and spiderpool-conf reviews one after the other: each must be answered 200, rightly.
 * When the budget let bodies in in arrival order, each of its reviews waited for every
 * flood body queued ahead of it, and sustained, got 429: the body budget keeps the product's
 * deadlines (a review waits 4 s for room, below the refusing webhooks' `timeoutSeconds: 5`,
 * then gets 429), the server's others are unhurried (test/helpers/unhurried.ts), and the
 * client's own clock bounds each answer only loosely, so a loaded machine's slow handshake
 * fails nothing, and the median answer by twice the API server's deadline. The latencies are
 * printed; speed itself is `npm run bench`'s.
 *
 * The attacker runs in a child process (its own event loop) and ends by itself.
 */
import { jest } from '@jest/globals';
import { MAX_BODY_BYTES, WEBHOOKS } from '../../src/defaults.js';
import { DEFAULT_TIMEOUTS } from '../../src/server/limits.js';
import type { LargeBody } from '../helpers/attackers.js';
import { spawnAttacker } from '../helpers/attacker-process.js';
import { guardedReviews, latencySummary, MEDIAN_ANSWER_BOUND_MS, type GuardedRun } from '../helpers/guarded-reviews.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { UNHURRIED_ANSWER_MS, UNHURRIED_TIMEOUTS } from '../helpers/unhurried.js';
import { until } from '../helpers/until.js';
import { loadReview } from '../fixtures/load.js';

jest.setTimeout(120_000);

const REVIEWS = 10;
const FLOOD_CONNECTIONS = 24;
const FLOOD: LargeBody = {
  path: WEBHOOKS.spiderIPPool.path,
  review: loadReview('pool-update-node-to-other-node') as LargeBody['review'],
  bytes: MAX_BODY_BYTES,
};

let server: TestServer;
beforeAll(async () => {
  const { bodyWaitMs, bodyStallMs } = DEFAULT_TIMEOUTS;
  server = await startTestServer('webhook-body-flood-', { timeouts: { ...UNHURRIED_TIMEOUTS, bodyWaitMs, bodyStallMs } });
});
afterAll(() => server?.stop());

it('a flood of large valid reviews from one address does not make the API server wait for all of them', async () => {
  const attacker = await spawnAttacker({
    host: '127.0.0.1',
    port: server.port,
    sources: ['127.0.0.1'],
    servername: 'localhost',
    durationMs: 100_000,
    attacks: [{ kind: 'large-body', perSource: FLOOD_CONNECTIONS, reopenMs: 0 }],
    largeBody: FLOOD,
    reportEveryMs: 200,
  });
  let run: GuardedRun;
  try {
    // Under way once bodies are being answered while every connection is open again.
    await until(() => (attacker.last()?.stats['large-body']?.closedByServer ?? 0) >= 4, 'the flood to be under way', {
      timeoutMs: 30_000,
      describe: () => JSON.stringify(attacker.last()),
    });
    run = await guardedReviews(server.port, server.caCertPem!, REVIEWS, '127.0.0.2');
  } finally {
    await attacker.stop();
  }
  const flood = attacker.last()!.stats['large-body']!;
  const { medianMs, maxMs } = latencySummary(run);
  console.log(
    `${FLOOD_CONNECTIONS} connections posting ${FLOOD.bytes} bytes in a loop from 127.0.0.1: ` +
      `${run.statuses.filter((s) => s === 200).length}/${REVIEWS} reviews from 127.0.0.2 answered 200, ${run.statuses.filter((s) => s === 429).length} 429, ` +
      `${run.latenciesMs.filter((ms) => ms > 1_000).length} over 1 s; latency median ${medianMs} ms, max ${maxMs} ms; ` +
      `flood bodies answered ${flood.closedByServer}`,
  );
  expect(run.statuses).toEqual(Array(REVIEWS).fill(200));
  for (const ms of run.latenciesMs) expect(ms).toBeLessThan(UNHURRIED_ANSWER_MS);
  // Each answer is bounded loosely (a loaded machine's slow handshake); the typical one by the API server's deadline.
  expect(medianMs).toBeLessThan(MEDIAN_ANSWER_BOUND_MS);
});
