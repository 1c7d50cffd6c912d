/**
 * Dual-stack pairs (the IaaS pool shape, rule 4): `ipam.spidernet.io/pair-pool: <sibling>` joins an
 * IPv4 and an IPv6 IaaS pool that serve the same Pods, each Pod taking one address from
 * each. The rules are those of Spiderpool's IaaS-pool validating webhook
 * (`pkg/ippoolmanager/ippool_validate.go`, `validatePairPool`: no self-reference, opposite
 * IP versions, IPv4 static capacity at most the IPv6 one, identical `nodeName` and
 * `podAffinity`, a sibling that does not exist yet allowed). Unlike there, the pair is
 * checked whichever side changes: against the pool this one names, and against every pool
 * that names this one. Siblings come from a {@link PoolDirectory}
 * (in the server, the informer-backed cache), read from memory only.
 */
import type { PoolCatalog } from '../spiderpool/candidate-categories.js';
import { forbidden, invalid, tooMany, type FieldError } from '../kubernetes/field-errors.js';
import { Path } from '../kubernetes/field-path.js';
import { escapeUnprintable, quoteShown } from '../go/strconv-quote.js';
import { MAX_COUNTED_ENTRIES, MAX_PAIRED_ENTRIES_PER_FIELD, staticCapacity, type Capacity, type IPVersion } from '../spiderpool/ip-ranges.js';
import type { Findings, Violation } from './ratchet.js';
import { pairSelf } from './pool-rules/pair-self.js';
import { PAIR_POOL_ANNOTATION, annotation, annotationField, iaasProvider, ipVersionOf, nodeNames, showNodes, type SpiderIPPool } from '../spiderpool/pool.js';

/**
 * What the pool rules may know about other pools: `unavailable()` (`undefined` when the pools
 * are known, i.e. synced; else why not, for the warning), `get(name)` and `ofVersion(v)`
 * (the candidate-pool rules), and the pair lookup.
 */
export interface PoolDirectory extends PoolCatalog {
  /** The stored pools whose pair-pool annotation names `name`. */
  pairedWith(name: string): SpiderIPPool[];
}

/** A directory that knows nothing: the `review` CLI, a server without a cluster connection. */
export function noPoolDirectory(reason: string): PoolDirectory {
  return { unavailable: () => reason, get: () => undefined, ofVersion: () => [], pairedWith: () => [] };
}

const PAIR_FIELD = annotationField(PAIR_POOL_ANNOTATION);

/**
 * What an IaaS pool write gets while the pool cache has not synced (`serve --unsynced-pools`):
 * `Refuse` (the server's default: the pair rules are refusals) or `Warn` (checks skipped,
 * with a warning). Only the pool cache can be unsynced; without a cluster it is always a warning.
 */
export const UNSYNCED_POOLS = ['Refuse', 'Warn'] as const;
export type UnsyncedPools = (typeof UNSYNCED_POOLS)[number];

/** What the server logs and `/readyz` say pair-dependent writes get while the cache is unsynced. */
export function unsyncedEffect(setting: UnsyncedPools): string {
  return setting === 'Refuse' ? 'IaaS pool writes are refused (--unsynced-pools=Refuse)' : 'dual-stack pair checks are skipped with a warning';
}

/**
 * The refusal of an IaaS pool write while `pools` has not synced and `setting` is `Refuse`:
 * every IaaS pool may be in a pair (its own annotation, or another pool naming it, even one
 * created first), so none can be judged. Not ratcheted: it is about the cache, not the pool.
 *
 * @returns a `Forbidden` on the pair annotation, or `undefined` (synced, or `Warn`).
 */
export function unsyncedRefusal(pools: PoolDirectory, setting: UnsyncedPools): FieldError | undefined {
  const reason = pools.unavailable();
  if (reason === undefined || setting === 'Warn') return undefined;
  return forbidden(
    PAIR_FIELD,
    `IaaS pool writes are refused until the webhook's pool cache is synced (${reason}), because the dual-stack pair rules ` +
      "compare this pool with the stored pools; retry in a minute; if it persists, check the webhook's logs, its RBAC " +
      '(get, list, watch on spiderippools) and the API server (serve --unsynced-pools=Warn lets such writes through with a warning)',
  );
}

/**
 * Nesting deeper than any label selector (`matchExpressions[].values[]` is 3 levels); the
 * API server's schema validation keeps real objects far below it, so only a hand-made
 * review reaches it, and it must not exhaust the stack.
 */
