/**
 * Test clients for the real HTTPS server on 127.0.0.1. They verify the server's
 * certificate against `ca` and the name `localhost` unless a test says otherwise.
 */
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RequestOptions {
  port: number;
  ca: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** `false` (the default) opens a new connection for this request. */
  agent?: https.Agent | false;
  /** A client certificate and key to present. */
  cert?: string;
  key?: string;
}

/** One HTTPS request; resolves with the whole answer, rejects on a connection or TLS error. */
export function httpsRequest(opts: RequestOptions): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: opts.port,
        ca: opts.ca,
        method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
        path: opts.path,
        headers: opts.headers ?? (opts.body === undefined ? {} : { 'content-type': 'application/json' }),
        agent: opts.agent ?? false,
        ...(opts.cert === undefined ? {} : { cert: opts.cert, key: opts.key }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Opens a TLS connection with `options` and resolves once it is established (the caller
 * ends it), or rejects with the handshake error or when the server closes it first.
 */
export function connectTls(port: number, options: tls.ConnectionOptions): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', servername: 'localhost', port, ...options });
    socket.once('secureConnect', () => {
      socket.off('error', reject);
      socket.off('close', closed);
      resolve(socket);
    });
    const closed = () => reject(new Error('connection closed before the TLS handshake finished'));
    socket.once('error', reject);
    socket.once('close', closed);
  });
}

/** The SHA-256 fingerprint of the certificate a new connection is served (`AB:CD:...`). */
export async function servedFingerprint(port: number, ca: string): Promise<string> {
  const socket = await connectTls(port, { ca });
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  socket.destroy();
  return fingerprint;
}

/** Polls `condition` every 50 ms until it holds; throws after `limitMs` (no timing assertion: a bound). */
export async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The value of one series in Prometheus text, e.g. `name{a="b"}`; 0 when absent. */
export function sampleValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
