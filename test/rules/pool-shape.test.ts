/** IaaS pool shape rules 1-3 (provider, one node, parent NIC) and their ratcheting, through fixture reviews. */
import { reviewAdmission } from '../../src/rules/registry.js';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { interfaceNameProblem } from '../../src/rules/pool-rules/parent-nic.js';
import { loadReview } from '../fixtures/load.js';

const PROVIDER = 'metadata.annotations[ipam.spidernet.io/iaas-provider]';
const NIC = 'metadata.annotations[ipam.spidernet.io/parent-nic]';
const PAIR = 'metadata.annotations[ipam.spidernet.io/pair-pool]';

function review(name: string) {
  const input = loadReview(name);
  const output = AdmissionReviewResponseSchema.parse(reviewAdmission(input));
  expect(output.response.uid).toBe(input.request.uid);
  return output.response;
}

/** Warnings other than the "cross-pool checks skipped" one every review without a cluster gets. */
const ownWarnings = (warnings: string[] | undefined) => (warnings ?? []).filter((w) => !w.startsWith(`${PAIR}: dual-stack pair checks`));

function causes(name: string) {
  const response = review(name);
  expect(response.allowed).toBe(false);
  expect(response.status).toMatchObject({ status: 'Failure', code: 422, reason: 'Invalid' });
  return response.status!.details!.causes;
}

describe('rule 1: the provider annotation names a provider', () => {
  it('an empty provider is refused on CREATE', () => {
    expect(causes('pool-create-provider-empty')).toEqual([
      {
        reason: 'FieldValueRequired',
        field: PROVIDER,
        message: expect.stringMatching(/^Required value: .*names the IaaS provider.*set it to the provider's name$/),
      },
    ]);
  });

  it('emptying it on UPDATE is refused', () => {
    expect(causes('pool-update-provider-emptied').map((c) => c.field)).toEqual([PROVIDER]);
  });

  it('an existing empty provider is let through with a warning when other fields change', () => {
    const response = review('pool-update-legacy-provider-empty');
    expect(response.allowed).toBe(true);
    expect(ownWarnings(response.warnings)).toEqual([
      expect.stringMatching(new RegExp(`^${PROVIDER.replace(/[[\]./]/g, '\\$&')}: let through, as it was so before this update and is not made worse: `)),
    ]);
  });
});

describe('rule 2: a node pool is pinned to exactly one node', () => {
  it('two nodes are refused on CREATE', () => {
    const [cause, ...rest] = causes('pool-create-two-nodes');
    expect(rest).toEqual([]);
    expect(cause).toEqual({
      reason: 'FieldValueInvalid',
      field: 'spec.nodeName',
      message: expect.stringMatching(/^Invalid value: lists 2 nodes \(\["worker-1", "worker-2"\]\), but an IaaS node pool is pinned to exactly one node/),
    });
  });

  it('an empty node name is refused, at its index', () => {
    expect(causes('pool-create-empty-node-name')).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.nodeName[0]', message: expect.stringMatching(/^Invalid value: "": names no node/) },
    ]);
  });

  it('many empty node names are one cause, not one each', () => {
    const input = loadReview('pool-create-empty-node-name');
    input.request.object.spec.nodeName = ['worker-1', ...Array<string>(100_000).fill('')];
    const causes = reviewAdmission(input).response.status!.details!.causes;
    expect(causes.map((c) => c.field)).toEqual(['spec.nodeName', 'spec.nodeName[1]']);
    expect(causes[1]!.message).toMatch(/^Invalid value: "": names no node \(99999 more entries are empty too\)/);
  });

  it('an existing empty node name may stay, but not multiply', () => {
    const input = loadReview('pool-update-legacy-two-nodes-other-fields');
    input.request.oldObject.spec.nodeName = [''];
    input.request.object.spec.nodeName = [''];
    expect(reviewAdmission(input).response.allowed).toBe(true);
    input.request.object.spec.nodeName = ['', ''];
    expect(reviewAdmission(input).response.status!.details!.causes.map((c) => c.field)).toEqual(['spec.nodeName', 'spec.nodeName[0]']);
  });

  it('adding a second node to a one-node pool is refused', () => {
    expect(causes('pool-update-second-node-added').map((c) => c.field)).toEqual(['spec.nodeName']);
  });

  it.each(['pool-update-legacy-two-nodes-other-fields', 'pool-update-legacy-three-to-two-nodes'])(
    '%s: an existing multi-node pool may be edited or shrunk, with a warning',
    (fixture) => {
      const response = review(fixture);
      expect(response.allowed).toBe(true);
      expect(ownWarnings(response.warnings)).toEqual([
        expect.stringMatching(/^spec\.nodeName: let through, as it was so before this update and is not made worse: lists 2 nodes/),
      ]);
    },
  );

  it('an existing two-node pool may not grow to three', () => {
    const input = loadReview('pool-update-legacy-two-nodes-other-fields');
    input.request.object.spec.nodeName = ['worker-1', 'worker-2', 'worker-3'];
    const response = reviewAdmission(input).response;
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes).toEqual([expect.objectContaining({ field: 'spec.nodeName', message: expect.stringContaining('lists 3 nodes') })]);
  });
});

