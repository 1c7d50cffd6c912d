/**
 * Connection fairness against hostile clients on loopback, with the server's defaults
 * (128 connections, 32 handshakes and 64 lagging requests per client address): while an
 * attacker process holds idle connections, trickles TLS ClientHellos or review bodies, or
 * opens and closes connections at line rate, a well-behaved client (another loopback
 * address, a new connection for every review, as the kube-apiserver opens one when it has
 * none idle) gets every SpiderIPPool and spiderpool-conf review answered 200, and rightly.
 *
 * The attacks on deadlines (trickled ClientHellos, trickled bodies) meet the product's
 * deadlines, whose request deadline is the webhooks' `timeoutSeconds: 5`: a 200 from that
 * server took the review in within it, and a client made to wait for the attacker gets a
 * 408, a 429 or a reset instead. The others meet unhurried deadlines (test/helpers/unhurried.ts),
 * so a client's slow handshake on a loaded machine is not cut. The client's own clock
 * bounds each answer only loosely (UNHURRIED_ANSWER_MS) and the median answer by twice the
 * API server's deadline (MEDIAN_ANSWER_BOUND_MS): the measured latencies and the attacker's
 * counts are printed; speed itself is `npm run bench`'s.
 *
 * The attacker connects from 127.0.0.2 and up (Linux routes all of 127.0.0.0/8 to the
 * loopback interface) and runs in a child process, so it does not share the server's
 * event loop, and ends by itself.
 */
import { jest } from '@jest/globals';
import { MAX_BODY_BYTES, WEBHOOKS } from '../../src/defaults.js';
import { EVICTION_REASONS } from '../../src/server/connection-table.js';
import type { AttackKind, PlanReport } from '../helpers/attackers.js';
import { spawnAttacker } from '../helpers/attacker-process.js';
import { httpsRequest, sampleValue } from '../helpers/client.js';
import { guardedReviews, latencySummary, MEDIAN_ANSWER_BOUND_MS, type GuardedRun } from '../helpers/guarded-reviews.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { UNHURRIED_ANSWER_MS, UNHURRIED_TIMEOUTS } from '../helpers/unhurried.js';
import { until } from '../helpers/until.js';

jest.setTimeout(90_000);

const REVIEWS = 15;
const ATTACKER_SOURCES = (n: number) => Array.from({ length: n }, (_, i) => `127.0.0.${i + 2}`);

/** The product's deadlines: the subject of the attacks on them. */
let server: TestServer;
/** Unhurried deadlines, for the attacks on the connection slots alone. */
let unhurried: TestServer;
beforeAll(async () => {
  [server, unhurried] = await Promise.all([
    startTestServer('webhook-fairness-'),
    startTestServer('webhook-fairness-unhurried-', { timeouts: UNHURRIED_TIMEOUTS }),
  ]);
});
afterAll(() => Promise.all([server?.stop(), unhurried?.stop()]));

const series = async (target: TestServer, name: string) => sampleValue(await target.metrics.registry.metrics(), name);

/**
 * Starts the attack on `target`, waits until it holds `held` connections (or has opened
 * them, for churn), runs the well-behaved client, stops the attack; prints and returns what happened.
 */
async function underAttack(
  target: TestServer,
  what: string,
  kind: AttackKind,
  sources: number,
  perSource: number,
  ready: (report: PlanReport) => boolean | Promise<boolean>,
  declaredBytes = MAX_BODY_BYTES,
) {
  const evictionsBefore = await evictions(target);
  const attacker = await spawnAttacker({
    host: '127.0.0.1',
    port: target.port,
    sources: ATTACKER_SOURCES(sources),
    servername: 'localhost',
    durationMs: 60_000,
    attacks: [{ kind, perSource }],
    slowBody: { path: WEBHOOKS.spiderIPPool.path, declaredBytes },
    reportEveryMs: 200,
  });
  let run: GuardedRun;
  let report: PlanReport;
  let heldByAttacker: number;
  let maxOpenOnServer = 0;
  try {
    await until(() => attacker.last() !== undefined && ready(attacker.last()!), `the ${kind} attack to be under way`, {
      timeoutMs: 20_000,
      describe: () => JSON.stringify(attacker.last()),
    });
    heldByAttacker = attacker.last()!.stats[kind]!.held;
    const sampler = setInterval(() => {
      const { handshaking, idle, active } = openOnServer(target);
      maxOpenOnServer = Math.max(maxOpenOnServer, handshaking + idle + active);
    }, 20);
    run = await guardedReviews(target.port, target.caCertPem!, REVIEWS).finally(() => clearInterval(sampler));
  } finally {
    report = await attacker.stop();
  }
  const stats = report.stats[kind]!;
  const evicted = Object.fromEntries(Object.entries(await evictions(target)).map(([reason, n]) => [reason, n - evictionsBefore[reason]!]));
  const { medianMs, maxMs } = latencySummary(run);
  console.log(
    `${what}: ${run.statuses.filter((s) => s === 200).length}/${REVIEWS} reviews answered 200, latency median ${medianMs} ms, max ${maxMs} ms; ` +
      `attacker opened ${stats.opened} connections, held ${heldByAttacker} when the reviews began (at most ${stats.maxHeld} as it saw them), ${stats.closedByServer} closed by the server; ` +
      `server held at most ${maxOpenOnServer}; ` +
      `evictions ${JSON.stringify(evicted)}`,
  );
  return { ...run, stats, evicted, maxOpenOnServer };
}

/** The server's open connections by state, read as a scrape reads them (the table itself). */
function openOnServer(target: TestServer): { handshaking: number; idle: number; active: number } {
  return target.metrics.connections.read();
}

