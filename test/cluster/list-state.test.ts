/** listClusterState against an API server that never answers (found by hostile testing). */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { listClusterState } from '../../src/cluster/list-state.js';

describe('listClusterState', () => {
  let server: Server;
  const sockets: Socket[] = [];
  let port = 0;

  beforeAll(async () => {
    server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => server.close(resolve));
  });

  const kubeConfig = (server = `https://127.0.0.1:${port}`) => {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return config;
  };

  it('says the API server did not answer in time, not "The user aborted a request."', async () => {
    await expect(listClusterState(kubeConfig(), undefined, 300)).rejects.toThrow(
      /^cannot list SpiderIPPools: no answer within 0\.3s \(context "x", server https:\/\/127\.0\.0\.1:\d+\); check that the API server is reachable$/,
    );
  });

  it('ends the Namespace and ConfigMap lists at the deadline too, in the same words', async () => {
    await expect(listClusterState(kubeConfig(), 'spiderpool-conf', 300)).rejects.toThrow(
      /^cannot list (SpiderIPPools|Namespaces|ConfigMaps named "spiderpool-conf"): no answer within 0\.3s \(context "x", server https:\/\/127\.0\.0\.1:\d+\); check that the API server is reachable$/,
    );
  });

  it('a refused connection reads as kubectl says it, naming the context and server', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(listClusterState(kubeConfig(`https://127.0.0.1:${closedPort}`), undefined, 5_000)).rejects.toThrow(
      `The connection to the server 127.0.0.1:${closedPort} was refused - did you specify the right host or port? (listing SpiderIPPools; context "x", server https://127.0.0.1:${closedPort})`,
    );
  });

  it('a 404 names the missing resource and the CRD to check, not "HTTP 404"', async () => {
    const notFound = createHttpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'the server could not find the requested resource',
          reason: 'NotFound',
          code: 404,
        }),
      );
    });
    await new Promise<void>((resolve) => notFound.listen(0, '127.0.0.1', resolve));
    const server = `http://127.0.0.1:${(notFound.address() as { port: number }).port}`;
    try {
      await expect(listClusterState(kubeConfig(server), undefined, 5_000)).rejects.toThrow(
        `the server could not find the requested resource (spiderippools.spiderpool.spidernet.io/v2beta1); is Spiderpool installed? check kubectl get crd spiderippools.spiderpool.spidernet.io (listing SpiderIPPools; context "x", server ${server})`,
      );
    } finally {
      notFound.closeAllConnections();
      await new Promise((resolve) => notFound.close(resolve));
    }
  });
});