const MAX_CANONICAL_DEPTH = 32;

/** JSON with object keys sorted, so two selectors written in a different key order compare equal. */
function canonical(value: unknown, depth = 0): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value !== 'object') return JSON.stringify(value);
  if (depth >= MAX_CANONICAL_DEPTH) return '"…"';
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, depth + 1)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v, depth + 1)}`).join(',')}}`;
}

/**
 * A pod selector with the empty forms made absent: `{}`, `{matchLabels: {}}` and
 * `{matchExpressions: []}` select every Pod (apimachinery's `LabelSelectorAsSelector`
 * returns `labels.Everything()` for an empty selector), which is what Spiderpool does
 * for no `podAffinity` at all, so they all mean the same.
 */
function meaningfulSelector(selector: unknown): unknown {
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) return selector ?? undefined;
  const { matchLabels, matchExpressions, ...rest } = selector as Record<string, unknown>;
  const emptyLabels = matchLabels === undefined || matchLabels === null || (typeof matchLabels === 'object' && Object.keys(matchLabels).length === 0);
  const emptyExpressions = matchExpressions === undefined || matchExpressions === null || (Array.isArray(matchExpressions) && matchExpressions.length === 0);
  return emptyLabels && emptyExpressions && Object.keys(rest).length === 0 ? undefined : selector;
}

/** How many characters of a pod selector a message shows. */
const SELECTOR_SHOWN_CHARS = 200;

/** A selector as canonical JSON, bounded and with anything a terminal could interpret escaped. */
function showSelector(value: unknown): string {
  const text = escapeUnprintable(canonical(value));
  return text === 'null' ? 'none' : text.length <= SELECTOR_SHOWN_CHARS ? text : `${text.slice(0, SELECTOR_SHOWN_CHARS)}…`;
}

/**
 * A pool's capacity, or what keeps it from being counted: a violation for the pool under
 * review (its entry is refused; `undefined` when {@link entryCounts} refused it already),
 * a warning for a stored partner (the comparison is skipped).
 */
type Counted = { addresses: bigint } | { violation: Violation | undefined } | { warning: string };

/** Why a pool's capacity was not counted: too many entries. */
function tooManyEntries(entries: number): string {
  return `holds ${entries} entries in spec.ips and spec.excludeIPs, more than the ${MAX_COUNTED_ENTRIES} this webhook counts`;
}

function countOwn(pool: SpiderIPPool, version: IPVersion, sibling: string): Counted {
  const capacity = staticCapacity(version, pool.spec?.ips ?? [], pool.spec?.excludeIPs ?? []);
  if (capacity.ok) return { addresses: capacity.addresses };
  if ('entries' in capacity) return { violation: undefined };
  const { field, index, value, reason } = capacity.malformed;
  const detail =
    `${reason} (Spiderpool writes an address or an ordered range "a-b" of IPv${version} addresses), so this pool's ` +
    `capacity cannot be compared with its pair pool ${quoteShown(sibling)}'s; write the entry as Spiderpool does`;
  // Keyed by the value, not the index: an entry inserted before an old malformed one
  // moves it, and must not make it a new violation.
  return {
    violation: {
      rule: 'pair-entry-malformed',
      partner: sibling,
      key: `pair:${sibling}:entry:spec.${field}:${value}`,
      measure: value,
      error: invalid(Path.of('spec', field).index(index).toString(), value, detail),
    },
  };
}

/**
 * A bound found in review of the pair rule: a pool in a pair may not hold more than
 * {@link MAX_PAIRED_ENTRIES_PER_FIELD} entries in `spec.ips` or `spec.excludeIPs`
 * (`TooMany`), or padding it with single addresses would skip the capacity comparison.
 * The count is the measure, so a stored pool over the bound may shrink but not grow.
 */
function entryCounts(pool: SpiderIPPool): Violation[] {
  const why = 'a pool in a dual-stack pair must be countable for the IPv4 ≤ IPv6 capacity rule; write contiguous addresses as ranges ("a-b")';
  return (['ips', 'excludeIPs'] as const)
    .map((key) => ({ field: Path.of('spec', key).toString(), entries: pool.spec?.[key]?.length ?? 0 }))
    .filter(({ entries }) => entries > MAX_PAIRED_ENTRIES_PER_FIELD)
    .map(({ field, entries }) => ({
      rule: 'pair-entries',
      key: `entries:${field}`,
      measure: BigInt(entries),
      error: tooMany(field, entries, MAX_PAIRED_ENTRIES_PER_FIELD, why),
    }));
}

