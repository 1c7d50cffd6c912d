/**
 * A stand-in for the API server's object endpoints on 127.0.0.1 (plain HTTP): objects kept
 * by path, with the API server's optimistic concurrency — POST of an existing name is 409
 * AlreadyExists, PUT with a stale `metadata.resourceVersion` is 409 Conflict, every write
 * bumps one resourceVersion counter — so replicas racing through it behave as against the
 * real one. PATCH stores the object sent (server-side apply's merging with other managers
 * is the real API server's part, tested in the cluster e2e), but merges a pod's status
 * conditions by type (a strategic-merge patch of pods/status). Records every request.
 * `hang` plays an API server that accepts a request and never answers it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor } from '../registration/fake-api-server.js';

export const SECRETS = (namespace: string) => `/api/v1/namespaces/${namespace}/secrets`;
export const WEBHOOK_CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
export const CLUSTER_ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
export const ENDPOINT_SLICES = (namespace: string) => `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`;

/** An EndpointSlice of `service` with one address, ready or not. */
export function endpointSlice(service: string, ready: boolean): Record<string, any> {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-abcde`, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready } }],
  };
}

export interface StoreRequest {
  method: string;
  path: string;
  body: string;
  /** The Content-Type header, when sent. */
  contentType?: string;
}

export interface FakeObjectStore {
  /** Objects by path (collection + `/` + name). */
  objects: Map<string, Record<string, any>>;
  requests: StoreRequest[];
  /** Runs before a write is decided (e.g. another replica writing first); may change `objects`. */
  beforeWrite: ((request: StoreRequest) => Promise<void> | void) | undefined;
  /** When set, requests whose method and path it returns a status for are answered with it. */
  refuse: ((request: StoreRequest) => { status: number; message: string } | undefined) | undefined;
  /** When set, requests it returns true for are read and never answered (the connection stays open). */
  hang: ((request: StoreRequest) => boolean) | undefined;
  /** Requests left unanswered by `hang`, and how many of their connections the client has closed since. */
  hung: { count: number; closedByClient: number };
  kubeConfig: KubeConfig;
  /** Puts `object` at `collection/name` as a write would (a new resourceVersion). */
  put(collection: string, object: Record<string, any>): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const status = (code: number, reason: string, message: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

export async function startFakeObjectStore(): Promise<FakeObjectStore> {
  let resourceVersion = 0;
  let uid = 0;
  const objects = new Map<string, Record<string, any>>();
  const stamp = (object: Record<string, any>, previous?: Record<string, any>) => {
    resourceVersion += 1;
    return {
      ...object,
      metadata: { ...object['metadata'], resourceVersion: String(resourceVersion), uid: previous?.['metadata']?.uid ?? `uid-${(uid += 1)}` },
    };
  };
  const store: Omit<FakeObjectStore, 'kubeConfig' | 'close'> = {
    objects,
    requests: [],
    beforeWrite: undefined,
    refuse: undefined,
    hang: undefined,
    hung: { count: 0, closedByClient: 0 },
    put: (collection, object) =>
      void objects.set(`${collection}/${object['metadata'].name}`, stamp(object, objects.get(`${collection}/${object['metadata'].name}`))),
  };
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const request = { method: req.method ?? '', path, body, ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}) };
    store.requests.push(request);
    const send = (code: number, payload: string) => res.writeHead(code, { 'content-type': 'application/json' }).end(payload);
    if (store.hang?.(request)) {
      store.hung.count++;
      res.on('close', () => store.hung.closedByClient++);
      return;
    }
    const refusal = store.refuse?.(request);
    if (refusal) return send(refusal.status, status(refusal.status, 'Forbidden', refusal.message));
    if (request.method !== 'GET') await store.beforeWrite?.(request);
    const name = path.slice(path.lastIndexOf('/') + 1);
    const notFound = () => send(404, status(404, 'NotFound', `"${name}" not found`));
    switch (request.method) {
      case 'GET': {
        // A list (a collection's path, or a label selector, key=value, comma-separated): the collection's objects carrying those labels.
        const selector = url.searchParams.get('labelSelector');
        if (selector !== null || (!objects.has(path) && [...objects.keys()].some((at) => at.startsWith(`${path}/`)))) {
          const pairs = (selector ?? '')
            .split(',')
            .filter(Boolean)
            .map((pair) => pair.split('='));
          const items = [...objects]
            .filter(
              ([at, o]) =>
                at.startsWith(`${path}/`) && !at.slice(path.length + 1).includes('/') && pairs.every(([key, value]) => o['metadata']?.labels?.[key!] === value),
            )
            .map(([, o]) => o);
          return send(200, JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(resourceVersion) }, items }));
        }
        const object = objects.get(path);
        return object ? send(200, JSON.stringify(object)) : notFound();
      }
      case 'POST': {
        const sent = JSON.parse(body) as Record<string, any>;
        const key = `${path}/${sent['metadata'].name}`;
        if (objects.has(key)) return send(409, status(409, 'AlreadyExists', `"${sent['metadata'].name}" already exists`));
        objects.set(key, stamp(sent));
        return send(201, JSON.stringify(objects.get(key)));
      }
      case 'PUT': {
        const sent = JSON.parse(body) as Record<string, any>;
        const stored = objects.get(path);
        if (!stored) return notFound();
        if (sent['metadata']?.resourceVersion !== stored['metadata'].resourceVersion) {
          return send(
            409,
            status(
              409,
              'Conflict',
              `Operation cannot be fulfilled on "${name}": the object has been modified; please apply your changes to the latest version and try again`,
            ),
          );
        }
        objects.set(path, stamp(sent, stored));
        return send(200, JSON.stringify(objects.get(path)));
      }
      case 'PATCH': {
        const sent = JSON.parse(body) as Record<string, any>;
        if (path.endsWith('/status')) {
          const patched = patchStatus(path.slice(0, -'/status'.length), sent);
          return send(patched.status, patched.body);
        }
        objects.set(path, stamp(sent, objects.get(path)));
        return send(200, JSON.stringify(objects.get(path)));
      }
      case 'DELETE':
        if (!objects.delete(path)) return notFound();
        return send(200, status(200, '', 'deleted').replace('"Failure"', '"Success"'));
      default:
        return send(405, status(405, 'MethodNotAllowed', 'method not allowed'));
    }
  });
  /** A strategic-merge patch of a pod's status: conditions merged by type, null deleting a field, against a resourceVersion when it names one. */
  function patchStatus(key: string, patch: Record<string, any>): { status: number; body: string } {
    const stored = objects.get(key);
    if (!stored) return { status: 404, body: status(404, 'NotFound', 'not found') };
    const expected = patch['metadata']?.resourceVersion;
    if (expected !== undefined && expected !== stored['metadata'].resourceVersion)
      return { status: 409, body: status(409, 'Conflict', 'the object has been modified') };
    const conditions: Record<string, any>[] = [...(stored['status']?.conditions ?? [])];
    for (const change of patch['status']?.conditions ?? []) {
      const at = conditions.findIndex((c) => c['type'] === change['type']);
      const merged = Object.fromEntries(Object.entries({ ...conditions[at], ...change }).filter(([, v]) => v !== null));
      if (at === -1) conditions.push(merged);
      else conditions[at] = merged;
    }
    objects.set(key, stamp({ ...stored, status: { ...stored['status'], conditions } }, stored));
    return { status: 200, body: JSON.stringify(objects.get(key)) };
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(store, {
    kubeConfig: kubeConfigFor(`http://127.0.0.1:${port}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}
