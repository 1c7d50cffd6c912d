import { X509Certificate, createPrivateKey as createKey } from 'node:crypto';
import { jest } from '@jest/globals';
import { assertRotationPolicy, planRotation, SecretContentError, type RotationPolicy, type SecretPems } from '../../src/certs/rotation.js';

const MINUTE_MS = 60_000;
const POLICY: RotationPolicy = {
  serviceName: 'spiderpool-iaas-webhook',
  namespace: 'kube-system',
  certValidityMs: 10 * MINUTE_MS,
  caValidityMs: 60 * MINUTE_MS,
};
const T0 = Date.now();

/** Only Date is faked: key generation needs the real timers. */
const at = (minutes: number): Date => {
  jest.setSystemTime(T0 + minutes * MINUTE_MS);
  return new Date();
};
// RSA keys are made in JavaScript (node-forge): about a second each, several per step.
jest.setTimeout(120_000);
beforeAll(() => {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
    now: T0,
    // Key generation (node-forge) slices its work by the clock: time must move.
    advanceTimers: true,
  });
});
afterAll(() => jest.useRealTimers());

const certificates = (bundle: string | undefined) =>
  (bundle?.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem));
const signedBy = (pems: SecretPems, ca: X509Certificate) => new X509Certificate(pems['tls.crt']!).verify(ca.publicKey);
const caOfKey = (pems: SecretPems, key: 'ca.key' | 'ca-next.key') => certificates(pems['ca.crt']).find((c) => c.checkPrivateKey(createKey(pems[key]!)))!;

