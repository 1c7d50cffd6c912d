/**
 * A SpiderIPPool's static capacity: how many addresses `spec.ips` holds once
 * `spec.excludeIPs` is taken out. Entries are written as Spiderpool writes them
 * (spidernet-io/spiderpool `pkg/ip/iprange.go`, `IsIPRange`): a single address
 * (`10.0.0.5`) or an ordered range of two addresses of the pool's version joined by `-`
 * without spaces (`10.0.0.10-10.0.0.20`, `fd00::1-fd00::ff`); `AssembleTotalIPs` takes
 * the union of `ips` minus the union of `excludeIPs`, so overlaps count once and
 * exclusions outside the ranges remove nothing. Addresses are parsed by `ipaddr.js`
 * and counted as bigint, so IPv6 ranges of any size (a whole /64 holds 2^64) are exact.
 */
import ipaddr from 'ipaddr.js';
import { quoteShown } from '../go/strconv-quote.js';

/** `spec.ipVersion`: 4 or 6. */
export type IPVersion = 4 | 6;

/** One address range, both ends included, as unsigned integers (32 or 128 bits). */
interface Interval {
  first: bigint;
  last: bigint;
}

/** An entry Spiderpool would not accept, with where it is (`spec[field][index]`) and why. */
interface MalformedEntry {
  field: 'ips' | 'excludeIPs';
  index: number;
  value: string;
  reason: string;
}

/**
 * The most entries (`spec.ips` and `spec.excludeIPs` together) counted. Spiderpool writes
 * ranges, so real pools hold tens to a few thousand entries; the bound keeps a hand-made
 * 3 MiB review from holding the event loop for seconds (one entry parses in microseconds).
 */
export const MAX_COUNTED_ENTRIES = 65_536;

/**
 * The most entries the pool under review may hold in each of `spec.ips` and
 * `spec.excludeIPs` while in a pair: half of {@link MAX_COUNTED_ENTRIES}, so that a pool
 * within it is always counted (padding a pool past the count bound must not skip the
 * capacity comparison).
 */
export const MAX_PAIRED_ENTRIES_PER_FIELD = MAX_COUNTED_ENTRIES / 2;

export type Capacity = { ok: true; addresses: bigint } | { ok: false; malformed: MalformedEntry } | { ok: false; entries: number };

/** Go's `net.ParseIP` IPv4 form: four decimal fields, no leading zeros (checked before ipaddr.js, which also takes inet_aton forms). */
const DOTTED_DECIMAL = /^(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}$/;

/**
 * An IPv6 address whose last 32 bits are written as dotted IPv4 (`::ffff:10.0.0.1`) with
 * those bits as two hex groups, or `undefined` when that IPv4 part is not Go's form.
 * ipaddr.js takes inet_aton forms there too (`::ffff:010.0.0.1`, `0x0a.0.0.1`), which Go's
 * `net.ParseIP` refuses, and reads `::1.2.3.4` as `::ffff:1.2.3.4` where Go reads
 * `::102:304`; rewriting the IPv4 part first gives Go's answer in both cases.
 */
