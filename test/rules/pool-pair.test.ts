/** IaaS pool shape rule 4: dual-stack pairs, checked against an in-memory pool index (what the informer fills). */
import { createReviewer, NO_CLUSTER_REASON } from '../../src/rules/registry.js';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { NOT_SYNCED_REASON, PoolIndex } from '../../src/store/pool-index.js';
import { MAX_COUNTED_ENTRIES, MAX_PAIRED_ENTRIES_PER_FIELD } from '../../src/spiderpool/ip-ranges.js';
import { loadPool, loadReview } from '../fixtures/load.js';

const PAIR = 'metadata.annotations[ipam.spidernet.io/pair-pool]';

/** A synced index holding `pools`. */
function indexOf(...pools: unknown[]): PoolIndex {
  const index = new PoolIndex();
  expect(index.replaceAll(pools)).toEqual([]);
  return index;
}

function review(input: unknown, index: PoolIndex) {
  return AdmissionReviewResponseSchema.parse(createReviewer({ pools: index })(input).review).response;
}

/** The IPv4 pool `pool-a` (191 addresses) as stored, naming `pool-a-v6`. */
const storedV4 = () => loadReview('pool-create-pair-v4').request.object;
/** The IPv6 pool `pool-a-v6` (200 addresses) as stored, naming `pool-a`. */
const storedV6 = () => loadPool('pool-a-v6');

function refusedFields(input: unknown, index: PoolIndex): string[] {
  const response = review(input, index);
  expect(response.allowed).toBe(false);
  expect(response.status).toMatchObject({ code: 422, reason: 'Invalid' });
  return response.status!.details!.causes.map((c) => c.field);
}

