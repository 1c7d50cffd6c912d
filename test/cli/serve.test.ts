/** `serve` that cannot start exits 2 (unusable input), never 1, which means findings in the rest of the CLI. */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { reportsWithoutPoolCache } from '../../src/cli/arguments.js';
import { cannotStart, serve, START_FAILURE_EXIT_CODE } from '../../src/cli/serve.js';

describe('serve that cannot start', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'serve-start-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  afterEach(() => {
    process.exitCode = undefined;
  });

  const args = (extra: Partial<Parameters<typeof serve>[0]>) => ({
    port: 0,
    host: '127.0.0.1',
    certDir: path.join(dir, 'certs'),
    generateCerts: false,
    poolCache: false,
    maxConnections: 8,
    handshakeTimeout: 3000,
    idleTimeout: 120_000,
    shutdownTimeout: 1000,
    poolCacheSyncWait: 1000,
    unsyncedPools: 'Refuse' as const,
    logLevel: 'silent',
    configmapName: 'spiderpool-conf',
    service: 'spiderpool-iaas-webhook',
    certValidity: 8760 * 3600_000,
    caValidity: 87600 * 3600_000,
    webhookConfigurationAnnotation: [],
    enforcement: [],
    ...extra,
  });

  it('is exit code 2, apart from the findings (1) of review, audit and validate-config', () => {
    expect(START_FAILURE_EXIT_CODE).toBe(2);
  });

  it('exits 2 without certificates and --no-generate-certs', async () => {
    await serve(args({}));
    expect(process.exitCode).toBe(2);
  });

  it('exits 2 and stops listening when a step after the server started fails (no namespace for --manage-webhook-configuration)', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    await serve(args({ port, generateCerts: true, manageWebhookConfiguration: 'spiderpool-iaas-webhook' }));
    expect(process.exitCode).toBe(2);
    // A server left listening would keep the process (and a Ready pod) alive after "cannot start".
    const reached = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  }, 30_000);

  it('exits 2 when the port is in use', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      await serve(args({ port: (taken.address() as AddressInfo).port, generateCerts: true }));
      expect(process.exitCode).toBe(2);
    } finally {
      taken.close();
    }
  }, 30_000);
});

describe('the line of a serve that cannot start', () => {
  /** The error Node's net.Server emits when listen(2) fails with `code`. */
  const listenError = (code: string) => Object.assign(new Error(`listen ${code}`), { code, syscall: 'listen' });

  it.each([
    ['EADDRINUSE', 'cannot start: the port is in use; choose another with --port or PORT'],
    ['EADDRNOTAVAIL', 'cannot start: --host is not an address of this machine; give one of its addresses, or leave --host out to bind all interfaces'],
    ['EACCES', 'cannot start: binding a port below 1024 needs a privilege this process lacks; choose another with --port or PORT'],
  ])('says what to change when listen fails with %s', (code, line) => {
    expect(cannotStart(listenError(code))).toBe(line);
  });

  it('says no more than "cannot start" for another error, or the same code outside listen', () => {
    expect(cannotStart(listenError('EINVAL'))).toBe('cannot start');
    expect(cannotStart(Object.assign(new Error("EACCES: permission denied, open 'certs/tls.key'"), { code: 'EACCES', syscall: 'open' }))).toBe('cannot start');
    expect(cannotStart(new Error('missing tls.crt'))).toBe('cannot start');
  });
});

describe('--reports=true without a cluster', () => {
  it('refuses --reports=true with --no-pool-cache: the reports are of the pools the cache lists, and the command says what to do', () => {
    expect(reportsWithoutPoolCache({ reports: true, poolCache: false }, true)).toBe(
      '--reports=true needs the pool cache (the reports are of the pools it lists): drop --no-pool-cache, or pass --reports=false',
    );
  });

  it('refuses --reports=true when no kubeconfig is found, naming the ways to give one', () => {
    expect(reportsWithoutPoolCache({ reports: true, poolCache: true }, false)).toBe(
      '--reports=true needs a cluster (the reports are of the pools it lists): pass --kubeconfig FILE, set $KUBECONFIG, create ~/.kube/config, run in a pod, or pass --reports=false',
    );
  });

  it.each([
    [false, false, false],
    [undefined, false, false],
    [undefined, true, false],
    [false, true, false],
    [true, true, true],
    [undefined, true, true],
  ])('lets reports=%s with poolCache=%s and clusterFound=%s through', (reports, poolCache, clusterFound) => {
    expect(reportsWithoutPoolCache({ ...(reports === undefined ? {} : { reports }), poolCache }, clusterFound)).toBeUndefined();
  });
});