/**
 * Stored partners' capacities, computed once per stored object (reviews read them again
 * and again). A partner is counted only as its own IP version, so the object is the key.
 */
const siblingCapacities = new WeakMap<SpiderIPPool, Capacity>();

function countSibling(sibling: SpiderIPPool, name: string, version: IPVersion): Counted {
  let capacity = siblingCapacities.get(sibling);
  if (capacity === undefined) {
    capacity = staticCapacity(version, sibling.spec?.ips ?? [], sibling.spec?.excludeIPs ?? []);
    siblingCapacities.set(sibling, capacity);
  }
  if (capacity.ok) return { addresses: capacity.addresses };
  const why =
    'entries' in capacity
      ? `it ${tooManyEntries(capacity.entries)}`
      : `its ${Path.of('spec', capacity.malformed.field).index(capacity.malformed.index)} ${capacity.malformed.reason}`;
  return { warning: `spec.ips: the capacity of pair pool ${quoteShown(name)} was not compared: ${why}; fix that pool` };
}

/** Rule 4's capacity part: the IPv4 pool holds at most as many addresses as the IPv6 pool. */
function capacity(pool: SpiderIPPool, version: IPVersion, sibling: SpiderIPPool, siblingName: string, found: Findings): void {
  const own = countOwn(pool, version, siblingName);
  const other = countSibling(sibling, siblingName, version === 4 ? 6 : 4);
  for (const counted of [own, other]) {
    if ('violation' in counted && counted.violation !== undefined) found.violations.push(counted.violation);
    if ('warning' in counted) found.warnings.push(counted.warning);
  }
  if (!('addresses' in own) || !('addresses' in other)) return;
  const [v4, v6] = version === 4 ? [own.addresses, other.addresses] : [other.addresses, own.addresses];
  if (v4 <= v6) return;
  const why =
    'each Pod of a dual-stack pair takes one address from each pool, so IPv4 addresses beyond the IPv6 count would ' +
    'let Pods get an IPv4 address and then fail at start for want of an IPv6 one';
  const detail =
    version === 4
      ? `holds ${v4} addresses (spec.ips minus spec.excludeIPs), more than the ${v6} of its IPv6 pair pool ${quoteShown(siblingName)}: ${why}; remove addresses here or add them to ${quoteShown(siblingName)} first`
      : `holds ${v6} addresses (spec.ips minus spec.excludeIPs), fewer than the ${v4} of its IPv4 pair pool ${quoteShown(siblingName)}: ${why}; keep at least ${v4} addresses here or shrink ${quoteShown(siblingName)} first`;
  found.violations.push({
    rule: 'pair-capacity',
    partner: siblingName,
    key: `pair:${siblingName}:capacity`,
    measure: v4 - v6,
    error: invalid('spec.ips', undefined, detail),
  });
}

/** Each side's update alone would break the pair, so the way through is to unpair first. */
const HOW_TO_CHANGE_BOTH = 'to change it on a pair, remove ipam.spidernet.io/pair-pool from both pools, change both, then add it back';

/** What of a pair is compared, in violation keys and rule names. */
type PairPart = 'not-iaas' | 'ipVersion' | 'nodeName' | 'podAffinity';

