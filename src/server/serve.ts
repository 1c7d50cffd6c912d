/**
 * Starts the HTTPS server around the request listener (app.ts): certificates and their hot reload,
 * TLS settings, timeouts, the connection cap, readiness, metrics, and a graceful stop.
 */
import { STATUS_CODES, type RequestListener } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContextOptions } from 'node:tls';
import type { Logger } from 'pino';
import { createPathReviewer, createReviewer, dualStackSource, NO_CLUSTER_REASON, type ReviewOptions } from '../rules/registry.js';
import { loadOrCreateCertificates, MissingCertificateError } from '../certs/files.js';
import {
  certificateValidityProblem,
  readTlsMaterial,
  watchCertificates,
  type CertificateReloader,
  type ServedCertificate,
  type TlsMaterial,
} from '../certs/reload.js';
import { DEFAULT_NAMESPACE, DEFAULT_SERVICE_NAME, WEBHOOK_SERVED_PATHS } from '../defaults.js';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.js';
import { PoolIndex } from '../store/pool-index.js';
import type { PoolDirectory } from '../rules/pool-pair.js';
import { createApp, type AppOptions } from './app.js';
import { defaultMaxActivePerAddress, defaultMaxPerAddress } from './connection-table.js';
import { guardConnections, type ConnectionGuard } from './connections.js';
import { answerPlainHttpWithHint } from './plain-http.js';
import { readinessReport, type ReadinessCheck } from '../kubernetes/healthz.js';
import { statusBody } from './status.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_SHUTDOWN_GRACE_MS, DEFAULT_TIMEOUTS, type ServerTimeouts } from './limits.js';
import { TLS_CIPHERS, TLS_MIN_VERSION } from './tls-ciphers.js';
import { WARN_ONLY_PATHS, WarnOnlyReviews, type WarnOnlyOptions } from './warn-only-reviews.js';

/** How often the certificate files are re-read even without a watch event. */
const DEFAULT_CERT_RELOAD_INTERVAL_MS = 10_000;
/** How often Node enforces the header and request timeouts (its default, 30 s, lets them slip). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

export interface ServeOptions {
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  /** Address to bind; all interfaces when absent, as a Pod needs. */
  host?: string;
  /** Directory holding `tls.crt` and `tls.key` (the Kubernetes TLS Secret layout); watched for new pairs. */
  certDir: string;
  /** Generate a CA and serving certificate into `certDir` when none are there (local use). */
  generateCerts: boolean;
  /**
   * PEM CAs to verify the API server's client certificate against, on the webhook paths
   * only (kubelet probes and Prometheus present none). Unverified when absent.
   */
  clientCaFile?: string;
  review?: ReviewOptions;
  logger: Logger;
  /** How long a stop waits for in-flight reviews, in milliseconds. */
  shutdownGraceMs?: number;
  /** Cap on open connections; at it, a newcomer takes the slot of a handshaking or idle one. */
  maxConnections?: number;
  /** Handshaking and idle connections one client address may hold (default: `defaultMaxPerAddress(maxConnections)`); busy ones are not counted. */
  maxConnectionsPerAddress?: number;
  timeouts?: Partial<ServerTimeouts>;
  certReloadIntervalMs?: number;
  /** More `/readyz` checks, after the server's own. */
  readinessChecks?: readonly ReadinessCheck[];
  /** Where metrics are recorded; a new registry when absent. */
  metrics?: WebhookMetrics;
  /** Told of every new content of the certificate directory put into service (a renewal, a new `ca.crt`). */
  onCertificateReloaded?: (cert: ServedCertificate) => void;
  /**
   * Review the warn-only webhooks in a worker thread (`serve` does; warn-only-reviews.ts),
   * its module and limits as given; in-process when absent. The worker mirrors
   * `review.pools` when it is a `PoolIndex`; any other directory it sees as unavailable.
   */
  isolateWarnOnly?: Pick<WarnOnlyOptions, 'entry' | 'limits'>;
}