describe('planRotation', () => {
  let created: SecretPems;

  beforeAll(async () => {
    const plan = await planRotation(undefined, POLICY, at(0));
    expect(plan.reason).toBe('created a CA and a serving certificate');
    created = plan.pems;
  });

  it('creates a CA and a serving certificate for <service>.<namespace>.svc it signed, when there is no Secret', () => {
    expect(Object.keys(created).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    const [ca] = certificates(created['ca.crt']);
    expect(certificates(created['ca.crt'])).toHaveLength(1);
    expect(signedBy(created, ca!)).toBe(true);
    expect(new X509Certificate(created['tls.crt']!).checkHost('spiderpool-iaas-webhook.kube-system.svc')).toBeDefined();
  });

  it('keeps a Secret whose certificates are not due, changing nothing', async () => {
    const plan = await planRotation(created, POLICY, at(1));
    expect(plan.reason).toBeUndefined();
    expect(plan.pems).toEqual(created);
  });

  it('renews the serving certificate with a third of its validity left, by the same CA (the bundle stays)', async () => {
    expect((await planRotation(created, POLICY, at(6))).reason).toBeUndefined();
    const plan = await planRotation(created, POLICY, at(7.5));
    expect(plan.reason).toMatch(/^renewed the serving certificate \(it ends on .*, within a third of its validity\)$/);
    expect(plan.pems['tls.crt']).not.toBe(created['tls.crt']);
    expect(plan.pems['ca.crt']).toBe(created['ca.crt']);
    expect(plan.pems['ca.key']).toBe(created['ca.key']);
  });

  it('changes the CA with an overlap: both trusted first, then the new one signs, then the old one leaves when it expires', async () => {
    const [oldCa] = certificates(created['ca.crt']);
    // A third of the CA's validity left: a new CA joins the bundle, the old one still signs.
    expect((await planRotation(created, POLICY, at(39))).reason).not.toMatch(/new CA/);
    const added = await planRotation(created, POLICY, at(41));
    expect(added.reason).toMatch(/added a new CA to the bundle/);
    expect(certificates(added.pems['ca.crt'])).toHaveLength(2);
    expect(added.pems['ca.key']).toBe(created['ca.key']);
    const newCa = caOfKey(added.pems, 'ca-next.key');
    expect(newCa.fingerprint256).not.toBe(oldCa!.fingerprint256);
    expect(signedBy(added.pems, oldCa!)).toBe(true);
    // Not again while it waits.
    expect((await planRotation(added.pems, POLICY, at(45))).pems['ca-next.key']).toBe(added.pems['ca-next.key']);

    // A sixth left: the new CA signs; the old one is still trusted.
    const switched = await planRotation(added.pems, POLICY, at(51));
    expect(switched.reason).toMatch(/signed by the new CA from now on/);
    expect(switched.pems['ca-next.key']).toBeUndefined();
    expect(switched.pems['ca.key']).toBe(added.pems['ca-next.key']);
    expect(signedBy(switched.pems, newCa)).toBe(true);
    expect(certificates(switched.pems['ca.crt']).map((c) => c.fingerprint256)).toEqual([newCa.fingerprint256, oldCa!.fingerprint256]);

    const dropped = await planRotation(switched.pems, POLICY, at(61));
    expect(dropped.reason).toMatch(/removed expired CAs from the bundle/);
    expect(certificates(dropped.pems['ca.crt']).map((c) => c.fingerprint256)).toEqual([newCa.fingerprint256]);
  });

  it('makes a new CA when the signing one has expired (no overlap is possible any more)', async () => {
    const plan = await planRotation(created, POLICY, at(61));
    expect(plan.reason).toMatch(/^the CA expired on .*: created a new CA and serving certificate$/);
    expect(plan.pems['ca.crt']).not.toBe(created['ca.crt']);
  });

  it('renews a serving certificate that does not name the Service in the namespace now configured', async () => {
    const plan = await planRotation(created, { ...POLICY, namespace: 'spiderpool' }, at(1));
    expect(plan.reason).toBe('renewed the serving certificate (it does not name spiderpool-iaas-webhook.spiderpool.svc)');
    expect(plan.pems['ca.crt']).toBe(created['ca.crt']);
  });

  it('renews a serving pair whose key does not match, or that another CA signed', async () => {
    const other = (await planRotation(undefined, POLICY, at(1))).pems;
    expect((await planRotation({ ...created, 'tls.key': other['tls.key']! }, POLICY, at(1))).reason).toMatch(/tls\.key does not belong to tls\.crt/);
    expect((await planRotation({ ...created, 'tls.crt': other['tls.crt']!, 'tls.key': other['tls.key']! }, POLICY, at(1))).reason).toMatch(
      /it was not signed by the current CA/,
    );
  });

  it.each([
    [
      'without ca.crt and ca.key',
      (p: SecretPems) => ({ 'tls.crt': p['tls.crt']!, 'tls.key': p['tls.key']! }),
      /^it has no ca\.crt and ca\.key, so it was not written by this webhook$/,
    ],
    ['without ca.key', (p: SecretPems) => ({ ...p, 'ca.key': undefined }), /^it has no ca\.key/],
    ['with a ca.crt that holds no certificate', (p: SecretPems) => ({ ...p, 'ca.crt': 'garbage' }), /^ca\.crt holds no PEM certificate$/],
    ['with a ca.key that is not a key', (p: SecretPems) => ({ ...p, 'ca.key': 'garbage' }), /^ca\.key is not an unencrypted PEM private key/],
    ['with a ca.key of no CA in ca.crt', (p: SecretPems) => ({ ...p, 'ca.key': p['tls.key']! }), /^ca\.key belongs to no CA certificate in ca\.crt$/],
  ])('refuses a Secret %s (never overwritten)', async (_what, edit, message) => {
    const pems = Object.fromEntries(Object.entries(edit(created)).filter(([, v]) => v !== undefined)) as SecretPems;
    const refused = planRotation(pems, POLICY, at(1));
    await expect(refused).rejects.toThrow(SecretContentError);
    await expect(refused).rejects.toThrow(message);
  });
});

describe('assertRotationPolicy', () => {
  it('accepts a serving certificate of up to half the CA validity, and refuses a longer one naming both', () => {
    expect(() => assertRotationPolicy({ ...POLICY, certValidityMs: 30 * MINUTE_MS })).not.toThrow();
    expect(() => assertRotationPolicy({ ...POLICY, certValidityMs: 31 * MINUTE_MS })).toThrow(
      "the serving certificate's validity (1860s) must be at most half the CA's (3600s): raise the CA validity or lower the certificate validity",
    );
  });
});
