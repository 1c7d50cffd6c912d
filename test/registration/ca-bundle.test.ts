import { X509Certificate } from 'node:crypto';
import { jest } from '@jest/globals';
import { generateCertificates } from '../../src/certs/generate.js';
import { CA_BUNDLE_OVERLAP_MS, overlappedBundle } from '../../src/registration/ca-bundle.js';

jest.setTimeout(60_000);

const HOUR_MS = 3_600_000;
/** A CA made `hoursLater` hours after now, valid `validityMs` (ten years by default). */
async function caMadeAt(hoursLater: number, validityMs?: number): Promise<string> {
  const at = Date.now() + hoursLater * HOUR_MS;
  const clock = jest.spyOn(Date, 'now').mockReturnValue(at);
  try {
    return (await generateCertificates({ serviceName: 'svc', namespace: 'ns', ...(validityMs === undefined ? {} : { caValidityMs: validityMs }) })).caCertPem;
  } finally {
    clock.mockRestore();
  }
}
const fingerprints = (pem: string) => (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b).fingerprint256);

let oldCa: string;
let newCa: string;
beforeAll(async () => {
  oldCa = await caMadeAt(0);
  newCa = await caMadeAt(1);
});

const now = Date.now() + 2 * HOUR_MS;
const young = { ownSinceMs: now - 1000, nowMs: now, overlapMs: CA_BUNDLE_OVERLAP_MS };
const settled = { ownSinceMs: now - CA_BUNDLE_OVERLAP_MS, nowMs: now, overlapMs: CA_BUNDLE_OVERLAP_MS };

describe('overlappedBundle', () => {
  it('keeps the old CA beside a new one while the new one is younger than the overlap, newest first', () => {
    expect(fingerprints(overlappedBundle({ own: newCa, stored: [oldCa], ...young }))).toEqual(fingerprints(newCa + oldCa));
  });

  it('drops the older CA once its own CA is as old as the overlap, leaving ca.crt as it is', () => {
    expect(overlappedBundle({ own: newCa, stored: [oldCa, newCa + oldCa], ...settled })).toBe(newCa);
  });

  it('a replica still serving the old CA keeps the newer one, and writes the same bytes as the one ahead of it', () => {
    const ahead = overlappedBundle({ own: newCa, stored: [oldCa], ...young });
    expect(overlappedBundle({ own: oldCa, stored: [ahead], ...settled })).toBe(ahead);
    // ...and puts the old one back if it was dropped while it still serves it.
    expect(overlappedBundle({ own: oldCa, stored: [newCa], ...settled })).toBe(ahead);
  });

  it('drops expired CAs and what is not a certificate, even while young', async () => {
    const expiring = await caMadeAt(-3, HOUR_MS);
    const fake = '-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n';
    expect(overlappedBundle({ own: newCa, stored: [expiring + fake, 'not PEM'], ...young })).toBe(newCa);
  });

  it('the same bundle whatever order the stored ones come in, and the same as a replica whose ca.crt holds its own CA only', () => {
    const a = overlappedBundle({ own: newCa, stored: [oldCa + newCa], ...young });
    expect(overlappedBundle({ own: newCa, stored: [newCa, oldCa], ...young })).toBe(a);
    expect(overlappedBundle({ own: oldCa, stored: [newCa], ...young })).toBe(a);
    expect(fingerprints(a)).toEqual(fingerprints(newCa + oldCa));
  });

  it('returns its own bundle as it is when none of it is a certificate', () => {
    expect(overlappedBundle({ own: 'garbage', stored: [oldCa], ...young })).toBe('garbage');
  });
});
