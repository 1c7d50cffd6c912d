/** The probe of a peer's port on 127.0.0.1: the real server answers it; a silent or closed port is a failure, at the deadline at the latest. */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { probeHealthz } from '../../src/cluster/peer-probe.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const PROBE_TIMEOUT_MS = 1_000;

describe('probeHealthz', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('peer-probe-');
  });
  afterAll(() => server?.stop());

  it("is answered by the webhook's own HTTPS server, whose certificate names no pod IP", async () => {
    await expect(probeHealthz('127.0.0.1', server.port, PROBE_TIMEOUT_MS)).resolves.toBe(true);
  });

  it('fails on a port that accepts and never answers (a frozen peer), ending at its deadline', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      await expect(probeHealthz('127.0.0.1', (silent.address() as AddressInfo).port, PROBE_TIMEOUT_MS)).resolves.toBe(false);
      // A bound, not a latency figure: the probe never waits for good.
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('fails on a closed port', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(probeHealthz('127.0.0.1', port, PROBE_TIMEOUT_MS)).resolves.toBe(false);
  });
});
