/**
 * A stand-in for the API server's ValidatingWebhookConfiguration endpoints on 127.0.0.1
 * (plain HTTP), recording every request. It stores what a PATCH sends and bumps the
 * resourceVersion only when the object changed, as server-side apply does; merging with
 * other managers' fields is the real API server's part, tested in the cluster e2e.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';

export const COLLECTION = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

export interface RecordedRequest {
  method: string;
  url: URL;
  contentType: string | undefined;
  authorization: string | undefined;
  body: string;
}

/** A canned refusal: HTTP status and body (a metav1.Status as JSON, or any text). */
export interface Refusal {
  status: number;
  body: string;
}

export interface FakeApiServer {
  requests: RecordedRequest[];
  /** The stored object, if any. */
  stored: Record<string, any> | undefined;
  /** When set, every request is answered with it. */
  refuse: Refusal | undefined;
  kubeConfig: KubeConfig;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A kubeconfig for `server` with a bearer token. */
export function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node only speaks plain HTTP to a cluster marked skipTLSVerify.
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'admin', token: 'fake-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'admin' }],
    currentContext: 'fake',
  });
  return kc;
}

/** Starts the fake on an OS-chosen loopback port. */
export async function startFakeApiServer(): Promise<FakeApiServer> {
  let resourceVersion = 0;
  const fake: Omit<FakeApiServer, 'kubeConfig' | 'close'> = { requests: [], stored: undefined, refuse: undefined };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    fake.requests.push({ method: req.method ?? '', url, contentType: req.headers['content-type'], authorization: req.headers.authorization, body });
    const send = (status: number, payload: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(payload);
    if (fake.refuse) return send(fake.refuse.status, fake.refuse.body);
    const name = url.pathname.startsWith(`${COLLECTION}/`) ? url.pathname.slice(COLLECTION.length + 1) : undefined;
    const notFound = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `"${name}" not found` });
    if (req.method === 'GET' && name !== undefined) {
      return fake.stored?.['metadata'].name === name ? send(200, JSON.stringify(fake.stored)) : send(404, notFound);
    }
    if (req.method === 'PATCH' && name !== undefined) {
      const sent = JSON.parse(body) as Record<string, any>;
      const { resourceVersion: _previous, ...storedMetadata } = fake.stored?.['metadata'] ?? {};
      const unchanged = fake.stored !== undefined && JSON.stringify({ ...fake.stored, metadata: storedMetadata }) === JSON.stringify(sent);
      if (!unchanged) resourceVersion += 1;
      fake.stored = { ...sent, metadata: { ...sent['metadata'], resourceVersion: String(resourceVersion) } };
      return send(200, JSON.stringify(fake.stored));
    }
    return send(404, notFound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(fake, {
    kubeConfig: kubeConfigFor(`http://127.0.0.1:${port}`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
