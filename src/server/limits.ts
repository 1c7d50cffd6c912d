/**
 * The server's default limits, apart from the server itself so that the command line reads
 * them without loading express, the certificates and the reviewer (`serve` begins its list
 * of SpiderIPPools before those are loaded).
 */
import { BODY_STALL_MS, BODY_WAIT_MS } from '../defaults.js';

/** Timeouts that bound how long one client may hold a socket, in milliseconds. */
export interface ServerTimeouts {
  /**
   * From the TCP accept to a finished TLS handshake (Node's default, 120 s, lets idle
   * sockets pile up; the kube-apiserver's handshake takes milliseconds).
   */
  handshakeMs: number;
  /** For the request headers to arrive (at most `requestMs`, as Node requires). */
  headersMs: number;
  /**
   * For the whole request, body included, waiting for room in the body budget too
   * (`bodyWaitMs`): the kube-apiserver writes a review at once and gives up after the
   * webhook's `timeoutSeconds` (5 in deploy/), so a request still arriving then has no reader.
   */
  requestMs: number;
  /**
   * How long an idle keep-alive connection stays open. Longer than the kube-apiserver keeps
   * one (Go's http.Transport `IdleConnTimeout`, 90 s, which k8s.io/apimachinery's
   * `SetTransportDefaults` keeps): Node's default, 5 s, closes connections the API server
   * still reuses, and a review sent on one as it closes fails ("EOF"; a POST is not
   * retried), which failurePolicy Fail turns into a refused write. At the connection cap an
   * idle connection is the first to give way (connection-table.ts).
   */
  keepAliveMs: number;
  /** How long a review waits for room in the body budget before a 429 (body-budget.ts; {@link BODY_WAIT_MS}). */
  bodyWaitMs: number;
  /**
   * How long after its request a body may arrive slowly before it gives way to a body waiting
   * for room (body-budget.ts) or, at the connection cap, to a newcomer (connections.ts; {@link BODY_STALL_MS}).
   */
  bodyStallMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  handshakeMs: 3_000,
  headersMs: 5_000,
  requestMs: 5_000,
  keepAliveMs: 120_000,
  bodyWaitMs: BODY_WAIT_MS,
  bodyStallMs: BODY_STALL_MS,
};
/**
 * Open connections, idle keep-alive ones included (see connection-table.ts for who gives
 * way at the cap). The bodies parsed at once are bounded apart (`MAX_PARSED_BYTES_IN_FLIGHT`);
 * this caps what connections buffer while they wait. The traffic this webhook sees
 * (UPDATEs of IaaS pools, one ConfigMap) needs a handful.
 */
export const DEFAULT_MAX_CONNECTIONS = 128;
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
