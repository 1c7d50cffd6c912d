import { X509Certificate, createPrivateKey } from 'node:crypto';
import { generateCertificates, serviceDnsNames, type CertificateBundle, type CertificateOptions } from '../../src/certs/generate.js';
import { generate } from 'selfsigned';
import { SHA256_WITH_RSA, signatureAlgorithmOids } from './der.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const OPTS: CertificateOptions = {
  serviceName: 'spiderpool-iaas-webhook',
  namespace: 'kube-system',
  extraDnsNames: ['localhost'],
  extraIpAddresses: ['127.0.0.1', '::1'],
  validityDays: 30,
};
const SERVICE_NAMES = [
  'spiderpool-iaas-webhook',
  'spiderpool-iaas-webhook.kube-system',
  'spiderpool-iaas-webhook.kube-system.svc',
  'spiderpool-iaas-webhook.kube-system.svc.cluster.local',
];

let bundle: CertificateBundle;
let ca: X509Certificate;
let leaf: X509Certificate;
let generatedAt: number;

beforeAll(async () => {
  generatedAt = Date.now();
  bundle = await generateCertificates(OPTS);
  ca = new X509Certificate(bundle.caCertPem);
  leaf = new X509Certificate(bundle.certPem);
});

/** SAN entries as Node prints them: `DNS:a, IP Address:1.2.3.4`. */
function sans(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '').split(', ').filter(Boolean);
}

describe('serviceDnsNames', () => {
  it('lists the four in-cluster names of a Service, shortest first', () => {
    expect(serviceDnsNames('svc', 'ns')).toEqual(['svc', 'svc.ns', 'svc.ns.svc', 'svc.ns.svc.cluster.local']);
  });

  it.each([
    ['Upper', 'ns'],
    ['-lead', 'ns'],
    ['trail-', 'ns'],
    ['a.b', 'ns'],
    ['', 'ns'],
    ['a'.repeat(64), 'ns'],
    ['svc', 'my_ns'],
    ['svc', ''],
  ])('rejects service %j in namespace %j', (svc, ns) => {
    expect(() => serviceDnsNames(svc, ns)).toThrow(/must be a DNS-1123 label/);
  });

  it('accepts a 63-character label', () => {
    expect(serviceDnsNames('a'.repeat(63), 'ns')[0]).toBe('a'.repeat(63));
  });
});

