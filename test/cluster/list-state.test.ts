/** listClusterState against an API server that never answers (found by hostile testing). */
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

  const kubeConfig = () => {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return config;
  };

  it('says the API server did not answer in time, not "The user aborted a request."', async () => {
    await expect(listClusterState(kubeConfig(), undefined, 300)).rejects.toThrow(
      /^cannot list SpiderIPPools from the cluster: no answer within 0\.3s from https:\/\/127\.0\.0\.1:\d+; check that the API server is reachable$/,
    );
  });

  it('ends the Namespace and ConfigMap lists at the deadline too, in the same words', async () => {
    await expect(listClusterState(kubeConfig(), 'spiderpool-conf', 300)).rejects.toThrow(
      /^cannot list (SpiderIPPools|Namespaces|ConfigMaps named "spiderpool-conf") from the cluster: no answer within 0\.3s from https:\/\/127\.0\.0\.1:\d+; check that the API server is reachable$/,
    );
  });
});