describe('a pair whose sibling exists', () => {
  it('a well-formed pair is allowed without warnings (191 IPv4 ≤ 200 IPv6)', () => {
    expect(review(loadReview('pool-create-pair-v4'), indexOf(storedV6()))).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('equal capacities are allowed (the boundary)', () => {
    const v6 = storedV6();
    v6.spec.ips = ['fd00:6::10-fd00:6::ce']; // 191
    expect(review(loadReview('pool-create-pair-v4'), indexOf(v6)).allowed).toBe(true);
    v6.spec.ips = ['fd00:6::10-fd00:6::cd']; // 190
    expect(refusedFields(loadReview('pool-create-pair-v4'), indexOf(v6))).toEqual(['spec.ips']);
  });

  it('growing the IPv4 side beyond the IPv6 side is refused, saying both counts', () => {
    const response = review(loadReview('pool-update-pair-v4-grown'), indexOf(storedV6()));
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.ips',
        message: expect.stringMatching(
          /^Invalid value: holds 241 addresses \(spec\.ips minus spec\.excludeIPs\), more than the 200 of its IPv6 pair pool "pool-a-v6": each Pod .*; remove addresses here or add them to "pool-a-v6" first$/,
        ),
      },
    ]);
  });

  it('shrinking the IPv6 side below the IPv4 side is refused (the rule applies from either side)', () => {
    const response = review(loadReview('pool-update-pair-v6-shrunk'), indexOf(storedV4(), storedV6()));
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({
        field: 'spec.ips',
        message: expect.stringContaining('holds 96 addresses (spec.ips minus spec.excludeIPs), fewer than the 191 of its IPv4 pair pool "pool-a"'),
      }),
    ]);
  });

  it('a pool that does not name its partner is still checked against a pool naming it', () => {
    const input = loadReview('pool-update-pair-v6-shrunk');
    for (const side of ['object', 'oldObject']) delete input.request[side].metadata.annotations['ipam.spidernet.io/pair-pool'];
    expect(refusedFields(input, indexOf(storedV4()))).toEqual(['spec.ips']);
  });

  it('a pool naming it that is not an IaaS pool is not a partner', () => {
    const input = loadReview('pool-update-pair-v6-shrunk');
    for (const side of ['object', 'oldObject']) delete input.request[side].metadata.annotations['ipam.spidernet.io/pair-pool'];
    const traditional = storedV4();
    delete traditional.metadata.annotations['ipam.spidernet.io/iaas-provider'];
    expect(review(input, indexOf(traditional)).allowed).toBe(true);
  });

  it('exclusions count: excluding addresses of the IPv4 side brings it back within capacity', () => {
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.object.spec.excludeIPs = ['10.6.0.201-10.6.0.250', '10.6.1.0-10.6.1.255'];
    expect(review(input, indexOf(storedV6())).allowed).toBe(true);
  });

  it('the same IP version on both sides is refused', () => {
    const v6 = storedV6();
    v6.spec.ipVersion = 4;
    v6.spec.ips = ['10.7.0.1-10.7.0.250'];
    const response = review(loadReview('pool-create-pair-v4'), indexOf(v6));
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({
        field: 'spec.ipVersion',
        message: expect.stringMatching(/^Invalid value: "4": is the same as pair pool "pool-a-v6"'s: a dual-stack pair is one IPv4 and one IPv6 pool/),
      }),
    ]);
  });

  it('different spec.nodeName is refused', () => {
    const v6 = storedV6();
    v6.spec.nodeName = ['worker-2'];
    const response = review(loadReview('pool-create-pair-v4'), indexOf(v6));
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({ field: 'spec.nodeName', message: expect.stringContaining('is ["worker-1"] but pair pool "pool-a-v6" has ["worker-2"]') }),
    ]);
  });

  it('moving one side of a pair to another node is refused, saying how to move both', () => {
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.object.spec.ips = input.request.oldObject.spec.ips;
    input.request.object.spec.nodeName = ['worker-2'];
    const response = review(input, indexOf(storedV6()));
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({
        field: 'spec.nodeName',
        message: expect.stringMatching(
          /is \["worker-2"\] but pair pool "pool-a-v6" has \["worker-1"\].*remove ipam\.spidernet\.io\/pair-pool from both pools, change both, then add it back\)$/,
        ),
      }),
    ]);
  });

  it('different spec.podAffinity is refused; the same selector in another key order is not', () => {
    const v6 = storedV6();
    v6.spec.podAffinity = { matchLabels: { app: 'db' } };
    expect(refusedFields(loadReview('pool-create-pair-v4'), indexOf(v6))).toEqual(['spec.podAffinity']);
    v6.spec.podAffinity = { matchExpressions: [], matchLabels: { app: 'web' } };
    const input = loadReview('pool-create-pair-v4');
    input.request.object.spec.podAffinity = { matchLabels: { app: 'web' }, matchExpressions: [] };
    expect(review(input, indexOf(v6)).allowed).toBe(true);
    delete v6.spec.podAffinity;
    expect(refusedFields(input, indexOf(v6))).toEqual(['spec.podAffinity']);
  });

  it('a hand-made, absurdly deep podAffinity is compared without exhausting the stack', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const input = loadReview('pool-create-pair-v4');
    input.request.object.spec.podAffinity = deep;
    expect(refusedFields(input, indexOf(storedV6()))).toEqual(['spec.podAffinity']);
  });

  it('a sibling that is not an IaaS pool is refused', () => {
    const v6 = storedV6();
    delete v6.metadata.annotations['ipam.spidernet.io/iaas-provider'];
    const response = review(loadReview('pool-create-pair-v4'), indexOf(v6));
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({
        field: PAIR,
        message: expect.stringMatching(/^Invalid value: "pool-a-v6": names pool "pool-a-v6", which is not an IaaS pool/),
      }),
    ]);
  });

  it('every broken pair field is reported at once', () => {
    const v6 = storedV6();
    v6.spec.nodeName = ['worker-2'];
    v6.spec.podAffinity = { matchLabels: { app: 'db' } };
    v6.spec.ips = ['fd00:6::1'];
    expect(refusedFields(loadReview('pool-create-pair-v4'), indexOf(v6))).toEqual(['spec.ips', 'spec.nodeName', 'spec.podAffinity']);
  });
});

