/**
 * Hostile input against the real HTTPS server (fast-check, bounded runs): random bytes,
 * random JSON, random AdmissionReviews with random objects, deep nesting, `__proto__` /
 * `constructor` keys, huge arrays, invalid UTF-8, wrong content types, truncated bodies and
 * slow senders. Invariants: never a 5xx and never a crash; every 200 is a well-formed
 * AdmissionReview echoing the request's `uid`; every refusal is a 4xx `Status` with a
 * one-line message; memory stays bounded. test/server/app.test.ts pins the exact answers.
 * The server's deadlines are far beyond this file's timing (a loaded machine must not turn a
 * slow test client into a 408 or 429); senders that stall meet the product's deadlines.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import fc from 'fast-check';
import { pino } from 'pino';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { MAX_BODY_BYTES, WEBHOOKS, WEBHOOK_SERVED_PATHS } from '../../src/defaults.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { loadReview } from '../fixtures/load.js';
import { connectTls, httpsRequest, type Reply } from '../helpers/client.js';
import { UNHURRIED_TIMEOUTS } from '../helpers/unhurried.js';

jest.setTimeout(120_000);

const errors: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => errors.push(line) });
const NUM_RUNS = 150;
const paths = WEBHOOK_SERVED_PATHS;

let certDir: string;
let server: RunningServer;
let agent: https.Agent;
let rssBefore: number;

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'webhook-hostile-'));
  server = await startServer({
    port: 0,
    host: '127.0.0.1',
    certDir,
    generateCerts: true,
    logger,
    timeouts: UNHURRIED_TIMEOUTS,
  });
  agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
  rssBefore = process.memoryUsage().rss;
});

afterAll(async () => {
  agent.destroy();
  await server.stop();
  await rm(certDir, { recursive: true, force: true });
});

/** The `request.uid` a 200 must echo, when `body` decodes (as UTF-8, like the server) to a review with one. */
function sentUid(body: string | Buffer): unknown {
  try {
    return JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : body)?.request?.uid;
  } catch {
    return undefined;
  }
}

/** The invariants every answer keeps; returns the status for the caller's own checks. */
function checkReply(reply: Reply, body: string | Buffer): number {
  if (reply.status === 200) {
    const review = AdmissionReviewResponseSchema.parse(JSON.parse(reply.body));
    expect(review.response.uid).toBe(sentUid(body));
  } else {
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
    const status = JSON.parse(reply.body);
    expect(status).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: reply.status, reason: expect.any(String) });
    expect(status.message).toEqual(expect.any(String));
    expect(status.message).not.toMatch(/[\r\n]/);
  }
  return reply.status;
}

const post = (path: string, body: string | Buffer, contentType = 'application/json') =>
  httpsRequest({ port: server.port, ca: server.caCertPem!, path, body, agent, headers: { 'content-type': contentType } });

/** Sends raw bytes on a new TLS connection to `to`; resolves with everything the server wrote before closing. */
async function rawExchange(to: RunningServer, send: (socket: import('node:tls').TLSSocket) => Promise<void>): Promise<string> {
  const socket = await connectTls(to.port, { ca: to.caCertPem! });
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  socket.on('error', () => undefined); // a reset by the server is an allowed outcome
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await send(socket);
  await closed;
  return answer;
}

/** Parses a raw HTTP/1.1 answer (one response, Content-Length framed). */
function parseRaw(raw: string): Reply {
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(raw);
  if (!match) throw new Error(`not an HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`);
  return { status: Number(match[1]), headers: {}, body: raw.slice(raw.indexOf('\r\n\r\n') + 4) };
}

// --- generators ------------------------------------------------------------------------

const PROTO = '__PROTO_KEY__';
/** Keys that touch Object.prototype when code treats JSON as a plain object. */
const hostileKey = fc.constantFrom(PROTO, 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'conf.yml', 'ipam.spidernet.io/iaas-provider', 'nodeName');
const hostileObject = fc.dictionary(fc.oneof(hostileKey, fc.string({ maxLength: 8 })), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });
const hostileJson = (value: unknown) => JSON.stringify(value).replaceAll(`"${PROTO}"`, '"__proto__"');

