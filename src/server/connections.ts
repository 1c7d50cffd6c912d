/**
 * Applies the connection table (connection-table.ts) to an HTTPS server: every accepted
 * socket is admitted, refused or given the slot of an evicted one before any byte of it is
 * read; the TLS handshake has a deadline from the TCP accept (plain-HTTP detection
 * included); requests move a connection between idle and active. Counts go to the
 * connection metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { WebhookMetrics } from '../metrics/webhook.js';
import { ConnectionTable, EVICTION_REASONS, REJECTION_REASONS, type ConnectionLimits } from './connection-table.js';

export interface ConnectionGuardOptions extends ConnectionLimits {
  /** From the TCP accept to a finished TLS handshake, in milliseconds; then the connection is closed. */
  handshakeMs: number;
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
    const admission = table.admit(socket, address);
    if (!admission.admitted) {
      metrics.connectionRejectionsTotal.inc({ reason: admission.reason });
      logger.debug({ remoteAddress: address, reason: admission.reason }, 'connection refused on arrival');
      return void socket.destroy();
    }
    if (admission.evicted !== undefined) {
      metrics.connectionEvictionsTotal.inc({ reason: admission.evicted.reason });
      logger.debug({ remoteAddress: admission.evicted.connection.remoteAddress, reason: admission.evicted.reason }, 'connection closed for a newcomer');
      admission.evicted.connection.destroy();
    }
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
    table.requestStarted(socket);
    if (stopping) res.setHeader('Connection', 'close');
    answering.add(res);
    res.once('close', () => {
      answering.delete(res);
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