function embeddedIPv4AsHex(text: string): string | undefined {
  const colon = text.lastIndexOf(':');
  const tail = text.slice(colon + 1);
  if (!tail.includes('.')) return text;
  if (!DOTTED_DECIMAL.test(tail)) return undefined;
  const [a, b, c, d] = ipaddr.IPv4.parse(tail).octets as [number, number, number, number];
  return `${text.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * One address of `version` as an unsigned integer, or a reason it is not one. IPv4 must
 * be four decimal parts without leading zeros (Go's `net.ParseIP`, which Spiderpool's
 * validator uses, refuses the octal-looking `010.0.0.1` and the short `10.1`); IPv6 may
 * not carry a zone (`%eth0`), which `net.ParseIP` also refuses, and an embedded IPv4
 * part follows the IPv4 rule ({@link embeddedIPv4AsHex}). Each entry is parsed once
 * (`parse` throws only for an entry that is refused anyway, and counting stops there).
 */
function parseAddress(version: IPVersion, text: string): bigint | string {
  try {
    if (version === 4 && DOTTED_DECIMAL.test(text)) return ipv4Integer(ipaddr.IPv4.parse(text).octets);
    const hex = version === 6 && text.includes(':') && !text.includes('%') ? embeddedIPv4AsHex(text) : undefined;
    if (hex !== undefined) return ipv6Integer(ipaddr.IPv6.parse(hex).parts);
  } catch {
    // not an address of this version: answered below
  }
  return `${quoteShown(text)} is not an IPv${version} address`;
}

/** Four octets as one integer; below 2^32, so exact as a number until the one conversion. */
function ipv4Integer(octets: readonly number[]): bigint {
  return BigInt(octets.reduce((n, octet) => n * 256 + octet, 0));
}

/**
 * Eight 16-bit parts as one 128-bit integer, in three exact number chunks (48, 48 and 32
 * bits): far fewer bigint operations than byte by byte, which counting 65 536 entries feels.
 */
function ipv6Integer(parts: readonly number[]): bigint {
  const chunk = (from: number, to: number) => BigInt(parts.slice(from, to).reduce((n, part) => n * 65536 + part, 0));
  return (chunk(0, 3) << 80n) | (chunk(3, 6) << 32n) | chunk(6, 8);
}

/**
 * Parses one `spec.ips`/`spec.excludeIPs` entry: `a` or `a-b` with `a` ≤ `b`.
 *
 * @returns the interval, or the reason Spiderpool's `IsIPRange` would refuse it.
 */
export function parseIPRange(version: IPVersion, entry: string): Interval | string {
  const ends = entry.split('-');
  if (ends.length > 2) return 'must be one address or two joined by "-"';
  const first = parseAddress(version, ends[0]!);
  if (typeof first === 'string') return first;
  if (ends.length === 1) return { first, last: first };
  const last = parseAddress(version, ends[1]!);
  if (typeof last === 'string') return last;
  return first <= last ? { first, last } : 'the range must be ordered, its first address not above its last';
}

/** Sorts and merges overlapping or adjacent intervals into disjoint ones. */
function union(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const merged: Interval[] = [];
  for (const next of sorted) {
    const top = merged[merged.length - 1];
    if (top !== undefined && next.first <= top.last + 1n) {
      if (next.last > top.last) top.last = next.last;
    } else merged.push({ ...next });
  }
  return merged;
}

function size(intervals: readonly Interval[]): bigint {
  return intervals.reduce((sum, i) => sum + (i.last - i.first + 1n), 0n);
}

/** How many addresses two sets of disjoint, sorted intervals share (one sweep). */
function overlap(a: readonly Interval[], b: readonly Interval[]): bigint {
  let shared = 0n;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const first = x.first > y.first ? x.first : y.first;
    const last = x.last < y.last ? x.last : y.last;
    if (first <= last) shared += last - first + 1n;
    if (x.last < y.last) i++;
    else j++;
  }
  return shared;
}

function parseAll(version: IPVersion, field: MalformedEntry['field'], entries: readonly string[]): Interval[] | MalformedEntry {
  const intervals: Interval[] = [];
  for (const [index, value] of entries.entries()) {
    const parsed = parseIPRange(version, value);
    if (typeof parsed === 'string') return { field, index, value, reason: parsed };
    intervals.push(parsed);
  }
  return intervals;
}

/**
 * The number of distinct addresses in `ips` minus `excludeIPs` (Spiderpool's
 * `AssembleTotalIPs`), exact at any size.
 *
 * A malformed entry makes the capacity unknown rather than 0: counting it as empty would
 * let a typo pass (or refuse) a pair comparison on a number that is not the pool's.
 * Spiderpool's own webhook refuses such entries; this returns the first one so the
 * caller can say which entry keeps it from comparing. More than
 * {@link MAX_COUNTED_ENTRIES} entries are not counted either (`entries` says how many).
 */
export function staticCapacity(version: IPVersion, ips: readonly string[], excludeIPs: readonly string[]): Capacity {
  if (ips.length + excludeIPs.length > MAX_COUNTED_ENTRIES) return { ok: false, entries: ips.length + excludeIPs.length };
  const included = parseAll(version, 'ips', ips);
  if (!Array.isArray(included)) return { ok: false, malformed: included };
  const excluded = parseAll(version, 'excludeIPs', excludeIPs);
  if (!Array.isArray(excluded)) return { ok: false, malformed: excluded };
  const pool = union(included);
  return { ok: true, addresses: size(pool) - overlap(pool, union(excluded)) };
}
