/**
 * Test clients for a real HTTPS server on 127.0.0.1 (the server tests, the e2e tests of the
 * built CLI, the soak). They verify the server's certificate against `ca` and the name
 * `localhost` unless a test says otherwise.
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
  /** The name the certificate is checked for (SNI too); `localhost` when absent. */
  servername?: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** `false` (the default) opens a new connection for this request. */
  agent?: https.Agent | false;
  /** A client certificate and key to present. */
  cert?: string;
  key?: string;
  /** The local address to connect from (another loopback address, e.g. `127.0.0.2`). */
  localAddress?: string;
}

/** One HTTPS request; resolves with the whole answer, rejects on a connection or TLS error. */
export function httpsRequest(opts: RequestOptions): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        servername: opts.servername ?? 'localhost',
        port: opts.port,
        ca: opts.ca,
        method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
        path: opts.path,
        headers: opts.headers ?? (opts.body === undefined ? {} : { 'content-type': 'application/json' }),
        agent: opts.agent ?? false,
        ...(opts.cert === undefined ? {} : { cert: opts.cert, key: opts.key }),
        ...(opts.localAddress === undefined ? {} : { localAddress: opts.localAddress }),
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
 * Opens a TLS connection with `options` (from `localAddress`, e.g. another loopback
 * address, when given) and resolves once it is established (the caller ends it), or rejects with the handshake error or when the server closes it first.
 */
export function connectTls(port: number, options: tls.ConnectionOptions & { localAddress?: string }): Promise<tls.TLSSocket> {
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

/** The value of one series in Prometheus text, e.g. `name{a="b"}`; 0 when absent. */
export function sampleValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