export interface RunningServer {
  /** The port listened on (the chosen one when `port` was 0). */
  port: number;
  /** The CA that signed the serving certificate, when known (generated or `ca.crt`). */
  caCertPem?: string;
  metrics: WebhookMetrics;
  /** Every `/readyz` check passes (informational ones aside), as the kubelet's probe would find. */
  ready(): boolean;
  /**
   * Turns `/readyz` unready, stops accepting connections, closes idle keep-alive ones, lets
   * in-flight requests finish (then closes their connections) and resolves; connections
   * still busy after the grace period are cut. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Answers HTTP that Node cannot parse (bad framing, oversized headers, timeouts) with a
 * Kubernetes `Status` body like every other refusal, instead of Node's bare status line.
 */
function answerMalformedHttp(err: NodeJS.ErrnoException, socket: Duplex): void {
  // https.Server re-emits TLS failures (a handshake timeout, a bad ClientHello) here: with
  // no finished handshake nothing can be written back, and ending the socket politely
  // would wait for a handshake that never comes. Only HTTP parser failures get an answer.
  const isHttpError = err.code?.startsWith('HPE_') === true || err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  if (!isHttpError || !socket.writable) return void socket.destroy();
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
 * Everything of the TLS context, every time: `server.setSecureContext` resets any option
 * it is not given, so a reload must repeat the version floor and the cipher list.
 */
function secureContextOptions(material: TlsMaterial): SecureContextOptions {
  return {
    cert: material.certPem,
    key: material.keyPem,
    minVersion: TLS_MIN_VERSION,
    ciphers: TLS_CIPHERS,
    ...(material.clientCaPem === undefined ? {} : { ca: material.clientCaPem }),
  };
}

async function loadInitialCertificates(options: ServeOptions): Promise<{ served: ServedCertificate; created: boolean }> {
  const created = options.generateCerts
    ? (
        await loadOrCreateCertificates(options.certDir, {
          serviceName: DEFAULT_SERVICE_NAME,
          namespace: DEFAULT_NAMESPACE,
          extraDnsNames: ['localhost'],
          extraIpAddresses: ['127.0.0.1', '::1'],
        })
      ).created
    : false;
  try {
    return { served: await readTlsMaterial(options), created };
  } catch (err) {
    if (!(err instanceof MissingCertificateError)) throw err;
    // Only without generateCerts: generating leaves no pair missing.
    throw new Error(
      `${err.message} (--no-generate-certs): write them with the certs command (node dist/cli/main.js certs --out ${err.dir}), ` +
        'mount the TLS Secret there, or leave out --no-generate-certs to generate a self-signed pair',
    );
  }
}

/** The HTTPS server around `app` with the TLS settings, the timeouts and the connection guard. */
function createHttpsServer(
  options: ServeOptions,
  timeouts: ServerTimeouts,
  app: RequestListener,
  material: TlsMaterial,
  metrics: WebhookMetrics,
): { server: https.Server; guard: ConnectionGuard } {
  const server = https.createServer(
    {
      ...secureContextOptions(material),
      // Asked for on every connection, checked per path by the app: kubelet probes send none.
      requestCert: options.clientCaFile !== undefined,
      rejectUnauthorized: false,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    app,
  );
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.on('tlsClientError', (err) => options.logger.debug({ err: err.message }, 'TLS handshake failed'));
  server.on('clientError', answerMalformedHttp);
  answerPlainHttpWithHint(server, { logger: options.logger });
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const guard = guardConnections(server, {
    maxConnections,
    maxPerAddress: options.maxConnectionsPerAddress ?? defaultMaxPerAddress(maxConnections),
    maxActivePerAddress: defaultMaxActivePerAddress(maxConnections),
    handshakeMs: timeouts.handshakeMs,
    stallMs: timeouts.bodyStallMs,
    metrics,
    logger: options.logger,
  });
  return { server, guard };
}

/** Watches the certificate files and applies a new pair to `server`, logging and counting each reload. */
function reloadCertificates(options: ServeOptions, server: https.Server, served: ServedCertificate, metrics: WebhookMetrics): CertificateReloader {
  const { logger, certDir } = options;
  metrics.certificateExpirationSeconds.set(served.validTo.getTime() / 1000);
  const reloader = watchCertificates({
    certDir,
    ...(options.clientCaFile === undefined ? {} : { clientCaFile: options.clientCaFile }),
    initial: served,
    intervalMs: options.certReloadIntervalMs ?? DEFAULT_CERT_RELOAD_INTERVAL_MS,
    apply: (cert) => server.setSecureContext(secureContextOptions(cert.material)),
    onReloaded: (cert) => {
      metrics.certificateReloadsTotal.inc({ result: 'success' });
      metrics.certificateExpirationSeconds.set(cert.validTo.getTime() / 1000);
      logger.info({ certDir, ...describe(cert) }, 'serving a new certificate');
      options.onCertificateReloaded?.(cert);
    },
    onFailure: (err) => {
      metrics.certificateReloadsTotal.inc({ result: 'failure' });
      logger.error({ certDir, err: err.message, ...describe(reloader.current()) }, 'new certificate refused; still serving the old one');
    },
  });
  return reloader;
}

const describe = (cert: ServedCertificate) => ({ serialNumber: cert.serialNumber, validTo: cert.validTo.toISOString() });

function listen(server: https.Server, port: number, host: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The reviewers of `createApp`: with a warn-only worker, the main thread's judges the refusing webhooks' kinds alone. */
function reviewers(review: ReviewOptions | undefined, warnOnly: WarnOnlyReviews | undefined): Pick<AppOptions, 'review' | 'isolated'> {
  if (warnOnly === undefined) return { review: createReviewer(review) };
  const refusing = WEBHOOK_SERVED_PATHS.filter((path) => !WARN_ONLY_PATHS.includes(path));
  return { review: createPathReviewer(review ?? {}, refusing), isolated: { reviews: warnOnly, paths: WARN_ONLY_PATHS } };
}

/** What the worker mirrors: the cache's index, followed; any other directory only as unavailable. */
function mirrorSource(pools: PoolDirectory | undefined): WarnOnlyOptions['pools'] {
  if (pools instanceof PoolIndex) return pools;
  const reason = pools?.unavailable() ?? NO_CLUSTER_REASON;
  return { unavailable: () => reason, get: () => undefined, entries: () => [] };
}

/**
 * Loads (or, with `generateCerts`, creates) the certificates and serves the webhook over
 * HTTPS (TLS 1.2 or newer), reloading the pair when the files change.
 *
 * @throws Error when the certificates or the client CA are missing or unreadable (and not
 *   to be generated) or when the port cannot be bound.
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const { logger } = options;
  const metrics = options.metrics ?? createWebhookMetrics();
  const { served, created } = await loadInitialCertificates(options);
  if (created) logger.info({ certDir: options.certDir }, 'generated a CA and a serving certificate');

  let stopping = false;
  // No "listening" check: nothing can ask before the server listens.
  const checks: ReadinessCheck[] = [
    { name: 'shutdown', check: () => (stopping ? 'the server is shutting down' : undefined) },
    { name: 'serving-certificate', check: () => certificateValidityProblem(reloader.current(), new Date()) },
    ...(options.readinessChecks ?? []),
  ];
  const warnOnly =
    options.isolateWarnOnly &&
    new WarnOnlyReviews({ ...options.isolateWarnOnly, pools: mirrorSource(options.review?.pools), dualStack: dualStackSource(options.review ?? {}), logger });
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const app = createApp({
    ...reviewers(options.review, warnOnly),
    logger,
    readinessChecks: checks,
    metrics,
    verifyClientCertificates: options.clientCaFile !== undefined,
    bodyWaitMs: timeouts.bodyWaitMs,
    bodyStallMs: timeouts.bodyStallMs,
  });
  const { server, guard } = createHttpsServer(options, timeouts, app, served.material, metrics);
  const reloader = reloadCertificates(options, server, served, metrics);
  const problem = certificateValidityProblem(served, new Date());
  if (problem !== undefined) logger.error({ certDir: options.certDir, ...describe(served) }, `${problem}: not ready until it is replaced`);

  let port: number;
  try {
    port = await listen(server, options.port, options.host);
  } catch (err) {
    reloader.close();
    await warnOnly?.stop();
    throw err;
  }
  logger.info({ port, certDir: options.certDir, ...describe(served) }, 'serving admission reviews over HTTPS');

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      stopping = true;
      guard.closeAfterAnswers();
      reloader.close();
      const grace = setTimeout(() => server.closeAllConnections(), options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
      grace.unref();
      server.close(() => {
        clearTimeout(grace);
        void (warnOnly?.stop() ?? Promise.resolve()).then(resolve);
      });
      server.closeIdleConnections();
    });
    return stopped;
  };
  return {
    port,
    ...(served.material.caCertPem ? { caCertPem: served.material.caCertPem } : {}),
    metrics,
    ready: () => readinessReport(checks, false).ready,
    stop,
  };
}