/** Rule 4 against one sibling that exists. */
function checkPair(pool: SpiderIPPool, sibling: SpiderIPPool, siblingName: string, found: Findings): void {
  const add = (what: PairPart, measure: string, error: FieldError) =>
    found.violations.push({ rule: `pair-${what}`, partner: siblingName, key: `pair:${siblingName}:${what}`, measure, error });
  const sib = quoteShown(siblingName);
  if (iaasProvider(sibling) === undefined) {
    add(
      'not-iaas',
      '',
      invalid(
        PAIR_FIELD,
        siblingName,
        `names pool ${sib}, which is not an IaaS pool (no ipam.spidernet.io/iaas-provider annotation), so this dual-stack pair is broken: both pools of a pair must get their sub-ENIs from the IaaS provider; pair this pool with an IaaS pool, or remove the annotation`,
      ),
    );
    // The pair is broken at its root; comparing the rest would only add noise.
    return;
  }
  const version = ipVersionOf(pool);
  const siblingVersion = ipVersionOf(sibling);
  if (version === undefined || siblingVersion === undefined) {
    found.warnings.push(`spec.ipVersion: the IP versions of this pool and its pair pool ${sib} are not both known yet, so their capacities were not compared`);
  } else if (version === siblingVersion) {
    add(
      'ipVersion',
      '',
      invalid(
        'spec.ipVersion',
        String(version),
        `is the same as pair pool ${sib}'s: a dual-stack pair is one IPv4 and one IPv6 pool; pair this pool with a pool of the other version`,
      ),
    );
  } else capacity(pool, version, sibling, siblingName, found);

  const nodes = nodeNames(pool);
  const siblingNodes = nodeNames(sibling);
  if (canonical(nodes) !== canonical(siblingNodes)) {
    add(
      'nodeName',
      canonical(nodes),
      invalid(
        'spec.nodeName',
        undefined,
        `is ${showNodes(nodes)} but pair pool ${sib} has ${showNodes(siblingNodes)}: the two pools of a pair serve the same Pods, ` +
          `which need both addresses on the same node; make spec.nodeName identical on both pools (${HOW_TO_CHANGE_BOTH})`,
      ),
    );
  }
  const affinity = meaningfulSelector(pool.spec?.podAffinity);
  const siblingAffinity = meaningfulSelector(sibling.spec?.podAffinity);
  if (canonical(affinity) !== canonical(siblingAffinity)) {
    add(
      'podAffinity',
      canonical(affinity),
      invalid(
        'spec.podAffinity',
        undefined,
        `is ${showSelector(affinity)} but pair pool ${sib} has ${showSelector(siblingAffinity)}: a Pod that may use only one ` +
          `of the two pools would get one address family and fail at start; make spec.podAffinity identical on both pools (${HOW_TO_CHANGE_BOTH})`,
      ),
    );
  }
}

/**
 * Rule 4 for IaaS pool `name`: its own pair annotation, and the pair with every existing
 * partner (the pool it names, IaaS pools that name it).
 *
 * @returns violations (causes on `spec.ipVersion`, `spec.ips` (also `TooMany` when a pool
 *   in a pair holds more than {@link MAX_PAIRED_ENTRIES_PER_FIELD} entries there, or in
 *   `spec.excludeIPs`), `spec.nodeName`, `spec.podAffinity` or the pair annotation) and warnings: a sibling that does not exist
 *   yet, or cross-pool checks skipped because `pools` is unavailable.
 */
export function pairFindings(pool: SpiderIPPool, name: string, pools: PoolDirectory): Findings {
  const found: Findings = { violations: [], warnings: [] };
  const named = annotation(pool, PAIR_POOL_ANNOTATION);
  if (named === '') {
    // Spiderpool reads an empty value as "no pair" (validatePairPool), so it is not refused,
    // even when the pool's own name is empty too (a generateName CREATE): there is no pair.
    found.warnings.push(`${PAIR_FIELD}: is empty, so this pool has no dual-stack pair; set it to the other pool's name, or remove it`);
  }
  const self = pairSelf(named, name);
  if (self !== undefined) found.violations.push(self);
  const namesSibling = named !== undefined && named !== '' && named !== name;
  const reason = pools.unavailable();
  if (reason !== undefined) {
    if (namesSibling) found.violations.push(...entryCounts(pool));
    found.warnings.push(
      `${PAIR_FIELD}: dual-stack pair checks against other pools were skipped (${reason}); a pair this pool names or is named in is not checked`,
    );
    return found;
  }
  const partners = new Map<string, SpiderIPPool>();
  if (namesSibling) {
    const sibling = pools.get(named);
    if (sibling === undefined) {
      found.warnings.push(
        `${PAIR_FIELD}: pair pool ${quoteShown(named)} does not exist yet, so the pairing is not checked now; it is checked when either pool is next created or updated`,
      );
    } else partners.set(named, sibling);
  }
  for (const other of pools.pairedWith(name)) {
    const otherName = other.metadata.name ?? '';
    if (otherName !== name && iaasProvider(other) !== undefined && !partners.has(otherName)) partners.set(otherName, other);
  }
  if (namesSibling || partners.size > 0) found.violations.push(...entryCounts(pool));
  for (const [siblingName, sibling] of partners) checkPair(pool, sibling, siblingName, found);
  return found;
}
