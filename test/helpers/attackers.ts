/**
 * Hostile clients of the webhook's port, as a neighbour pod could run them: connections
 * that send nothing, TLS connections that send no request, TLS ClientHellos trickled a
 * byte at a time, connections opened and closed as fast as the machine allows,
 * reviews that declare the largest body and trickle it, and large valid reviews sent whole
 * in a loop.
 *
 * Node builtins only: attacker-process.ts transpiles this file as it is and runs
 * `runPlan` in a process of its own (on loopback for test/server/fairness.test.ts, in the
 * cluster test's attacker pod), so that the attack does not share the server's event
 * loop. Every attack runs until `stop()` (a plan until its `durationMs`); none sends to
 * any other address than the one it is given.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface AttackTarget {
  host: string;
  port: number;
  /** Local addresses to connect from (loopback aliases in tests); the default route's when empty. */
  sources: readonly string[];
}

export interface AttackStats {
  /** Connections tried (TCP connects started). */
  attempted: number;
  /** Connections opened (TCP established). */
  opened: number;
  /** Open now. */
  held: number;
  /** The most open at once. */
  maxHeld: number;
  /** Closed by the server (any close the attack did not start). */
  closedByServer: number;
  /** Connection attempts that never established (refused, reset, unreachable, timed out). */
  failed: number;
}

export interface Attack {
  stats(): AttackStats;
  /** Closes every connection and stops opening new ones. */
  stop(): Promise<void>;
}

interface Connector {
  target: AttackTarget;
  /** Connections to keep open per source; a closed one is reopened after `reopenMs`. */
  perSource: number;
  reopenMs: number;
  /** What to do with a new connection (write to it, or `close` it) and return a cleanup. */
  onConnect: (socket: net.Socket, close: () => void) => () => void;
}

/** Keeps `perSource` connections open from each source, reopening each one the server closes. */
function keepOpen({ target, perSource, reopenMs, onConnect }: Connector): Attack {
  const stats: AttackStats = { attempted: 0, opened: 0, held: 0, maxHeld: 0, closedByServer: 0, failed: 0 };
  /** Every socket not yet closed, connecting ones included (a dropped SYN keeps one pending for minutes). */
  const sockets = new Set<net.Socket>();
  let stopped = false;
  const openOne = (source: string | undefined) => {
    if (stopped) return;
    const socket = net.connect({ host: target.host, port: target.port, ...(source === undefined ? {} : { localAddress: source }) });
    stats.attempted++;
    sockets.add(socket);
    let cleanup: (() => void) | undefined;
    let established = false;
    let closedByUs = false;
    socket.on('error', () => undefined); // a reset is the server's answer here
    socket.once('connect', () => {
      established = true;
      stats.opened++;
      stats.held++;
      stats.maxHeld = Math.max(stats.maxHeld, stats.held);
      cleanup = onConnect(socket, () => {
        closedByUs = true;
        socket.destroy();
      });
    });
    socket.once('close', () => {
      cleanup?.();
      sockets.delete(socket);
      if (established) stats.held--;
      if (stopped) return;
      if (established && !closedByUs) stats.closedByServer++;
      if (!established) stats.failed++;
      setTimeout(() => openOne(source), reopenMs).unref();
    });
  };
  const sources = target.sources.length === 0 ? [undefined] : target.sources;
  for (const source of sources) for (let i = 0; i < perSource; i++) openOne(source);
  return {
    stats: () => ({ ...stats }),
    stop: async () => {
      stopped = true;
      const closing = [...sockets].map((s) => new Promise<void>((resolve) => s.once('close', () => resolve())));
      for (const s of sockets) s.destroy();
      await Promise.all(closing);
    },
  };
}

/** Connections that send nothing at all. */
export function holdIdle(target: AttackTarget, perSource: number, reopenMs = 50): Attack {
  return keepOpen({ target, perSource, reopenMs, onConnect: () => () => undefined });
}

/** Connections that each send `clientHello` one byte every `byteEveryMs`. */
export function trickleClientHello(target: AttackTarget, perSource: number, clientHello: Buffer, byteEveryMs = 1000, reopenMs = 50): Attack {
  return keepOpen({
    target,
    perSource,
    reopenMs,
    onConnect: (socket) => {
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < clientHello.length) socket.write(clientHello.subarray(sent, ++sent));
      }, byteEveryMs);
      return () => clearInterval(timer);
    },
  });
}