describe('rule 3: a node pool names a valid parent NIC', () => {
  it('a node pool without parent-nic is refused on CREATE', () => {
    expect(causes('pool-create-node-without-parent-nic')).toEqual([
      { reason: 'FieldValueRequired', field: NIC, message: expect.stringMatching(/^Required value: an IaaS node pool must name the interface/) },
    ]);
  });

  it('15 bytes is the longest name allowed', () => {
    const response = review('pool-create-parent-nic-15-bytes');
    expect(response.allowed).toBe(true);
    expect(ownWarnings(response.warnings)).toEqual([]);
  });

  it.each([
    ['pool-create-parent-nic-16-bytes', '"enp0s31f6.400012"', /is 16 bytes long/],
    ['pool-create-parent-nic-slash', '"eth0/1"', /contains "\/"/],
    ['pool-create-parent-nic-dotdot', '".."', /not allowed as an interface name/],
    ['pool-create-parent-nic-space', '"eth 0"', /whitespace/],
  ])('%s is refused', (fixture, shown, why) => {
    const [cause, ...rest] = causes(fixture);
    expect(rest).toEqual([]);
    expect(cause!.field).toBe(NIC);
    expect(cause!.message.startsWith(`Invalid value: ${shown}: `)).toBe(true);
    expect(cause!.message).toMatch(why);
  });

  it('on a global pool it is only a warning', () => {
    const response = review('pool-create-global-with-parent-nic');
    expect(response.allowed).toBe(true);
    expect(ownWarnings(response.warnings)).toEqual([
      expect.stringMatching(/^metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: has no meaning on a global pool/),
    ]);
  });

  it('removing it from a node pool is refused', () => {
    expect(causes('pool-update-parent-nic-removed').map((c) => c.field)).toEqual([NIC]);
  });

  it('a node pool that already lacked it may still have other fields edited, with a warning', () => {
    const response = review('pool-update-legacy-no-parent-nic-other-fields');
    expect(response.allowed).toBe(true);
    expect(ownWarnings(response.warnings)).toEqual([
      expect.stringMatching(
        /^metadata\.annotations\[ipam\.spidernet\.io\/parent-nic\]: let through, as it was so before this update and is not made worse: an IaaS node pool must name/,
      ),
    ]);
  });

  it('a node pool that lacked it may not get an invalid one', () => {
    const input = loadReview('pool-update-legacy-no-parent-nic-other-fields');
    input.request.object.metadata.annotations['ipam.spidernet.io/parent-nic'] = 'eth0:1';
    expect(reviewAdmission(input).response.status!.details!.causes).toEqual([
      expect.objectContaining({ field: NIC, message: expect.stringMatching(/^Invalid value: "eth0:1": contains/) }),
    ]);
  });

  it.each([
    ['eth0', undefined],
    ['a', undefined],
    ['ens1f0np0.4094', undefined],
    ['', 'is empty'],
    ['.', 'is not allowed as an interface name by Linux'],
    ['eth0\t', expect.stringContaining('whitespace')],
    ['eth0\n', expect.stringContaining('whitespace')],
    ['eth\0', expect.stringContaining('NUL')],
    ['ééééééé1', undefined], // 15 bytes in UTF-8
    ['éééééééé', expect.stringContaining('16 bytes')], // 8 characters, 16 bytes
  ])('interface name %j', (name, problem) => {
    expect(interfaceNameProblem(name)).toEqual(problem);
  });
});

describe('CREATE checks only IaaS pools; every rule reports its own field', () => {
  it('a traditional pool is created untouched', () => {
    const input = loadReview('pool-create-two-nodes');
    delete input.request.object.metadata.annotations['ipam.spidernet.io/iaas-provider'];
    expect(reviewAdmission(input).response).toEqual({ uid: input.request.uid, allowed: true });
  });

  it('all broken fields at once, in one response', () => {
    const input = loadReview('pool-create-two-nodes');
    input.request.object.metadata.annotations = { 'ipam.spidernet.io/iaas-provider': '', 'ipam.spidernet.io/pair-pool': 'pool-a' };
    input.request.object.spec.nodeName = ['worker-1', ''];
    const fields = reviewAdmission(input).response.status!.details!.causes.map((c) => c.field);
    expect(fields).toEqual([PROVIDER, 'spec.nodeName', 'spec.nodeName[1]', NIC, PAIR]);
  });
});
