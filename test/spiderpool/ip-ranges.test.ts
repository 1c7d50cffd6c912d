import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { MAX_COUNTED_ENTRIES, parseIPRange, staticCapacity } from '../../src/spiderpool/ip-ranges.js';

const count = (version: 4 | 6, ips: string[], excludeIPs: string[] = []) => {
  const capacity = staticCapacity(version, ips, excludeIPs);
  if (!capacity.ok) throw new Error(`not counted: ${JSON.stringify(capacity)}`);
  return capacity.addresses;
};

describe('staticCapacity: spec.ips minus spec.excludeIPs, exactly', () => {
  it.each<[string, 4 | 6, string[], string[], bigint]>([
    ['no entries', 4, [], [], 0n],
    ['one address', 4, ['10.0.0.5'], [], 1n],
    ['a range counts both ends', 4, ['10.0.0.10-10.0.0.20'], [], 11n],
    ['a range of one address', 4, ['10.0.0.7-10.0.0.7'], [], 1n],
    ['overlapping ranges count once', 4, ['10.0.0.10-10.0.0.20', '10.0.0.15-10.0.0.30'], [], 21n],
    ['a range inside another', 4, ['10.0.0.0-10.0.0.255', '10.0.0.3-10.0.0.4'], [], 256n],
    ['adjacent ranges', 4, ['10.0.0.0-10.0.0.9', '10.0.0.10-10.0.0.19'], [], 20n],
    ['duplicated single address', 4, ['10.0.0.1', '10.0.0.1'], [], 1n],
    ['exclusions inside', 4, ['10.0.0.10-10.0.0.20'], ['10.0.0.12', '10.0.0.15-10.0.0.16'], 8n],
    ['exclusions outside remove nothing', 4, ['10.0.0.10-10.0.0.20'], ['10.0.1.0-10.0.1.255', '10.0.0.9', '10.0.0.21'], 11n],
    ['exclusions straddling both ends', 4, ['10.0.0.10-10.0.0.20'], ['10.0.0.0-10.0.0.11', '10.0.0.19-10.0.0.30'], 7n],
    ['overlapping exclusions count once', 4, ['10.0.0.0-10.0.0.99'], ['10.0.0.10-10.0.0.19', '10.0.0.15-10.0.0.24'], 85n],
    ['everything excluded', 4, ['10.0.0.1-10.0.0.2'], ['10.0.0.0-10.0.0.255'], 0n],
    ['the whole IPv4 space', 4, ['0.0.0.0-255.255.255.255'], [], 2n ** 32n],
    ['IPv6 single', 6, ['fd00::1'], [], 1n],
    ['IPv6 range', 6, ['fd00::10-fd00::ff'], [], 240n],
    ['a /64-sized IPv6 range, beyond 2^53', 6, ['fd00:0:0:1::-fd00:0:0:1:ffff:ffff:ffff:ffff'], [], 2n ** 64n],
    ['a /64 minus one address', 6, ['fd00:0:0:1::-fd00:0:0:1:ffff:ffff:ffff:ffff'], ['fd00:0:0:1::1'], 2n ** 64n - 1n],
    ['two /64s minus an overlap', 6, ['fd00:0:0:1::-fd00:0:0:2:ffff:ffff:ffff:ffff', 'fd00:0:0:2::-fd00:0:0:2::ff'], [], 2n ** 65n],
    ['the whole IPv6 space', 6, ['::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], [], 2n ** 128n],
    ['IPv6 written in different forms is the same address', 6, ['fd00::1', 'fd00:0:0:0:0:0:0:1', 'FD00::0001'], [], 1n],
  ])('%s', (_case, version, ips, excludeIPs, expected) => {
    expect(count(version, ips, excludeIPs)).toBe(expected);
  });

  it('agrees with counting address by address (small IPv4 ranges)', () => {
    const entry = fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 })).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 6 }), fc.array(entry, { maxLength: 6 }), (ips, excludes) => {
        const set = new Set<number>();
        for (const [a, b] of ips) for (let i = a; i <= b; i++) set.add(i);
        for (const [a, b] of excludes) for (let i = a; i <= b; i++) set.delete(i);
        const text = ([a, b]: readonly [number, number]) => (a === b ? `10.0.0.${a}` : `10.0.0.${a}-10.0.0.${b}`);
        expect(count(4, ips.map(text), excludes.map(text))).toBe(BigInt(set.size));
      }),
    );
  });
});

