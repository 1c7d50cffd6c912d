/**
 * The in-use and parent-NIC pool rules, at parity with Spiderpool's IaaS-pool webhook: the parent NIC names
 * one NIC on any IaaS pool, and the provider and parent-NIC annotations are fixed while the
 * stored pool has addresses in use. Through fixture reviews, CREATE and (ratcheted) UPDATE.
 */
import { reviewAdmission } from '../../src/rules/registry.js';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { oneNicProblem } from '../../src/rules/pool-rules/parent-nic.js';
import { allocations, SpiderIPPoolSchema } from '../../src/spiderpool/pool.js';
import { loadReview } from '../fixtures/load.js';

const PROVIDER = 'metadata.annotations[ipam.spidernet.io/iaas-provider]';
const NIC = 'metadata.annotations[ipam.spidernet.io/parent-nic]';
const PAIR = 'metadata.annotations[ipam.spidernet.io/pair-pool]';

type Review = ReturnType<typeof loadReview>;

function respond(input: Review) {
  const output = AdmissionReviewResponseSchema.parse(reviewAdmission(input));
  expect(output.response.uid).toBe(input.request.uid);
  return output.response;
}

const review = (name: string) => respond(loadReview(name));
const ownWarnings = (warnings: string[] | undefined) => (warnings ?? []).filter((w) => !w.startsWith(`${PAIR}: dual-stack pair checks`));

/** Sets the stored (and, as the API server carries it over, the new) pool's status. */
function withStatus(input: Review, status: unknown): Review {
  input.request.oldObject.status = status;
  input.request.object.status = status;
  return input;
}

describe('parent-nic names one NIC, on any IaaS pool', () => {
  it.each([
    ['pool-create-parent-nic-comma', 'a node pool', '"eth0,eth1"', /^holds a ","/],
    ['pool-create-global-parent-nic-comma', 'a global pool', '"eth0,eth1"', /^holds a ","/],
    ['pool-create-global-parent-nic-blank', 'a global pool', '" \\t"', /^is empty after trimming whitespace/],
    ['pool-create-parent-nic-space', 'a node pool', '"eth 0"', /^contains whitespace/],
  ])('%s (%s) is refused on CREATE', (fixture, _what, shown, why) => {
    const response = review(fixture);
    expect(response.allowed).toBe(false);
    const causes = response.status!.details!.causes;
    expect(causes).toEqual([{ reason: 'FieldValueInvalid', field: NIC, message: expect.stringMatching(/^Invalid value: /) }]);
    const detail = causes[0]!.message.slice(`Invalid value: ${shown}: `.length);
    expect(causes[0]!.message.startsWith(`Invalid value: ${shown}: `)).toBe(true);
    expect(detail).toMatch(why);
    expect(detail).toMatch(/; write the one interface the sub-ENIs hang from .* e\.g\. eth0$/);
  });

  it('a global pool with one NIC is allowed, with the warning that it has no meaning there', () => {
    const response = review('pool-create-global-with-parent-nic');
    expect(response.allowed).toBe(true);
    expect(ownWarnings(response.warnings)).toEqual([
      expect.stringMatching(/^metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: has no meaning on a global pool/),
    ]);
  });

  it('an UPDATE that writes a comma into a valid parent NIC is refused', () => {
    const input = withStatus(loadReview('pool-update-node-other-fields'), { allocatedIPCount: 0 });
    input.request.object.metadata.annotations['ipam.spidernet.io/parent-nic'] = 'eth0,eth1';
    expect(respond(input).status!.details!.causes).toEqual([
      expect.objectContaining({ field: NIC, message: expect.stringMatching(/^Invalid value: "eth0,eth1": holds a ","/) }),
    ]);
  });

  it('a stored pool that already had it is ratcheted: other fields may change, with a warning', () => {
    const response = review('pool-update-legacy-parent-nic-comma-other-fields');
    expect(response.allowed).toBe(true);
    expect(ownWarnings(response.warnings)).toEqual([
      expect.stringMatching(
        /^metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: let through, as it was so before this update and is not made worse: holds a ","/,
      ),
      expect.stringMatching(/has no meaning on a global pool/),
    ]);
  });

  it('a ratcheted value may not be changed into another bad one', () => {
    const input = loadReview('pool-update-legacy-parent-nic-comma-other-fields');
    input.request.object.metadata.annotations['ipam.spidernet.io/parent-nic'] = 'eth0,eth2';
    expect(respond(input).status!.details!.causes.map((c) => c.field)).toEqual([NIC]);
  });

  it.each([
    ['eth0', undefined],
    ['eth0.100', undefined],
    ['', 'is empty after trimming whitespace'],
    ['\u00a0\u0085', 'is empty after trimming whitespace'], // Go's unicode.IsSpace
    ['eth0,', 'holds a ","'],
    ['eth0 eth1', 'contains whitespace'],
    ['eth0\u2003', 'contains whitespace'],
    ['eth0\ufeff', undefined], // not a space for Go; the kernel rule judges it on node pools
  ])('oneNicProblem(%j)', (nic, problem) => {
    expect(oneNicProblem(nic)).toEqual(problem);
  });
});

