/**
 * Just enough DER to read a certificate's signature algorithm: Node 20's X509Certificate
 * does not expose it, and the openssl CLI is not used in unit tests.
 */

interface Tlv {
  tag: number;
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value. */
  end: number;
}

function readTlv(buf: Buffer, offset: number): Tlv {
  const tag = buf[offset]!;
  let len = buf[offset + 1]!;
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!;
    start += n;
  }
  return { tag, start, end: start + len };
}

function decodeOid(bytes: Buffer): string {
  const parts = [Math.floor(bytes[0]! / 40), bytes[0]! % 40];
  let value = 0;
  for (const b of bytes.subarray(1)) {
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

function algorithmOid(buf: Buffer, algorithmIdentifier: Tlv): string {
  const oid = readTlv(buf, algorithmIdentifier.start);
  if (oid.tag !== 0x06) throw new Error('AlgorithmIdentifier does not start with an OID');
  return decodeOid(buf.subarray(oid.start, oid.end));
}

/**
 * OIDs of Certificate.signatureAlgorithm and of TBSCertificate.signature (RFC 5280 requires
 * them to be equal).
 */
export function signatureAlgorithmOids(der: Buffer): { outer: string; tbs: string } {
  const cert = readTlv(der, 0);
  const tbs = readTlv(der, cert.start);
  const outerAlg = readTlv(der, tbs.end);
  let field = readTlv(der, tbs.start);
  if (field.tag === 0xa0) field = readTlv(der, field.end); // explicit [0] version
  const tbsAlg = readTlv(der, field.end); // after serialNumber
  return { outer: algorithmOid(der, outerAlg), tbs: algorithmOid(der, tbsAlg) };
}

export const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';