/** A TLS client over `socket` that checks no certificate and ignores errors (a reset is the server's answer). */
function tlsOver(socket: net.Socket, servername: string): tls.TLSSocket {
  const secure = tls.connect({ socket, servername, rejectUnauthorized: false });
  secure.on('error', () => undefined);
  return secure;
}

/** Keeps TLS connections open (see {@link keepOpen}), each handed to `onSecure` once its handshake is done. */
function keepTlsOpen(target: AttackTarget, perSource: number, servername: string, reopenMs: number, onSecure: (secure: tls.TLSSocket) => void): Attack {
  return keepOpen({
    target,
    perSource,
    reopenMs,
    onConnect: (socket) => {
      const secure = tlsOver(socket, servername);
      secure.once('secureConnect', () => onSecure(secure));
      return () => secure.destroy();
    },
  });
}

/** Connections that finish a TLS handshake (certificate unchecked) and send no request. */
export function holdTlsIdle(target: AttackTarget, perSource: number, servername: string, reopenMs = 50): Attack {
  return keepTlsOpen(target, perSource, servername, reopenMs, () => undefined);
}

/** What a slow body is sent to: a review path and the `Content-Length` declared. */
export interface SlowBody {
  path: string;
  declaredBytes: number;
}

/**
 * TLS connections that each send a review's headers declaring `body.declaredBytes` and then
 * one byte of the body every `byteEveryMs`: the declared size is what the server sets
 * aside for the body.
 */
export function trickleBody(target: AttackTarget, perSource: number, servername: string, body: SlowBody, byteEveryMs = 500, reopenMs = 50): Attack {
  return keepOpen({
    target,
    perSource,
    reopenMs,
    onConnect: (socket) => {
      const secure = tlsOver(socket, servername);
      let timer: NodeJS.Timeout | undefined;
      secure.once('secureConnect', () => {
        secure.write(`POST ${body.path} HTTP/1.1\r\nHost: ${servername}\r\nContent-Type: application/json\r\nContent-Length: ${body.declaredBytes}\r\n\r\n{`);
        timer = setInterval(() => secure.write(' '), byteEveryMs);
      });
      return () => {
        clearInterval(timer);
        secure.destroy();
      };
    },
  });
}

/** A large body: `review` (an AdmissionReview of a SpiderIPPool) grown to about `bytes`, posted whole to `path`. */
export interface LargeBody {
  path: string;
  review: { request: { object: { spec: Record<string, unknown> }; oldObject?: { spec: Record<string, unknown> } } };
  bytes: number;
}

/**
 * `body.review` grown to about `body.bytes` by `spec.filler` in its object and old object:
 * distinct 5-letter strings, 8 bytes a token, near the densest the JSON shape bounds let through
 * at 7 MiB (the most parse work per byte); an unknown field, which the webhook tolerates.
 */
export function largeReviewBody(body: LargeBody): Buffer {
  const { request } = body.review;
  const copies = request.oldObject === undefined ? 1 : 2;
  const count = Math.floor((body.bytes - JSON.stringify(body.review).length) / copies / 8) - 8;
  const filler = Array.from({ length: count }, (_, i) => i.toString(36).padStart(5, 'a').slice(-5));
  const grown = (object: { spec: Record<string, unknown> }) => ({ ...object, spec: { ...object.spec, filler } });
  const review = { ...body.review, request: { ...request, object: grown(request.object) } };
  if (request.oldObject !== undefined) review.request.oldObject = grown(request.oldObject);
  return Buffer.from(JSON.stringify(review));
}

/**
 * TLS connections that each post `body` whole (as the API server writes a review) with
 * `Connection: close`; the server answers and closes, and the connection is reopened.
 */
export function floodBodies(target: AttackTarget, perSource: number, servername: string, body: LargeBody, reopenMs = 0): Attack {
  const bytes = largeReviewBody(body);
  const head = `POST ${body.path} HTTP/1.1\r\nHost: ${servername}\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`;
  const request = Buffer.concat([Buffer.from(head), bytes]);
  return keepTlsOpen(target, perSource, servername, reopenMs, (secure) => {
    secure.resume(); // the answer is not read
    writeDraining(secure, request);
  });
}

