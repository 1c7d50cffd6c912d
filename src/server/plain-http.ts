/**
 * A plain `http://` request sent to the HTTPS port gets an HTTP answer that says to use
 * HTTPS, as Go's net/http answers "Client sent an HTTP request to an HTTPS server.",
 * instead of a TLS alert that curl or a browser shows as an empty reply or a reset.
 *
 * The first chunk of every connection is read before TLS sees it: a TLS record (every
 * ClientHello starts with the handshake content type 0x16, RFC 8446 section 5.1) and anything else that is not
 * an HTTP method are put back and handed to the TLS server's own connection listener
 * (Node's TLSSocket takes over the bytes already read); a chunk starting with an ASCII
 * capital letter (GET, POST, …) is answered with 400 and a Kubernetes `Status`, and the
 * connection closed. Node's `https.Server` has no other hook: by `tlsClientError` the
 * handshake has failed and the socket is gone.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import { statusBody } from './status.js';

/** How long the answered connection is drained (so that closing it sends no reset), in milliseconds. */
const DRAIN_MS = 1000;

export const PLAIN_HTTP_MESSAGE = 'this port serves HTTPS only, and the request was plain HTTP: use https:// instead of http://';

/** An HTTP/1.x request line starts with a method: capital ASCII letters. */
function looksLikeHttp(firstByte: number): boolean {
  return firstByte >= 0x41 && firstByte <= 0x5a;
}

function answerHint(socket: Socket): void {
  const body = JSON.stringify(statusBody(400, PLAIN_HTTP_MESSAGE));
  socket.end(
    `HTTP/1.1 400 ${STATUS_CODES[400]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // Read and drop what the client still sends (a request body): closing a socket with
  // unread data makes the kernel send a reset, which can cut the answer off.
  socket.resume();
  setTimeout(() => socket.destroy(), DRAIN_MS).unref();
}

/**
 * Puts the first-chunk check in front of `server`'s TLS connection listener. Call once,
 * before `listen`. A connection that sends nothing is left to the handshake deadline
 * (connections.ts), which runs from the TCP accept.
 */
export function answerPlainHttpWithHint(server: TlsServer, options: { logger: Logger }): void {
  const tlsListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // Until TLS takes the socket, a reset by the client is only the end of it.
    const onError = () => socket.destroy();
    socket.on('error', onError);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      if (looksLikeHttp(chunk[0]!)) {
        options.logger.debug({ remoteAddress: socket.remoteAddress }, 'plain HTTP on the HTTPS port; answered with a hint to use HTTPS');
        return answerHint(socket);
      }
      socket.off('error', onError);
      socket.unshift(chunk);
      for (const listener of tlsListeners) listener.call(server, socket);
    });
  });
}
