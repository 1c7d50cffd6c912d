import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateCertificates, type CertificateBundle } from '../../src/certs/generate.js';

let bundle: CertificateBundle;
let server: Server;
let port: number;

beforeAll(async () => {
  bundle = await generateCertificates({
    serviceName: 'webhook',
    namespace: 'ns',
    extraDnsNames: ['localhost'],
    extraIpAddresses: ['127.0.0.1'],
  });
  server = createServer({ cert: bundle.certPem, key: bundle.keyPem }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

/**
 * GET / over TLS with certificate and hostname verification on (Node's defaults), trusting
 * only `ca` when given. `family: 4` because `localhost` may resolve to ::1 first.
 */
async function get(opts: { host: string; servername?: string; ca?: string }): Promise<string> {
  const req = request({
    host: opts.host,
    port,
    family: 4,
    path: '/',
    agent: false,
    ...(opts.servername === undefined ? {} : { servername: opts.servername }),
    ...(opts.ca === undefined ? {} : { ca: opts.ca }),
  });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const chunk of res) body += chunk;
  return `${res.statusCode} ${body}`;
}

describe('generated certificates in a real HTTPS server', () => {
  it('serve a client that trusts only the generated CA, at hostname localhost', async () => {
    expect(await get({ host: 'localhost', ca: bundle.caCertPem })).toBe('200 ok');
  });

  it('serve the in-cluster service name and the IP SAN', async () => {
    expect(await get({ host: '127.0.0.1', servername: 'webhook.ns.svc', ca: bundle.caCertPem })).toBe('200 ok');
    expect(await get({ host: '127.0.0.1', ca: bundle.caCertPem })).toBe('200 ok');
  });

  it('are refused for a hostname not in the SANs (hostname check is on)', async () => {
    await expect(get({ host: '127.0.0.1', servername: 'other.example', ca: bundle.caCertPem })).rejects.toMatchObject({
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });

  it('are refused by a client that does not trust the CA', async () => {
    await expect(get({ host: 'localhost' })).rejects.toMatchObject({
      code: expect.stringMatching(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER_CERT/),
    });
  });
});