/**
 * Writes `bytes` to `stream` a slice at a time as it drains, then ends it: as fast as the
 * reader reads, holding no copy per connection (TLS would buffer the whole request encrypted).
 */
function writeDraining(stream: tls.TLSSocket, bytes: Buffer, sliceBytes = 64 * 1024): void {
  let at = 0;
  const more = () => {
    while (at < bytes.length) {
      const slice = bytes.subarray(at, (at += sliceBytes));
      if (!stream.write(slice)) return void stream.once('drain', more);
    }
    stream.end();
  };
  more();
}

/** `concurrency` loops per source, each opening a connection and closing it as soon as it is established. */
export function churn(target: AttackTarget, concurrency: number): Attack {
  return keepOpen({ target, perSource: concurrency, reopenMs: 0, onConnect: (_socket, close) => (close(), () => undefined) });
}

/** The first bytes a TLS client sends: a real ClientHello for `servername` (captured from Node's own client). */
export function captureClientHello(servername: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
        server.close();
      });
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }).on('error', () => undefined);
    });
  });
}

export type AttackKind = 'idle' | 'tls-idle' | 'trickle' | 'churn' | 'slow-body' | 'large-body';

/** What an attacker process runs: attacks side by side for `durationMs`. */
export interface AttackPlan extends AttackTarget {
  /** The name in the server's certificate (SNI of the ClientHellos). */
  servername: string;
  durationMs: number;
  /** `perSource`: connections per source (loops, for `churn`); `reopenMs`: the wait before reopening one the server closed (50 ms when absent). */
  attacks: { kind: AttackKind; perSource: number; reopenMs?: number }[];
  /** Where `slow-body` attacks send (required for them). */
  slowBody?: SlowBody;
  /** What `large-body` attacks send (required for them). */
  largeBody?: LargeBody;
  /** How often a stats line is printed, in milliseconds. */
  reportEveryMs: number;
}

/** One stats line of `runPlan`: per attack kind; `final` on the last. */
export interface PlanReport {
  atMs: number;
  final: boolean;
  stats: Partial<Record<AttackKind, AttackStats>>;
}

/** `plan[key]`, required by the attack `kind`. */
function bodyOf<K extends 'slowBody' | 'largeBody'>(plan: AttackPlan, key: K, kind: AttackKind): NonNullable<AttackPlan[K]> {
  const body = plan[key];
  if (body === undefined) throw new Error(`a ${kind} attack needs plan.${key}`);
  return body!;
}

/**
 * Runs `plan`, printing a `PlanReport` as one JSON line every `reportEveryMs` and at the
 * end (after `durationMs`, or on SIGTERM), then resolves.
 */
export async function runPlan(plan: AttackPlan, print: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const started = Date.now();
  const clientHello = plan.attacks.some((a) => a.kind === 'trickle') ? await captureClientHello(plan.servername) : Buffer.alloc(0);
  const running = plan.attacks.map(({ kind, perSource, reopenMs = 50 }) => {
    const attack =
      kind === 'idle'
        ? holdIdle(plan, perSource, reopenMs)
        : kind === 'tls-idle'
          ? holdTlsIdle(plan, perSource, plan.servername, reopenMs)
          : kind === 'trickle'
            ? trickleClientHello(plan, perSource, clientHello, 1000, reopenMs)
            : kind === 'slow-body'
              ? trickleBody(plan, perSource, plan.servername, bodyOf(plan, 'slowBody', kind), 500, reopenMs)
              : kind === 'large-body'
                ? floodBodies(plan, perSource, plan.servername, bodyOf(plan, 'largeBody', kind), reopenMs)
                : churn(plan, perSource);
    return { kind, attack };
  });
  const report = (final: boolean) => {
    const stats: PlanReport['stats'] = {};
    for (const { kind, attack } of running) stats[kind] = attack.stats();
    print(JSON.stringify({ atMs: Date.now() - started, final, stats } satisfies PlanReport));
  };
  const ticker = setInterval(() => report(false), plan.reportEveryMs);
  await new Promise<void>((resolve) => {
    const end = setTimeout(resolve, plan.durationMs);
    process.once('SIGTERM', () => {
      clearTimeout(end);
      resolve();
    });
  });
  clearInterval(ticker);
  report(true);
  await Promise.all(running.map(({ attack }) => attack.stop()));
}
