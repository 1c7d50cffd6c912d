/**
 * A fake kube-apiserver on loopback (port 0) for the SpiderIPPool resource only: scripted
 * list answers and watch streams the test writes events to. For the pool cache's unit
 * tests and the CLI's end-to-end test; never a stand-in for the real API server's
 * validation. (test/registration/fake-api-server.ts stands in for the webhook
 * configuration endpoints; its `kubeConfigFor` serves both.)
 */
import http from 'node:http';
import { spiderIPPool } from '../helpers/pools.js';
import type { AddressInfo } from 'node:net';

export const PATH = '/apis/spiderpool.spidernet.io/v2beta1/spiderippools';

/** A minimal IaaS SpiderIPPool (IPv6, 255 addresses), optionally naming a pair pool. */
export const pool = (name: string, resourceVersion: string, pair?: string) =>
  spiderIPPool(name, { provider: 'openstack', ...(pair ? { pair } : {}), version: 6, ips: ['fd00::1-fd00::ff'], resourceVersion });

/** `count` allocations as Spiderpool writes them in `status.allocatedIPs` (a JSON string, ~140 bytes each). */
export function allocatedIPs(count: number): string {
  const entries: Record<string, unknown> = {};
  for (let i = 0; i < count; i++)
    entries[`fd00:6::${(16 + i).toString(16)}`] = { interface: 'eth0', pod: `ns/web-${i}`, podUid: `3f1c0b8e-1d2a-4c5b-9e7f-${String(i).padStart(12, '0')}` };
  return JSON.stringify(entries);
}

/** A fake kube-apiserver for one resource: scripted list answers, and watches the test writes to. */
export class FakePoolApiServer {
  readonly server = http.createServer((req, res) => this.handle(req, res));
  /**
   * Answers to successive lists (a request with a `continue` token reads the page of the
   * latest), the last one repeating; `hang` never answers (a dead connection); `nullBody`
   * answers the JSON `null` instead of a list;
   * `status` (a `metav1.Status`) is the body of a non-200 answer, `{kind: 'Status', code}` by default.
   */
  lists: { status: number; items?: unknown; resourceVersion?: string; hang?: boolean; nullBody?: boolean; statusBody?: unknown }[] = [];
  /** Statuses for successive watch calls, 200 when none is left (a non-200 ends the watch at once). */
  watchStatuses: number[] = [];
  listCalls = 0;
  /** The query of every list request (pages included), in order. */
  readonly listQueries: URLSearchParams[] = [];
  /** How many requests carrying a `continue` token are answered 410 Gone (an expired token), the first ones. */
  expireContinues = 0;
  /** Never send a watch's response headers (an API server that hangs). */
  holdWatchHeaders = false;
  /** End every watch right after its response headers, with no event (a proxy or an API server that closes watches at once). */
  endWatchesAtOnce = false;
  readonly watchQueries: URLSearchParams[] = [];
  /** Watch connections the client closed (or that ended), counted as they close. */
  closedWatches = 0;
  private watches: http.ServerResponse[] = [];

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== PATH) return void res.writeHead(404).end();
    if (url.searchParams.get('watch') === 'true') {
      this.watchQueries.push(url.searchParams);
      res.on('close', () => this.closedWatches++);
      const status = this.watchStatuses.shift() ?? 200;
      if (status !== 200) {
        return void res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code: status }));
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // As the API server does, the watch starts before its first event, unless the test
      // plays a server that never answers.
      if (!this.holdWatchHeaders) res.flushHeaders();
      if (this.endWatchesAtOnce) return void res.end();
      this.watches.push(res);
      return;
    }
    this.listQueries.push(url.searchParams);
    // A page after the first (`continue`: the offset) is of the list the first page began.
    const token = url.searchParams.get('continue');
    if (token !== null && this.expireContinues > 0) {
      this.expireContinues--;
      return void res
        .writeHead(410, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'The provided continue parameter is too old' }));
    }
    const answer =
      token === null ? this.lists[Math.min(this.listCalls++, this.lists.length - 1)]! : this.lists[Math.min(this.listCalls, this.lists.length) - 1]!;
    if (answer.hang) return;
    if (answer.status !== 200) {
      const body = answer.statusBody ?? { kind: 'Status', code: answer.status };
      return void res.writeHead(answer.status, { 'Content-Type': 'application/json', 'Audit-Id': 'a2b3c4' }).end(JSON.stringify(body));
    }
    if (answer.nullBody) return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('null');
    // Pages of `limit` items, as the API server cuts them (a `continue` token while items remain).
    const all = answer.items ?? [];
    const limit = Number(url.searchParams.get('limit') ?? 0);
    const offset = Number(token ?? 0);
    const paged = Array.isArray(all) && limit > 0;
    const items = paged ? all.slice(offset, offset + limit) : all;
    const more = paged && offset + limit < all.length;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(
      JSON.stringify({
        apiVersion: 'spiderpool.spidernet.io/v2beta1',
        kind: 'SpiderIPPoolList',
        metadata: { resourceVersion: answer.resourceVersion ?? '1', ...(more ? { continue: String(offset + limit) } : {}) },
        items,
      }),
    );
  }

  /** Sends one watch event to every open watch. */
  send(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR', object: unknown): void {
    this.sendLine(JSON.stringify({ type, object }));
  }

  /** Sends one line, event or not, to every open watch. */
  sendLine(line: string): void {
    for (const res of this.watches) res.write(`${line}\n`);
  }

  /** Ends every open watch, as the API server does when a watch times out. */
  endWatches(): void {
    for (const res of this.watches) res.end();
    this.watches = [];
  }

  get openWatches(): number {
    return this.watches.length;
  }

  async stop(): Promise<void> {
    this.endWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The Status the kube-apiserver answers a list of a resource it does not serve with (no CRD). */
export const NOT_FOUND_STATUS = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server could not find the requested resource',
  reason: 'NotFound',
  details: {},
  code: 404,
};

/** The Status the kube-apiserver's RBAC authorizer answers a forbidden list with (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go). */
export const FORBIDDEN_LIST_STATUS = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message:
    'spiderippools.spiderpool.spidernet.io is forbidden: User "system:serviceaccount:spiderpool-iaas-webhook:spiderpool-iaas-webhook" cannot list resource "spiderippools" in API group "spiderpool.spidernet.io" at the cluster scope',
  reason: 'Forbidden',
  details: { group: 'spiderpool.spidernet.io', kind: 'spiderippools' },
  code: 403,
};

export { kubeConfigFor } from '../registration/fake-api-server.js';