describe('what cannot be checked is said, never passed silently', () => {
  it('a sibling that does not exist yet: allowed with a warning', () => {
    const response = review(loadReview('pool-create-pair-v4'), indexOf());
    expect(response).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        `${PAIR}: pair pool "pool-a-v6" does not exist yet, so the pairing is not checked now; it is checked when either pool is next created or updated`,
      ],
    });
  });

  it('an index that has not synced: cross-pool checks skipped with a warning', () => {
    const index = new PoolIndex();
    index.upsert(storedV6());
    const response = review(loadReview('pool-update-pair-v4-grown'), index);
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      `${PAIR}: dual-stack pair checks against other pools were skipped (${NOT_SYNCED_REASON}); a pair this pool names or is named in is not checked`,
    ]);
  });

  it('a pool naming itself is refused even without a cache', () => {
    const response = review(loadReview('pool-create-pair-self'), new PoolIndex());
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({ field: PAIR, message: expect.stringMatching(/^Invalid value: "pool-a": names the pool itself/) }),
    ]);
  });

  it('an empty pair-pool means no pair (as Spiderpool reads it): allowed, with a warning', () => {
    const input = loadReview('pool-create-pair-self');
    input.request.object.metadata.annotations['ipam.spidernet.io/pair-pool'] = '';
    expect(review(input, indexOf(storedV6())).warnings).toEqual([
      `${PAIR}: is empty, so this pool has no dual-stack pair; set it to the other pool's name, or remove it`,
    ]);
  });

  it('a malformed entry in the pool under review is refused at its index, since the capacity is unknown', () => {
    const input = loadReview('pool-create-pair-v4');
    input.request.object.spec.excludeIPs = ['10.6.0.300'];
    const response = review(input, indexOf(storedV6()));
    expect(response.status!.details!.causes).toEqual([
      expect.objectContaining({
        field: 'spec.excludeIPs[0]',
        message: expect.stringMatching(
          /^Invalid value: "10\.6\.0\.300": "10\.6\.0\.300" is not an IPv4 address .*cannot be compared with its pair pool "pool-a-v6"/,
        ),
      }),
    ]);
  });

  it('a malformed entry in the stored sibling: allowed, with a warning naming it', () => {
    const v6 = storedV6();
    v6.spec.ips = ['fd00:6::10-fd00:6::zz'];
    const response = review(loadReview('pool-create-pair-v4'), indexOf(v6));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringContaining('the capacity of pair pool "pool-a-v6" was not compared: its spec.ips[0] "fd00:6::zz" is not an IPv6 address'),
    ]);
  });

  it('a stored partner with more entries than the webhook counts: capacity not compared, with a warning', () => {
    const v6 = storedV6();
    v6.spec.ips = Array.from({ length: MAX_COUNTED_ENTRIES + 1 }, (_, i) => `fd00:6::${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}`);
    const response = review(loadReview('pool-update-pair-v4-grown'), indexOf(v6));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringContaining(`the capacity of pair pool "pool-a-v6" was not compared: it holds ${MAX_COUNTED_ENTRIES + 1} entries`),
    ]);
  });

  it('a stored partner with an unknown IP version: capacity not compared, with a warning', () => {
    const v6 = storedV6();
    delete v6.spec.ipVersion;
    delete v6.spec.subnet;
    expect(review(loadReview('pool-update-pair-v4-grown'), indexOf(v6)).warnings).toEqual([expect.stringContaining('not both known yet')]);
  });

  it('unknown IP versions: capacity not compared, with a warning', () => {
    const v6 = storedV6();
    delete v6.spec.ipVersion;
    delete v6.spec.subnet;
    const response = review(loadReview('pool-update-pair-v4-grown'), indexOf(v6));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringMatching(/^spec\.ipVersion: the IP versions of this pool and its pair pool "pool-a-v6" are not both known yet/),
    ]);
  });

  it('the IP version comes from spec.subnet when spec.ipVersion is not set yet', () => {
    const input = loadReview('pool-update-pair-v4-grown');
    delete input.request.object.spec.ipVersion;
    const v6 = storedV6();
    delete v6.spec.ipVersion;
    expect(refusedFields(input, indexOf(v6))).toEqual(['spec.ips']);
  });
});