describe('generateCertificates', () => {
  it('returns PEM certificates and unencrypted PKCS#8 keys', () => {
    expect(bundle.caCertPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(bundle.certPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(bundle.caKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(bundle.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });

  it('signs the leaf with the CA', () => {
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(leaf.issuer).toBe(ca.subject);
  });

  it('signs both certificates with sha256WithRSAEncryption, not the SHA-1 default', () => {
    for (const cert of [ca, leaf]) {
      expect(signatureAlgorithmOids(cert.raw)).toEqual({ outer: SHA256_WITH_RSA, tbs: SHA256_WITH_RSA });
    }
  });

  it("(the DER reader used above does tell selfsigned's SHA-1 default apart)", async () => {
    const sha1 = await generate([{ name: 'commonName', value: 'x' }], { keySize: 1024 });
    const oids = signatureAlgorithmOids(new X509Certificate(sha1.cert).raw);
    expect(oids).toEqual({ outer: '1.2.840.113549.1.1.5', tbs: '1.2.840.113549.1.1.5' });
  });

  it('uses RSA 2048 keys that match their certificates', () => {
    for (const [cert, keyPem] of [
      [ca, bundle.caKeyPem],
      [leaf, bundle.keyPem],
    ] as const) {
      const key = createPrivateKey(keyPem);
      expect(key.asymmetricKeyType).toBe('rsa');
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
      expect(cert.checkPrivateKey(key)).toBe(true);
    }
  });

  it('makes the CA a CA for signing certificates', () => {
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe('CN=spiderpool-iaas-webhook-ca');
    // OpenSSL's check_issued also fails when the issuer's keyUsage lacks keyCertSign.
    expect(ca.checkIssued(ca)).toBe(true);
  });

  it('makes the leaf a non-CA serving certificate for <svc>.<ns>.svc', () => {
    expect(leaf.ca).toBe(false);
    expect(leaf.subject).toBe('CN=spiderpool-iaas-webhook.kube-system.svc');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // extKeyUsage: serverAuth only
  });

  it('puts the service names and the extras in the SANs', () => {
    expect(sans(leaf)).toEqual([...SERVICE_NAMES.map((n) => `DNS:${n}`), 'DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1']);
    for (const name of [...SERVICE_NAMES, 'localhost']) expect(leaf.checkHost(name)).toBe(name);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('other.kube-system.svc')).toBeUndefined();
  });

  it('is valid from about now: the leaf for validityDays, a new CA for ten years', () => {
    for (const [cert, days] of [
      [ca, 3650],
      [leaf, 30],
    ] as const) {
      const from = new Date(cert.validFrom).getTime();
      const to = new Date(cert.validTo).getTime();
      expect(from).toBeLessThanOrEqual(generatedAt);
      expect(generatedAt - from).toBeLessThan(10 * 60 * 1000);
      expect(Math.abs(to - (generatedAt + days * DAY_MS))).toBeLessThan(60 * 1000);
    }
  });

  it('rejects an invalid service name or namespace before generating anything', async () => {
    await expect(generateCertificates({ serviceName: 'Bad_Name', namespace: 'ns' })).rejects.toThrow(
      'invalid service name "Bad_Name": must be a DNS-1123 label',
    );
    await expect(generateCertificates({ serviceName: 'svc', namespace: 'ns.with.dots' })).rejects.toThrow(
      'invalid namespace "ns.with.dots": must be a DNS-1123 label',
    );
  });

  it('rejects malformed extras and validity', async () => {
    const base = { serviceName: 'svc', namespace: 'ns' };
    await expect(generateCertificates({ ...base, extraDnsNames: ['bad name'] })).rejects.toThrow(/extra DNS name/);
    await expect(generateCertificates({ ...base, extraIpAddresses: ['256.0.0.1'] })).rejects.toThrow(/extra IP address/);
    await expect(generateCertificates({ ...base, validityDays: 0 })).rejects.toThrow(/validityDays/);
    await expect(generateCertificates({ ...base, validityDays: 1.5 })).rejects.toThrow(/validityDays/);
    // Past 9999-12-31 the dates cannot be encoded (found: openssl read "Bad time value").
    for (const days of [3_000_000, 99_999_999_999]) {
      await expect(generateCertificates({ ...base, validityDays: days })).rejects.toThrow(/after 9999-12-31/);
    }
  });

  it('takes validities in milliseconds (minutes, to test renewal), the leaf never outliving a new CA', async () => {
    const start = Date.now();
    const short = await generateCertificates({ serviceName: 'svc', namespace: 'ns', validityMs: 5 * 60_000, caValidityMs: 3 * 60_000 });
    const end = (pem: string) => new Date(new X509Certificate(pem).validTo).getTime();
    expect(Math.abs(end(short.caCertPem) - (start + 3 * 60_000))).toBeLessThan(30_000);
    expect(end(short.certPem)).toBe(end(short.caCertPem));
    const base = { serviceName: 'svc', namespace: 'ns' };
    await expect(generateCertificates({ ...base, validityMs: 999 })).rejects.toThrow(
      'invalid validityMs 999: must be a whole number of milliseconds, at least 1000',
    );
    await expect(generateCertificates({ ...base, caValidityMs: 1.5e3 + 0.5 })).rejects.toThrow(/^invalid caValidityMs 1500\.5/);
    await expect(generateCertificates({ ...base, validityMs: 1e15 })).rejects.toThrow(
      /^invalid validityMs 1000000000000000: the certificate would end after 9999-12-31/,
    );
  });

  describe('with an existing CA', () => {
    let reissued: CertificateBundle;

    beforeAll(async () => {
      reissued = await generateCertificates(
        { serviceName: 'other', namespace: 'ns', validityDays: 10_000 },
        { caCertPem: bundle.caCertPem, caKeyPem: bundle.caKeyPem },
      );
    });

    it('signs a new leaf with it and returns it unchanged', () => {
      expect(reissued.caCertPem).toBe(bundle.caCertPem);
      expect(reissued.caKeyPem).toBe(bundle.caKeyPem);
      const newLeaf = new X509Certificate(reissued.certPem);
      expect(newLeaf.verify(ca.publicKey)).toBe(true);
      expect(newLeaf.subject).toBe('CN=other.ns.svc');
      expect(signatureAlgorithmOids(newLeaf.raw).outer).toBe(SHA256_WITH_RSA);
    });

    it('does not let the leaf outlive the CA', () => {
      expect(new Date(new X509Certificate(reissued.certPem).validTo).getTime()).toBeLessThanOrEqual(new Date(ca.validTo).getTime());
    });

    it('refuses a non-CA certificate or a key that does not match', async () => {
      const opts = { serviceName: 'svc', namespace: 'ns' };
      await expect(generateCertificates(opts, { caCertPem: bundle.certPem, caKeyPem: bundle.keyPem })).rejects.toThrow(/is not a CA/);
      await expect(generateCertificates(opts, { caCertPem: bundle.caCertPem, caKeyPem: bundle.keyPem })).rejects.toThrow(
        'CA private key does not match the CA certificate',
      );
    });
  });
});
