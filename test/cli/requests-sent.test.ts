import { channel } from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterRequestsSent } from '../../src/cli/requests-sent.js';

/** A server that takes requests and never answers them: only the sending is observed. */
async function silentServer(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((_req, res) => {
    received++;
    open.add(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    received: () => received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('afterRequestsSent', () => {
  it('resolves once the requests begun by start are on the wire, long before the limit', async () => {
    const server = await silentServer();
    const requests: http.ClientRequest[] = [];
    try {
      const result = await afterRequestsSent(async () => {
        await Promise.resolve();
        for (let i = 0; i < 2; i++) requests.push(http.get(server.url).on('error', () => undefined));
        return 'started';
      }, 10_000);
      expect(result).toBe('started');
      expect(requests.every((r) => r.writableFinished)).toBe(true);
      for (let i = 0; i < 100 && server.received() < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(server.received()).toBe(2);
    } finally {
      for (const r of requests) r.destroy();
      await server.close();
    }
  });

  it('waits for every request begun, not only the first', async () => {
    const server = await silentServer();
    const requests: http.ClientRequest[] = [];
    try {
      await afterRequestsSent(async () => {
        requests.push(http.get(server.url).on('error', () => undefined));
        requests.push(http.get(server.url).on('error', () => undefined));
      }, 10_000);
      expect(requests.map((r) => r.writableFinished)).toEqual([true, true]);
    } finally {
      for (const r of requests) r.destroy();
      await server.close();
    }
  });

  it('a request that fails counts as settled', async () => {
    const server = await silentServer();
    await server.close(); // nothing listens there any more: the connection is refused
    const errors: Error[] = [];
    await afterRequestsSent(async () => {
      http.get(server.url).on('error', (e) => errors.push(e));
    }, 10_000);
    expect(errors).toHaveLength(1);
  });

  it('without a request, it gives up after the limit', async () => {
    let waited = false;
    const pending = afterRequestsSent(async () => 7, 50).then((v) => {
      waited = true;
      return v;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(waited).toBe(false);
    await expect(pending).resolves.toBe(7);
  });

  it('holds the process open while it waits: before the server listens, nothing else may', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const pending = afterRequestsSent(async () => 7, 200);
    await new Promise((r) => setImmediate(r));
    expect(timers()).toBe(before + 1); // an unref'd timer is not counted: the process would exit (code 0) without serving
    await expect(pending).resolves.toBe(7);
  });

  it('passes on what start throws, and stops watching for requests', async () => {
    const requestStart = channel('http.client.request.start');
    const before = requestStart.hasSubscribers;
    await expect(afterRequestsSent(() => Promise.reject(new Error('no kubeconfig')), 10_000)).rejects.toThrow('no kubeconfig');
    expect(requestStart.hasSubscribers).toBe(before); // no longer watching: later requests are not counted
  });
});