describe('an unsynced pool cache, by the unsynced-pools setting (serve --unsynced-pools)', () => {
  const unsynced = () => {
    const index = new PoolIndex();
    index.upsert(storedV6()); // a watch event before the list: known, but not the whole picture
    return index;
  };
  const judged = (input: unknown, options: Parameters<typeof createReviewer>[0]) =>
    AdmissionReviewResponseSchema.parse(createReviewer(options)(input).review).response;

  it('Refuse: an IaaS pool UPDATE is refused, not ratcheted, saying the cache is not synced, why and what to do', () => {
    const response = judged(loadReview('pool-update-pair-v4-grown'), { pools: unsynced(), unsyncedPools: 'Refuse' });
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: PAIR,
        message: expect.stringMatching(
          new RegExp(
            `^Forbidden: IaaS pool writes are refused until the webhook's pool cache is synced \\(${NOT_SYNCED_REASON}\\), because the dual-stack pair rules compare .*; retry in a minute; if it persists, check the webhook's logs, its RBAC .* and the API server`,
          ),
        ),
      },
    ]);
  });

  it('Refuse: an IaaS pool CREATE naming no pair is refused too (a stored pool may name it)', () => {
    expect(review(loadReview('pool-create-iaas-global'), new PoolIndex()).allowed).toBe(true); // the library's default: Warn
    const response = judged(loadReview('pool-create-iaas-global'), { pools: new PoolIndex(), unsyncedPools: 'Refuse' });
    expect(response.status!.details!.causes.map((c) => [c.reason, c.field])).toEqual([['FieldValueForbidden', PAIR]]);
  });

  it('Refuse: a traditional pool and an IaaS pool judged against a synced cache are not affected', () => {
    expect(judged(loadReview('pool-create-traditional-default'), { pools: new PoolIndex(), unsyncedPools: 'Refuse' }).allowed).toBe(true);
    expect(judged(loadReview('pool-create-pair-v4'), { pools: indexOf(storedV6()), unsyncedPools: 'Refuse' })).toEqual({
      uid: expect.any(String),
      allowed: true,
    });
  });

  it('Warn: allowed, with the warning that the pair checks were skipped', () => {
    const response = judged(loadReview('pool-update-pair-v4-grown'), { pools: unsynced(), unsyncedPools: 'Warn' });
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([expect.stringContaining(`dual-stack pair checks against other pools were skipped (${NOT_SYNCED_REASON})`)]);
  });

  it('without a pool cache (review, audit: no cluster) Refuse changes nothing: a warning', () => {
    const response = judged(loadReview('pool-update-pair-v4-grown'), { unsyncedPools: 'Refuse' });
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([expect.stringContaining(`skipped (${NO_CLUSTER_REASON})`)]);
  });
});

