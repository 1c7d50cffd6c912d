import { ClusterListError, listClusterState } from '../../src/cluster/list-state.js';
import { FakePoolApiServer, FORBIDDEN_LIST_STATUS, kubeConfigFor, pool } from './fake-api-server.js';

describe('listClusterState (audit --kubeconfig: pools only)', () => {
  let api: FakePoolApiServer;
  let url: string;
  beforeEach(async () => {
    api = new FakePoolApiServer();
    url = await api.start();
  });
  afterEach(() => api.stop());

  it('lists the pools with apiVersion and kind set on each item', async () => {
    const { apiVersion, kind, ...item } = pool('p1', '5');
    api.lists = [{ status: 200, items: [item] }];
    const objects = await listClusterState(kubeConfigFor(url));
    expect(objects).toEqual([{ apiVersion, kind, ...item }]);
  });

  it("a refusal is one line with the API server's message, not client-node's HTTP exchange", async () => {
    api.lists = [{ status: 403, statusBody: FORBIDDEN_LIST_STATUS }];
    const error = await listClusterState(kubeConfigFor(url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterListError);
    expect((error as Error).message).toBe(
      `Error from server (Forbidden): ${FORBIDDEN_LIST_STATUS.message} (listing SpiderIPPools; context "fake", server ${url})`,
    );
  });
});