describe('addresses become integers exactly', () => {
  /** The 128-bit value byte by byte, independently of the parser's chunked conversion. */
  const value = (text: string) =>
    ipaddr
      .parse(text)
      .toByteArray()
      .reduce((n, byte) => (n << 8n) | BigInt(byte), 0n);

  it('a range of random IPv6 ends holds last - first + 1 addresses', () => {
    const address = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((parts) => new ipaddr.IPv6(parts).toString());
    fc.assert(
      fc.property(address, address, (a, b) => {
        const [first, last] = value(a) <= value(b) ? [a, b] : [b, a];
        expect(count(6, [`${first}-${last}`])).toBe(value(last) - value(first) + 1n);
      }),
    );
  });

  it('a range of random IPv4 ends holds last - first + 1 addresses', () => {
    const address = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }).map((octets) => octets.join('.'));
    fc.assert(
      fc.property(address, address, (a, b) => {
        const [first, last] = value(a) <= value(b) ? [a, b] : [b, a];
        expect(count(4, [`${first}-${last}`])).toBe(value(last) - value(first) + 1n);
      }),
    );
  });
});

describe('malformed entries make the capacity unknown, never 0', () => {
  it.each<[4 | 6, string, RegExp | undefined]>([
    [4, '010.0.0.1', /is not an IPv4 address/], // Go's net.ParseIP refuses leading zeros
    [4, '10.1', /is not an IPv4 address/],
    [4, '10.0.0.256', /is not an IPv4 address/],
    [4, '10.0.0.1 - 10.0.0.9', /is not an IPv4 address/],
    [4, '10.0.0.9-10.0.0.1', /must be ordered/],
    [4, '10.0.0.1-10.0.0.2-10.0.0.3', /one address or two/],
    [4, '10.0.0.0/24', /is not an IPv4 address/],
    [4, 'fd00::1', /is not an IPv4 address/],
    [6, '10.0.0.1', /is not an IPv6 address/],
    [6, 'fe80::1%eth0', /is not an IPv6 address/],
    [6, 'fd00::ff-fd00::1', /must be ordered/],
    [4, '', /is not an IPv4 address/],
    [4, '0x0a.0.0.1', /is not an IPv4 address/], // inet_aton forms ipaddr.js would take
    [4, '167772161', /is not an IPv4 address/],
    [4, '10.0.0.1.', /is not an IPv4 address/],
    [6, 'fd00::1::2', /is not an IPv6 address/],
    [6, 'fd00::10000', /is not an IPv6 address/],
    [6, '::ffff:10.0.0.1', undefined], // IPv4-mapped IPv6 is an IPv6 address to net.ParseIP too
    // net.ParseIP parses an embedded IPv4 part as IPv4: no leading zeros, no inet_aton forms
    [6, '::ffff:010.0.0.1', /is not an IPv6 address/],
    [6, '::ffff:10.0.0.01', /is not an IPv6 address/],
    [6, '::ffff:0x0a.0.0.1', /is not an IPv6 address/],
    [6, '::ffff:10.0.1', /is not an IPv6 address/],
    [6, '::ffff:10.0.0.256', /is not an IPv6 address/],
  ])('IPv%s %j', (version, entry, reason) => {
    const parsed = parseIPRange(version, entry);
    if (reason === undefined) expect(typeof parsed).toBe('object');
    else expect(parsed).toMatch(reason);
  });

  it('reads an embedded IPv4 part as Go does: `::1.2.3.4` is ::102:304, not ::ffff:102:304', () => {
    expect(parseIPRange(6, '::1.2.3.4')).toEqual({ first: 0x01020304n, last: 0x01020304n });
    expect(parseIPRange(6, '::ffff:1.2.3.4')).toEqual({ first: 0xffff01020304n, last: 0xffff01020304n });
    expect(parseIPRange(6, '1:2:3:4:5:6:10.0.0.1')).toEqual(parseIPRange(6, '1:2:3:4:5:6:a00:1'));
  });

  it('counts at most MAX_COUNTED_ENTRIES entries', () => {
    const entries = Array.from({ length: MAX_COUNTED_ENTRIES }, (_, i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
    expect(staticCapacity(4, entries, [])).toEqual({ ok: true, addresses: BigInt(MAX_COUNTED_ENTRIES) });
    expect(staticCapacity(4, entries, ['10.0.0.1'])).toEqual({ ok: false, entries: MAX_COUNTED_ENTRIES + 1 });
  });

  it('names the first malformed entry and its field', () => {
    expect(staticCapacity(4, ['10.0.0.1', '10.0.0.x'], [])).toEqual({
      ok: false,
      malformed: { field: 'ips', index: 1, value: '10.0.0.x', reason: '"10.0.0.x" is not an IPv4 address' },
    });
    expect(staticCapacity(6, ['fd00::1'], ['fd00::1', 'nope'])).toMatchObject({
      ok: false,
      malformed: { field: 'excludeIPs', index: 1, value: 'nope' },
    });
  });
});