const poolLike = fc.record(
  {
    apiVersion: fc.constantFrom('spiderpool.spidernet.io/v2beta1', 'v1'),
    kind: fc.constantFrom('SpiderIPPool', 'ConfigMap'),
    metadata: fc.record(
      {
        name: fc.string({ maxLength: 20 }),
        annotations: fc.oneof(hostileObject, fc.constant({ 'ipam.spidernet.io/iaas-provider': 'openstack' }), fc.jsonValue({ maxDepth: 2 })),
      },
      { requiredKeys: [] },
    ),
    spec: fc.record({ nodeName: fc.oneof(fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })) }, { requiredKeys: [] }),
    data: fc.oneof(
      hostileObject,
      fc.record({
        'conf.yml': fc
          .array(
            fc.constantFrom(
              'iaasNetworkProvider:\n',
              '  serverUrl: "http://x"\n',
              '  httpRequestTimeout: ',
              '50s',
              '1e3',
              '"',
              '&a',
              '*a',
              '<<: *a',
              '!!binary',
              '\t',
              '[',
              '{',
              '\n',
            ),
            { maxLength: 8 },
          )
          .map((parts) => parts.join('')),
      }),
    ),
  },
  { requiredKeys: [] },
);

const randomReview = fc.record(
  {
    apiVersion: fc.oneof(
      { weight: 8, arbitrary: fc.constant('admission.k8s.io/v1') },
      fc.constantFrom('admission.k8s.io/v1beta1', ''),
      fc.string({ maxLength: 10 }),
    ),
    kind: fc.oneof({ weight: 8, arbitrary: fc.constant('AdmissionReview') }, fc.string({ maxLength: 10 })),
    request: fc.record(
      {
        uid: fc.oneof({ weight: 4, arbitrary: fc.uuid() }, fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 1 })),
        kind: fc.record({
          group: fc.constantFrom('', 'spiderpool.spidernet.io', 'x'),
          version: fc.constantFrom('v1', 'v2beta1'),
          kind: fc.oneof(fc.constantFrom('SpiderIPPool', 'ConfigMap'), fc.string({ maxLength: 10 })),
        }),
        resource: fc.record({
          group: fc.constantFrom('', 'spiderpool.spidernet.io'),
          version: fc.constantFrom('v1', 'v2beta1'),
          resource: fc.constantFrom('spiderippools', 'configmaps', 'x'),
        }),
        operation: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT') }, fc.string({ maxLength: 8 })),
        name: fc.string({ maxLength: 20 }),
        namespace: fc.constantFrom('kube-system', '', 'default'),
        subResource: fc.constantFrom('', 'status'),
        dryRun: fc.oneof({ weight: 4, arbitrary: fc.boolean() }, fc.jsonValue({ maxDepth: 1 })),
        object: fc.oneof({ weight: 3, arbitrary: poolLike }, fc.jsonValue({ maxDepth: 4 })),
        oldObject: fc.oneof({ weight: 3, arbitrary: poolLike }, fc.jsonValue({ maxDepth: 4 })),
      },
      { requiredKeys: ['uid', 'kind', 'resource', 'operation', 'object'] },
    ),
  },
  { requiredKeys: ['apiVersion', 'kind', 'request'] },
);

/** Byte sequences that are not UTF-8: stray continuation, overlong, surrogate, truncated, 0xFF. */
const invalidUtf8 = fc.constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff], [0xc3, 0x28], [0xf8, 0x88, 0x80, 0x80, 0x80]);

// --- properties --------------------------------------------------------------------------