/** Reviews the product-deadline server answered 408 (a body taken back, or a request past its deadline), on every path. */
async function count408(): Promise<number> {
  const lines = (await server.metrics.registry.metrics())
    .split('\n')
    .filter((l) => l.startsWith('controller_runtime_webhook_requests_total{') && l.includes('code="408"'));
  return lines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

async function evictions(target: TestServer): Promise<Record<string, number>> {
  const text = await target.metrics.registry.metrics();
  return Object.fromEntries(
    EVICTION_REASONS.map((reason) => [reason, sampleValue(text, `spiderpool_iaas_webhook_connection_evictions_total{reason="${reason}"}`)]),
  );
}

/** Lagging requests that gave way: at the cap, or past their address's share of requests in flight. */
const lagged = (evicted: Record<string, number>) => evicted['evicted_lagging']! + evicted['active_share']!;

/** Every review answered 200, each within the loose bound, and the typical one within the API server's deadline. */
function expectServed(run: GuardedRun): void {
  expect(run.statuses).toEqual(Array(REVIEWS).fill(200));
  for (const ms of run.latenciesMs) expect(ms).toBeLessThan(UNHURRIED_ANSWER_MS);
  expect(latencySummary(run).medianMs).toBeLessThan(MEDIAN_ANSWER_BOUND_MS);
}

describe('a well-behaved client is served while an attacker', () => {
  it('holds 200 connections from one address that send nothing (128 took every slot before): it keeps only its share', async () => {
    const result = await underAttack(unhurried, '200 idle TCP connections from one address', 'idle', 1, 200, (r) => r.stats.idle!.opened >= 200);
    expectServed(result);
    // Its newcomers take the slots of its own oldest connections, never the client's.
    expect(result.maxOpenOnServer).toBeLessThanOrEqual(32 + 1);
    expect(result.evicted['address_share']).toBeGreaterThan(0);
  });

  it('fills the whole cap from eight addresses with TLS connections that send no request: theirs give way', async () => {
    const result = await underAttack(unhurried, '8 addresses x 24 idle TLS connections', 'tls-idle', 8, 24, (r) => r.stats['tls-idle']!.opened >= 128);
    expectServed(result);
    expect(result.maxOpenOnServer).toBeLessThanOrEqual(128);
    expect(result.evicted['address_share']! + result.evicted['evicted_idle']! + result.evicted['evicted_handshaking']!).toBeGreaterThan(0);
  });

  it('trickles TLS ClientHellos a byte a second from six addresses: each is cut at the 3 s handshake deadline', async () => {
    const result = await underAttack(
      server,
      '6 addresses x 20 ClientHellos at a byte a second',
      'trickle',
      6,
      20,
      (r) => r.atMs > 3_500 && r.stats.trickle!.closedByServer > 0,
    );
    expectServed(result);
    expect(result.evicted['handshake_timeout']).toBeGreaterThan(0);
  });

  it('declares the largest body on sixteen connections and trickles it: the room it holds is taken back while reviews wait', async () => {
    const timeouts = await count408();
    const result = await underAttack(
      server,
      '2 addresses x 8 reviews declaring MAX_BODY_BYTES, a byte every 500 ms',
      'slow-body',
      2,
      8,
      (r) => r.stats['slow-body']!.held >= 16 && r.atMs > 1_000,
    );
    expectServed(result);
    // Taken back (408, closed), then reopened by the attacker: counted, not timed.
    expect(result.stats.closedByServer).toBeGreaterThan(0);
    expect((await count408()) - timeouts).toBeGreaterThan(0);
  });

  it('opens and closes connections at line rate from four addresses', async () => {
    const result = await underAttack(unhurried, '4 addresses x 16 loops of connect-and-close', 'churn', 4, 16, (r) => r.stats.churn!.opened >= 2_000);
    expectServed(result);
  });
});

describe('afterwards', () => {
  it.each([
    ['the product', () => server],
    ['unhurried', () => unhurried],
  ])('holds no connection of the attacker (%s deadlines): the gauge counts only what is open, and nothing was dropped', async (_deadlines, target) => {
    const open = async () => {
      const text = await target().metrics.registry.metrics();
      return ['handshaking', 'idle', 'active'].map((state) => sampleValue(text, `spiderpool_iaas_webhook_connections{state="${state}"}`));
    };
    await until(async () => (await open()).every((n) => n === 0), 'every connection to be gone', { describe: () => 'still open' });
    // Never was every connection busy: no newcomer was refused for the cap.
    expect(await series(target(), 'spiderpool_iaas_webhook_connection_rejections_total{reason="all_busy"}')).toBe(0);
  });
});

describe('an attacker holding every slot with trickled bodies', () => {
  it('128 connections from one address, each a 1 KiB review trickled (they fit the body budget, so none is preempted for room): its lagging requests give way', async () => {
    // Under way once the server holds every slot, or, under load (it may never hold all 128
    // at once), once the attacker's lagging requests began to give way.
    const before = lagged(await evictions(server));
    const holdsCap = () => Object.values(openOnServer(server)).reduce((a, b) => a + b) >= 128;
    const underWay = async (r: PlanReport) => r.stats['slow-body']!.opened >= 128 && r.atMs > 1_500 && (holdsCap() || lagged(await evictions(server)) > before);
    const result = await underAttack(server, '1 address x 128 reviews declaring 1 KiB, a byte every 500 ms', 'slow-body', 1, 128, underWay, 1024);
    expectServed(result);
    expect(lagged(result.evicted)).toBeGreaterThan(0);
    expect((await httpsRequest({ port: server.port, ca: server.caCertPem!, path: '/healthz' })).status).toBe(200);
  });
});
