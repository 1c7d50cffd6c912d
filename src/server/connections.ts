/**
 * Applies the connection table (connection-table.ts) to an HTTPS server: every accepted
 * socket is admitted, refused or given the slot of an evicted one before any byte of it is
 * read; the TLS handshake has a deadline from the TCP accept (plain-HTTP detection
 * included); requests move a connection between idle and active, and one whose request
 * lags (its body trickles) gives way like an idle one. Counts go to the connection metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { WebhookMetrics } from './metrics.js';
import { MIN_BODY_BYTES_PER_MS } from './body-budget.js';
import { ConnectionTable, EVICTION_REASONS, REJECTION_REASONS, type ConnectionLimits, type Eviction } from './connection-table.js';

export interface ConnectionGuardOptions extends ConnectionLimits {
  /** From the TCP accept to a finished TLS handshake, in milliseconds; then the connection is closed. */
  handshakeMs: number;
  /** How long a request may be in flight, not yet whole, before its rate is judged (`ServerTimeouts.bodyStallMs`), in milliseconds. */
  stallMs: number;
  metrics: Pick<WebhookMetrics, 'connections' | 'connectionEvictionsTotal' | 'connectionRejectionsTotal'>;
  logger: Logger;
}

export interface ConnectionGuard {
  /**
   * For a stop: every answer not yet started says `Connection: close` (so no client reuses
   * a connection about to go, and Node closes each once its answer is out), and the
   * connections that have not sent a byte yet are closed.
   */
  closeAfterAnswers(): void;
}

/**
 * Puts the guard in front of `server`'s connection listeners (call once, after every
 * other `connection` listener is in place and before `listen`).
 */
export function guardConnections(server: HttpsServer, options: ConnectionGuardOptions): ConnectionGuard {
  const { metrics, logger } = options;
  const table = new ConnectionTable<Socket>(options);
  /** The accepted socket under each TLS socket, for the requests that arrive on it. */
  const accepted = new WeakMap<TLSSocket, Socket>();
  /** The handshaking sockets by peer (`address port`): a TLS socket has the peer of the socket it reads from. */
  const byPeer = new Map<string, Socket>();
  const answering = new Set<ServerResponse>();
  /** Per socket with a request in flight: the request, when it began (`performance.now()`) and the bytes read then. */
  const progress = new WeakMap<Socket, { req: IncomingMessage; sinceMs: number; bytesThen: number }>();
  /**
   * Read less than it should for its age: a request not yet received whole, in flight
   * `stallMs` or longer, whose bytes since came slower than `MIN_BODY_BYTES_PER_MS`
   * (the API server writes a review at once: it is whole at once, or waits unread for room).
   */
  const lagging = (socket: Socket): boolean => {
    const since = progress.get(socket);
    if (since === undefined || since.req.complete) return false;
    const ageMs = performance.now() - since.sinceMs;
    return ageMs >= options.stallMs && socket.bytesRead - since.bytesThen < MIN_BODY_BYTES_PER_MS * ageMs;
  };
  /** A request in flight not yet received whole, at any age. */
  const incomplete = (socket: Socket): boolean => progress.get(socket)?.req.complete === false;
  const evict = (evicted: Eviction<Socket>) => {
    metrics.connectionEvictionsTotal.inc({ reason: evicted.reason });
    logger.debug({ remoteAddress: evicted.connection.remoteAddress, reason: evicted.reason }, 'connection closed for a newcomer');
    evicted.connection.destroy();
  };
  let stopping = false;
  // Every reason from the start, so that increase() sees the first one after a restart.
  for (const reason of EVICTION_REASONS) metrics.connectionEvictionsTotal.inc({ reason }, 0);
  for (const reason of REJECTION_REASONS) metrics.connectionRejectionsTotal.inc({ reason }, 0);
  metrics.connections.readFrom(() => table.counts());

  const next = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return void socket.destroy(); // already gone
    const admission = table.admit(socket, address, lagging, incomplete);
    if (!admission.admitted) {
      metrics.connectionRejectionsTotal.inc({ reason: admission.reason });
      logger.debug({ remoteAddress: address, reason: admission.reason }, 'connection refused on arrival');
      return void socket.destroy();
    }
    if (admission.evicted !== undefined) evict(admission.evicted);
    const peer = `${address} ${socket.remotePort}`;
    byPeer.set(peer, socket);
    const deadline = setTimeout(() => {
      if (table.state(socket) !== 'handshaking') return;
      table.remove(socket);
      metrics.connectionEvictionsTotal.inc({ reason: 'handshake_timeout' });
      socket.destroy();
    }, options.handshakeMs);
    deadline.unref();
    socket.once('close', () => {
      clearTimeout(deadline);
      byPeer.delete(peer);
      table.remove(socket);
    });
    for (const listener of next) listener.call(server, socket);
  });

  server.on('secureConnection', (tlsSocket: TLSSocket) => {
    const peer = `${tlsSocket.remoteAddress} ${tlsSocket.remotePort}`;
    const socket = byPeer.get(peer);
    if (socket === undefined) return;
    byPeer.delete(peer);
    accepted.set(tlsSocket, socket);
    table.secured(socket);
  });

  // Before the app's listener, which may answer at once.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = accepted.get(req.socket as TLSSocket);
    if (socket === undefined) return;
    progress.set(socket, { req, sinceMs: performance.now(), bytesThen: socket.bytesRead });
    const evicted = table.requestStarted(socket, lagging);
    if (evicted !== undefined) evict(evicted);
    if (stopping) res.setHeader('Connection', 'close');
    answering.add(res);
    res.once('close', () => {
      answering.delete(res);
      progress.delete(socket);
      table.requestEnded(socket);
    });
  });

  return {
    closeAfterAnswers: () => {
      stopping = true;
      for (const res of answering) if (!res.headersSent) res.setHeader('Connection', 'close');
      // A handshake under way is left to finish (or to its deadline): its client may
      // already count the connection as open and have sent a request on it.
      for (const socket of table.inState('handshaking')) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}
