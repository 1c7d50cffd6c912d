/**
 * Starts the HTTPS server around the express adapter: certificates, TLS settings,
 * timeouts, readiness, and a graceful stop.
 */
import { STATUS_CODES } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { createReviewer, type ReviewOptions } from '../admission/review.js';
import { loadOrCreateCertificates, readServingCertificates } from '../certs/files.js';
import { DEFAULT_NAMESPACE, DEFAULT_SERVICE_NAME } from '../defaults.js';
import { createApp, statusBody } from './app.js';

export interface ServeOptions {
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  /** Address to bind; all interfaces when absent, as a Pod needs. */
  host?: string;
  /** Directory holding `tls.crt` and `tls.key` (the Kubernetes TLS Secret layout). */
  certDir: string;
  /** Generate a CA and serving certificate into `certDir` when none are there (local use). */
  generateCerts: boolean;
  review?: ReviewOptions;
  /** Whether the SpiderIPPool cache behind `review.pools` has synced, for `/readyz`. */
  poolCacheSynced?: () => boolean;
  logger: Logger;
  /** How long a stop waits for in-flight reviews, in milliseconds. */
  shutdownGraceMs?: number;
}

export interface RunningServer {
  /** The port listened on (the chosen one when `port` was 0). */
  port: number;
  /** The CA that signed the serving certificate, when known (generated or `ca.crt`). */
  caCertPem?: string;
  /** Stops accepting, lets in-flight reviews finish (bounded by the grace period), then resolves. */
  stop(): Promise<void>;
}

/**
 * Slow clients may not hold sockets for long: the kube-apiserver sends a review at once
 * and gives up after the webhook's `timeoutSeconds` (at most 30s).
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
/** How often Node enforces the two timeouts above (its default, 30s, lets them slip). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/**
 * Answers HTTP that Node cannot parse (bad framing, oversized headers, timeouts) with a
 * Kubernetes `Status` body like every other refusal, instead of Node's bare status line.
 */
function answerMalformedHttp(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
  const [code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request was not received in time']
        : [400, 'request is not well-formed HTTP/1.1'];
  const body = JSON.stringify(statusBody(code, message));
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Loads (or, with `generateCerts`, creates) the certificates and serves the webhook over
 * HTTPS (TLS 1.2 or newer).
 *
 * @throws Error when the certificates are missing or unreadable (and not to be generated)
 *   or when the port cannot be bound.
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const { logger } = options;
  const certs = options.generateCerts
    ? await loadOrCreateCertificates(options.certDir, {
        serviceName: DEFAULT_SERVICE_NAME,
        namespace: DEFAULT_NAMESPACE,
        extraDnsNames: ['localhost'],
        extraIpAddresses: ['127.0.0.1', '::1'],
      })
    : { ...(await readServingCertificates(options.certDir)), created: false };
  if (certs.created) logger.info({ certDir: options.certDir }, 'generated a CA and a serving certificate');

  let ready = false;
  const app = createApp({
    review: createReviewer(options.review),
    logger,
    isReady: () => ready,
    ...(options.poolCacheSynced ? { poolCacheSynced: options.poolCacheSynced } : {}),
  });
  const server = https.createServer(
    {
      cert: certs.certPem,
      key: certs.keyPem,
      minVersion: 'TLSv1.2',
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    app,
  );
  server.on('tlsClientError', (err) => logger.debug({ err: err.message }, 'TLS handshake failed'));
  server.on('clientError', answerMalformedHttp);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  ready = true;
  logger.info({ port, certDir: options.certDir }, 'serving admission reviews over HTTPS');

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      ready = false;
      const grace = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
      grace.unref();
      server.close(() => {
        clearTimeout(grace);
        resolve();
      });
      server.closeIdleConnections();
    });
    return stopping;
  };
  return { port, ...(certs.caCertPem ? { caCertPem: certs.caCertPem } : {}), stop };
}