describe('padding a pool in a pair past the count bound is refused (TooMany)', () => {
  /** `n` distinct single IPv4 addresses, none of them inside pool-a's ranges. */
  const singles = (n: number) => Array.from({ length: n }, (_, i) => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`);
  const tooMany = (field: string, n: number) => ({
    reason: 'FieldValueTooMany',
    field,
    message: expect.stringMatching(
      new RegExp(`^Too many: ${n}: must have at most ${MAX_PAIRED_ENTRIES_PER_FIELD} items; .*write contiguous addresses as ranges`),
    ),
  });

  it('CREATE: refused on spec.ips or spec.excludeIPs, whether or not the sibling exists or the cache synced', () => {
    const n = MAX_PAIRED_ENTRIES_PER_FIELD + 1;
    for (const index of [indexOf(storedV6()), indexOf(), new PoolIndex()]) {
      const input = loadReview('pool-create-pair-v4');
      input.request.object.spec.ips = singles(n);
      expect(review(input, index).status!.details!.causes).toContainEqual(tooMany('spec.ips', n));
    }
    const input = loadReview('pool-create-pair-v4');
    input.request.object.spec.excludeIPs = singles(n);
    expect(review(input, indexOf(storedV6())).status!.details!.causes).toEqual([tooMany('spec.excludeIPs', n)]);
  });

  it('at the bound the pool is counted and compared (and refused here for capacity, not skipped)', () => {
    const input = loadReview('pool-create-pair-v4');
    input.request.object.spec.ips = singles(MAX_PAIRED_ENTRIES_PER_FIELD);
    expect(review(input, indexOf(storedV6())).status!.details!.causes).toEqual([
      expect.objectContaining({ field: 'spec.ips', message: expect.stringContaining(`holds ${MAX_PAIRED_ENTRIES_PER_FIELD} addresses`) }),
    ]);
  });

  it('a pool named by a partner is bounded too, even when it names none', () => {
    const input = loadReview('pool-update-pair-v6-shrunk');
    for (const side of ['object', 'oldObject']) delete input.request[side].metadata.annotations['ipam.spidernet.io/pair-pool'];
    input.request.object.spec.excludeIPs = Array.from(
      { length: MAX_PAIRED_ENTRIES_PER_FIELD + 1 },
      (_, i) => `fd00:7::${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}`,
    );
    input.request.object.spec.ips = input.request.oldObject.spec.ips;
    expect(refusedFields(input, indexOf(storedV4()))).toEqual(['spec.excludeIPs']);
  });

  it('an unpaired pool is not bounded', () => {
    const input = loadReview('pool-create-pair-v4');
    delete input.request.object.metadata.annotations['ipam.spidernet.io/pair-pool'];
    input.request.object.spec.ips = singles(MAX_PAIRED_ENTRIES_PER_FIELD + 1);
    expect(review(input, indexOf()).allowed).toBe(true);
  });

  it('UPDATE ratchets the count: a stored pool over the bound may shrink, not grow', () => {
    const n = MAX_PAIRED_ENTRIES_PER_FIELD + 10;
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.oldObject.spec.ips = singles(n);
    input.request.object.spec.ips = singles(n - 1);
    const shrunk = review(input, new PoolIndex());
    expect(shrunk.allowed).toBe(true);
    expect(shrunk.warnings).toContainEqual(
      expect.stringMatching(/^spec\.ips: let through, as it was so before this update and is not made worse: must have at most/),
    );
    input.request.object.spec.ips = singles(n + 1);
    expect(review(input, new PoolIndex()).status!.details!.causes).toEqual([tooMany('spec.ips', n + 1)]);
  });
});

describe('edge cases of the pair rules', () => {
  it.each([[{}], [{ matchLabels: {} }], [{ matchExpressions: [] }], [{ matchLabels: {}, matchExpressions: [] }]])(
    'an empty podAffinity %j selects every Pod, as no podAffinity does',
    (empty) => {
      const v6 = storedV6();
      delete v6.spec.podAffinity;
      const input = loadReview('pool-create-pair-v4');
      input.request.object.spec.podAffinity = empty;
      expect(review(input, indexOf(v6)).allowed).toBe(true);
      v6.spec.podAffinity = empty;
      delete input.request.object.spec.podAffinity;
      expect(review(input, indexOf(v6)).allowed).toBe(true);
      v6.spec.podAffinity = { matchLabels: { app: 'db' } };
      expect(refusedFields(input, indexOf(v6))).toEqual(['spec.podAffinity']);
    },
  );

  it('an entry inserted before a malformed one that was already there keeps it carried over (keyed by value)', () => {
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.oldObject.spec.ips = ['10.6.0.10-10.6.0.20', '10.6.0.x'];
    input.request.object.spec.ips = ['10.6.0.30', '10.6.0.10-10.6.0.20', '10.6.0.x'];
    const response = review(input, indexOf(storedV6()));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([expect.stringMatching(/^spec\.ips\[2\]: let through, as it was so before this update/)]);
    input.request.object.spec.ips = ['10.6.0.10-10.6.0.20', '10.6.0.y'];
    expect(refusedFields(input, indexOf(storedV6()))).toEqual(['spec.ips[1]']);
  });

  it('a sibling that is not an IaaS pool gets only that cause, not the comparisons as well', () => {
    const v6 = storedV6();
    delete v6.metadata.annotations['ipam.spidernet.io/iaas-provider'];
    v6.spec.ipVersion = 4;
    v6.spec.nodeName = ['worker-9'];
    v6.spec.podAffinity = { matchLabels: { app: 'db' } };
    expect(refusedFields(loadReview('pool-create-pair-v4'), indexOf(v6))).toEqual([PAIR]);
  });

  it('order-of-creation gap: a sibling created later as a traditional pool is named plainly as a broken pair on every UPDATE', () => {
    // pool-a was created while pool-a-v6 did not exist; pool-a-v6 was then created without
    // the IaaS annotation, a CREATE this webhook never sees (matchConditions).
    const v6 = storedV6();
    delete v6.metadata.annotations['ipam.spidernet.io/iaas-provider'];
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.object.spec.ips = input.request.oldObject.spec.ips;
    const response = review(input, indexOf(v6));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringMatching(
        /^metadata\.annotations\[ipam\.spidernet\.io\/pair-pool\]: let through, .*names pool "pool-a-v6", which is not an IaaS pool .*so this dual-stack pair is broken/,
      ),
    ]);
  });

  it('an empty name and an empty pair-pool: only the empty-pair warning, no self-pair refusal', () => {
    const input = loadReview('pool-create-pair-self');
    input.request.object.metadata.annotations['ipam.spidernet.io/pair-pool'] = '';
    input.request.object.metadata.name = '';
    input.request.name = '';
    const response = review(input, indexOf());
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([`${PAIR}: is empty, so this pool has no dual-stack pair; set it to the other pool's name, or remove it`]);
  });
});