describe('provider and parent-nic are fixed while the stored pool has addresses in use', () => {
  it('changing the provider of a pool in use is refused, saying why and what to do', () => {
    const response = review('pool-update-provider-renamed');
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes).toEqual([{ reason: 'FieldValueForbidden', field: PROVIDER, message: expect.any(String) }]);
    const message = response.status!.details!.causes[0]!.message;
    expect(message).toMatch(
      /^Forbidden: changing the annotation from "openstack" to "openstack-region-2" is refused while IaaS pool "pool-a" has addresses in use \(status\.allocatedIPCount 3\): /,
    );
    expect(message).toContain('the sub-ENIs already attached for its Pods were made by provider "openstack" on NIC "eth0"');
    expect(message).toMatch(/move the Pods off this pool first, or create a new pool with "openstack-region-2"$/);
  });

  it('changing the parent NIC of a pool in use is refused', () => {
    const response = review('pool-update-in-use-parent-nic-changed');
    expect(response.status!.details!.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: NIC,
        message: expect.stringMatching(/^Forbidden: changing the annotation from "eth0" to "eth1" is refused while IaaS pool "pool-a" has addresses in use/),
      },
    ]);
  });

  it('removing the parent NIC of a node pool in use is one cause, not also Required', () => {
    const response = review('pool-update-parent-nic-removed');
    expect(response.status!.details!.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: NIC,
        message: expect.stringMatching(/^Forbidden: removing the annotation \(was "eth0"\) is refused while .*create a new pool without the annotation$/),
      },
    ]);
  });

  it('removing both annotations of a pool in use is one cause per annotation', () => {
    const response = review('pool-update-annotation-removed');
    expect(response.status!.details!.causes.map((c) => [c.field, c.message.slice(0, 40)])).toEqual([
      [PROVIDER, 'Forbidden: removing the annotation (was '],
      [NIC, 'Forbidden: removing the annotation (was '],
    ]);
  });

  it('without allocations, both may change', () => {
    const response = review('pool-update-idle-parent-nic-changed');
    expect(response.allowed).toBe(true);
    const renamed = withStatus(loadReview('pool-update-provider-renamed'), { allocatedIPCount: 0, allocatedIPs: '' });
    expect(respond(renamed).allowed).toBe(true);
  });

  it('adding a parent NIC to a pool in use that had none is not a change of it', () => {
    const input = loadReview('pool-update-idle-parent-nic-changed');
    withStatus(input, { allocatedIPCount: 2 });
    delete input.request.oldObject.metadata.annotations['ipam.spidernet.io/parent-nic'];
    expect(respond(input).allowed).toBe(true);
  });

  it('allocations are read from the stored pool, not the new one', () => {
    const input = loadReview('pool-update-in-use-parent-nic-changed');
    input.request.object.status = { allocatedIPCount: 0 };
    expect(respond(input).allowed).toBe(false);
    input.request.oldObject.status = { allocatedIPCount: 0 };
    input.request.object.status = { allocatedIPCount: 5 };
    expect(respond(input).allowed).toBe(true);
  });

  it('status of any shape is read on the safe side and never fails the review', () => {
    for (const status of [null, 'x', [], { allocatedIPCount: 'many' }, { allocatedIPs: 7 }, { allocatedIPCount: -1 }]) {
      const response = respond(withStatus(loadReview('pool-update-in-use-parent-nic-changed'), status));
      expect(response).toMatchObject({ allowed: true });
    }
    for (const status of [{ allocatedIPs: 'not json' }, { allocatedIPs: { '10.0.0.1': {} } }, { allocatedIPs: ['10.0.0.1'] }, { allocatedIPCount: '2' }]) {
      const response = respond(withStatus(loadReview('pool-update-in-use-parent-nic-changed'), status));
      expect(response.status?.details?.causes.map((c) => c.reason)).toEqual(['FieldValueForbidden']);
    }
  });

  it.each([
    [{ allocatedIPCount: 3 }, 'status.allocatedIPCount 3'],
    [{ allocatedIPCount: 0, allocatedIPs: '{"10.6.0.10":{"pod":"default/a"}}' }, 'status.allocatedIPs not empty'],
    [{ allocatedIPCount: 0, allocatedIPs: '{}' }, undefined],
    [{ allocatedIPs: 'null' }, undefined],
    [{ allocatedIPs: '"{}"' }, undefined],
    [undefined, undefined],
  ])('allocations(status %j)', (status, shown) => {
    expect(allocations(SpiderIPPoolSchema.parse({ metadata: {}, status }))).toEqual(shown);
  });
});
