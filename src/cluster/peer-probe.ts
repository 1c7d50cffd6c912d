/**
 * One probe of a peer replica's HTTPS port: `GET /healthz` on a new connection (a kept-alive
 * one could outlive the peer's reachability), answered 200 within the deadline. The peer's
 * certificate is not verified: the probe asks whether the process answers, not who it is,
 * and sends nothing but the path.
 */
import https from 'node:https';

/**
 * @param host the peer's pod IP (IPv4 or IPv6, without brackets).
 * @param timeoutMs deadline for the whole exchange, in milliseconds: a node that drops
 *   packets never answers, so the deadline is the probe's only end.
 * @returns true when `/healthz` answered 200 in time; false for any other outcome (never throws).
 */
export function probeHealthz(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.request(
      { host, port, path: '/healthz', method: 'GET', rejectUnauthorized: false, agent: false, signal: AbortSignal.timeout(timeoutMs) },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode === 200));
        res.once('error', () => resolve(false));
      },
    );
    req.once('error', () => resolve(false));
    req.end();
  });
}