describe('a sibling that arrives later is checked when it arrives', () => {
  /** The CREATE review of `pool-a-v6` as stored in the fixture, with `ips`. */
  const createV6 = (ips: string[]) => {
    const input = loadReview('pool-create-pair-v4');
    input.request.object = { ...storedV6(), spec: { ...storedV6().spec, ips } };
    input.request.name = 'pool-a-v6';
    return input;
  };

  it('first the IPv4 pool, accepted with a warning; then an IPv6 pool too small for it, refused', () => {
    const index = indexOf();
    expect(review(loadReview('pool-create-pair-v4'), index).warnings).toEqual([expect.stringContaining('pair pool "pool-a-v6" does not exist yet')]);
    index.upsert(storedV4()); // the informer sees the IPv4 pool created
    expect(refusedFields(createV6(['fd00:6::1-fd00:6::10']), index)).toEqual(['spec.ips']);
    expect(review(createV6(['fd00:6::1-fd00:6::ff']), index)).toEqual({ uid: expect.any(String), allowed: true });
  });
});

describe('ratcheting a pair that was already broken', () => {
  /** `pool-a` (IPv4, 191 addresses) already paired with a 100-address IPv6 pool. */
  const smallV6 = () => {
    const v6 = storedV6();
    v6.spec.ips = ['fd00:6::1-fd00:6::64'];
    return v6;
  };

  it('the IPv4 side may shrink (still over capacity): allowed with a warning', () => {
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.object.spec.ips = ['10.6.0.10-10.6.0.159']; // 150
    const response = review(input, indexOf(smallV6()));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([
      expect.stringMatching(/^spec\.ips: let through, as it was so before this update and is not made worse: holds 150 addresses .*more than the 100/),
    ]);
  });

  it('other fields may change: allowed with a warning', () => {
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.object.spec.ips = input.request.oldObject.spec.ips;
    expect(review(input, indexOf(smallV6())).allowed).toBe(true);
  });

  it('the IPv4 side may not grow', () => {
    expect(refusedFields(loadReview('pool-update-pair-v4-grown'), indexOf(smallV6()))).toEqual(['spec.ips']);
  });

  it('re-pairing with another pool is judged afresh', () => {
    const other = smallV6();
    other.metadata.name = 'pool-b-v6';
    delete other.metadata.annotations['ipam.spidernet.io/pair-pool'];
    const input = loadReview('pool-update-pair-v4-grown');
    input.request.object.spec.ips = input.request.oldObject.spec.ips;
    input.request.object.metadata.annotations['ipam.spidernet.io/pair-pool'] = 'pool-b-v6';
    expect(refusedFields(input, indexOf(smallV6(), other))).toEqual(['spec.ips']);
  });
});
