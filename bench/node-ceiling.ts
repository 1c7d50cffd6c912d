/**
 * The Node ceiling of issue #4: a bare `node:https` server that reads the body,
 * `JSON.parse`s it and answers a fixed allowed AdmissionReview echoing `request.uid`.
 * No framework, no validation, no logging: nothing in Node answers a review faster, so
 * the webhook's figures are read as a ratio to this one's.
 *
 * Usage: `node node-ceiling.js <certDir>`; listens on an ephemeral port of 127.0.0.1,
 * prints `{"port":N}` on stdout, answers `GET /readyz`, stops on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const certDir = process.argv[2] ?? '.';
const server = createServer(
  { cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')), minVersion: 'TLSv1.2' },
  (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const answer = JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: review.request.uid, allowed: true },
      });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer) }).end(answer);
    });
  },
);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
