/**
 * How the benchmark's reference servers (node-ceiling.ts, express-floor.ts) run: HTTPS
 * with the webhook's own version floor and cipher list (src/server/tls-ciphers.ts) and
 * the certificate the webhook serves, so every server pays for the same handshakes and
 * record encryption; an ephemeral port of 127.0.0.1 printed as `{"port":N}` on stdout;
 * stopped by SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { TLS_CIPHERS, TLS_MIN_VERSION } from '../src/server/tls-ciphers.js';

/**
 * Serves `handler` with the certificate in `certDir` (`tls.crt`, `tls.key`); a `GET` (the
 * harness's `/readyz`) is answered 200 here.
 */
export function serveReference(certDir: string, handler: RequestListener): void {
  const server = createServer(
    { cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')), minVersion: TLS_MIN_VERSION, ciphers: TLS_CIPHERS },
    (req, res) => {
      if (req.method === 'GET') res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      else handler(req, res);
    },
  );
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
  });
}