describe('never a 5xx, every 200 echoes the uid, every refusal a one-line 4xx Status', () => {
  it('random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.uint8Array({ maxLength: 2_000 }), async (path, bytes) => {
        const body = Buffer.from(bytes);
        checkReply(await post(path, body), body);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('random JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 6 }), async (path, value) => {
        const body = JSON.stringify(value);
        expect(checkReply(await post(path, body), body)).not.toBe(200);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('random AdmissionReviews with random objects and __proto__/constructor keys', async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), randomReview, async (path, review) => {
        const body = hostileJson(review);
        statuses.add(checkReply(await post(path, body), body));
      }),
      { numRuns: NUM_RUNS * 2 },
    );
    // The generator must reach the reviewer, not only the decoder's refusals.
    expect(statuses).toEqual(new Set([200, 400]));
  });

  it('invalid UTF-8 inside the strings of a real review', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('uid', 'name', 'conf'), invalidUtf8, async (where, bad) => {
        const review = loadReview('configmap-update-timeout-50s');
        const marker = '@@BAD@@';
        if (where === 'uid') review.request.uid += marker;
        else if (where === 'name') review.request.object.metadata.name += marker;
        else review.request.object.data['conf.yml'] += marker;
        const [head, tail] = JSON.stringify(review).split(marker) as [string, string];
        const body = Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from(tail)]);
        checkReply(await post(WEBHOOKS.configMap.path, body), body);
      }),
      { numRuns: 40 },
    );
  });

  it('wrong content types', async () => {
    const body = JSON.stringify(loadReview('pool-update-node-to-global'));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(
            'text/plain',
            'application/xml',
            'application/json-patch+json',
            'application/jsonx',
            'multipart/form-data; boundary=x',
            'application/json; charset=utf-16',
            'application/json; charset=latin1',
            '',
          ),
          fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
        ),
        async (contentType) => {
          const status = checkReply(await post(WEBHOOKS.spiderIPPool.path, body, contentType), body);
          if (!/^application\/json[ \t]*(;|$)/i.test(contentType)) expect(status).toBe(415);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('shapes that attack the parser', () => {
  it.each([
    ['10 000 nested arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
    ['10 000 nested objects', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
    [
      '10 000 nested arrays as the object of a real review',
      JSON.stringify(loadReview('pool-update-node-to-global')).replace('"object":', `"object":${'['.repeat(10_000)}${']'.repeat(10_000)},"x":`),
    ],
    [
      'a 500 000-element array as spec.nodeName',
      JSON.stringify(loadReview('pool-update-node-to-global')).replace('"nodeName":["worker-1"]', `"nodeName":[${'"n",'.repeat(499_999)}"n"]`),
    ],
    // Wrong element types: decoding stops at the first (src/admission/containers.ts) rather
    // than building a million issues.
    [
      '1 000 000 numbers as spec.nodeName',
      JSON.stringify(loadReview('pool-update-node-to-global')).replace('"nodeName":["worker-1"]', `"nodeName":[${'1,'.repeat(999_999)}1]`),
    ],
    [
      '400 000 annotations',
      JSON.stringify(loadReview('pool-update-node-to-global')).replace(
        '"annotations":{',
        `"annotations":{${Array.from({ length: 400_000 }, (_, i) => `"k${i}":""`).join(',')},`,
      ),
    ],
    [
      '400 000 annotations that are numbers',
      JSON.stringify(loadReview('pool-update-node-to-global')).replace(
        '"annotations":{',
        `"annotations":{${Array.from({ length: 400_000 }, (_, i) => `"k${i}":${i}`).join(',')},`,
      ),
    ],
    ['a body over the limit', `{"a":"${'x'.repeat(MAX_BODY_BYTES)}"}`],
  ])('%s', async (_what, body) => {
    const status = checkReply(await post(WEBHOOKS.spiderIPPool.path, body), body);
    if (Buffer.byteLength(body) > MAX_BODY_BYTES) expect(status).toBe(413);
  });
});

describe('shapes past the JSON bounds, four at once', () => {
  it.each([
    ['3.5 million nested arrays (7 MiB; 489 MiB each once parsed)', '['.repeat(3_670_000) + ']'.repeat(3_670_000), /deeper than 10002 levels/],
    ['2.4 million empty objects (7 MiB)', `[${'{},'.repeat(2_440_000)}{}]`, /more than 1048576 JSON values and keys/],
  ])('%s: refused before JSON.parse, peak RSS up by less than 160 MiB', async (_what, body, message) => {
    const peakKiB = process.resourceUsage().maxRSS;
    const replies = await Promise.all(Array.from({ length: 4 }, () => post(WEBHOOKS.pod.path, body)));
    for (const reply of replies) {
      expect(checkReply(reply, body)).toBe(400);
      expect(JSON.parse(reply.body).message).toMatch(message);
    }
    // A bound, not a measurement: the four bodies and their copies take ~60 MiB; parsed, one took 489.
    expect((process.resourceUsage().maxRSS - peakKiB) / 1024).toBeLessThan(160);
  });
});

describe('the largest valid reviews, many at once', () => {
  it('a valid UPDATE just under MAX_BODY_BYTES is served, also with eight sent together (they wait for room, not 413/429)', async () => {
    const review = loadReview('pool-update-node-to-other-node');
    // Both copies big, as an UPDATE of a pool near etcd's limit carries them.
    const filler = 'x'.repeat(Math.floor((MAX_BODY_BYTES - JSON.stringify(review).length) / 2) - 100);
    review.request.object.status = { ...review.request.object.status, filler };
    review.request.oldObject.status = { ...review.request.oldObject.status, filler };
    const body = JSON.stringify(review);
    expect(Buffer.byteLength(body)).toBeGreaterThan(3 * 1024 * 1024 * 2); // over twice the old 3 MiB limit
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    // Eight connections (not the agent's four): read and parsed two at a time, six wait for room.
    const send = () =>
      httpsRequest({ port: server.port, ca: server.caCertPem!, path: WEBHOOKS.spiderIPPool.path, body, headers: { 'content-type': 'application/json' } });
    const statuses = await Promise.all(Array.from({ length: 8 }, () => send().then((reply) => checkReply(reply, body))));
    expect(statuses).toEqual(Array(8).fill(200));
  });
});

describe('bodies that do not arrive whole', () => {
  const review = JSON.stringify(loadReview('pool-update-node-to-global'));
  /** The product's header and request deadlines (5 s): the stalled senders' subject. The handshake's is not. */
  let strict: RunningServer;
  beforeAll(async () => {
    const timeouts = { handshakeMs: UNHURRIED_TIMEOUTS.handshakeMs! };
    strict = await startServer({ port: 0, host: '127.0.0.1', certDir, generateCerts: true, logger, timeouts });
  });
  afterAll(() => strict?.stop());
  const head = (length: number) =>
    `POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it('truncated: the client closes its side before Content-Length bytes were sent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: review.length - 1 }), async (sent) => {
        const raw = await rawExchange(server, async (socket) => {
          socket.end(head(review.length) + review.slice(0, sent));
        });
        // Either no answer (the connection is gone) or a 4xx Status.
        if (raw !== '') checkReply(parseRaw(raw), review);
      }),
      { numRuns: 30 },
    );
  });

  it('truncated chunked encoding', async () => {
    const raw = await rawExchange(server, async (socket) => {
      socket.end(
        `POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n${review.slice(0, 50)}`,
      );
    });
    if (raw !== '') checkReply(parseRaw(raw), review);
  });

  it('a slow sender that finishes in time is served', async () => {
    const raw = await rawExchange(server, async (socket) => {
      socket.write(head(review.length));
      for (let i = 0; i < review.length; i += 100) {
        socket.write(review.slice(i, i + 100));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      socket.end();
    });
    expect(checkReply(parseRaw(raw), review)).toBe(200);
  });

  it('a refusal written before the body is read closes the connection: one answer, no stray 408 for the unread bytes', async () => {
    const raw = await rawExchange(strict, async (socket) => {
      socket.write(head(review.length).replace('application/json', 'text/plain') + review.slice(0, 10));
    });
    expect(checkReply(parseRaw(raw), review)).toBe(415);
    expect(raw).toMatch(/\r\nConnection: close\r\n/i);
    expect(raw.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
  });

  it.each([
    ['the body', (length: number) => head(length) + review.slice(0, 10)],
    ['the headers', () => `POST ${WEBHOOKS.spiderIPPool.path} HTTP/1.1\r\nHost: localhost\r\n`],
  ])('a sender that stalls in %s gets 408 and its connection closed', async (_what, partial) => {
    const raw = await rawExchange(strict, async (socket) => {
      socket.write(partial(review.length));
    });
    expect(checkReply(parseRaw(raw), review)).toBe(408);
  });
});

describe('after all of it', () => {
  it('still serves, logged no internal error, and memory stayed bounded', async () => {
    const body = JSON.stringify(loadReview('pool-update-node-to-global'));
    expect(checkReply(await post(WEBHOOKS.spiderIPPool.path, body), body)).toBe(200);
    expect(errors.filter((line) => line.includes('internal error'))).toEqual([]);
    // A bound, not a measurement: a leak of the bodies sent above (hundreds of MiB) would cross it.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(384 * 1024 * 1024);
  });
});
