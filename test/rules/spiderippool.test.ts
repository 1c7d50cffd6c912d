import { reviewAdmission } from '../../src/rules/registry.js';
import { NO_CLUSTER_REASON } from '../../src/rules/registry.js';
import { AdmissionReviewResponseSchema } from '../../src/kubernetes/schema.js';
import { loadReview } from '../fixtures/load.js';

/**
 * A fixture review whose stored pool has no addresses in use, for the rules that do not
 * depend on it (with addresses in use, its annotations are fixed too: pool-in-use.test.ts).
 */
function idle(name: string) {
  const input = loadReview(name);
  input.request.oldObject.status = { allocatedIPCount: 0, totalIPCount: 191 };
  input.request.object.status = { allocatedIPCount: 0, totalIPCount: 191 };
  return input;
}

function review(name: string | ReturnType<typeof loadReview>) {
  const input = typeof name === 'string' ? loadReview(name) : name;
  const output = AdmissionReviewResponseSchema.parse(reviewAdmission(input));
  expect(output.response.uid).toBe(input.request.uid);
  return output.response;
}

describe('SpiderIPPool: an IaaS pool keeps its mode', () => {
  it.each([
    ['pool-update-node-to-global', 'none'],
    ['pool-update-node-to-global-null', 'none'],
    ['pool-update-node-to-global-empty', 'none'],
  ])('%s: a node pool may not become a global pool (nodeName %s)', (fixture) => {
    const response = review(idle(fixture));
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ status: 'Failure', code: 422, reason: 'Invalid' });
    expect(response.status!.details).toEqual({
      group: 'spiderpool.spidernet.io',
      kind: 'SpiderIPPool',
      name: 'pool-a',
      causes: [{ reason: 'FieldValueForbidden', field: 'spec.nodeName', message: expect.stringMatching(/^Forbidden: /) }],
    });
    const cause = response.status!.details!.causes[0]!.message;
    expect(cause).toContain('changing spec.nodeName from ["worker-1"] to none');
    expect(cause).toContain('IaaS node pool "pool-a" into a global pool');
    expect(cause).toContain('delete it once no Pod uses it and create it again without spec.nodeName');
    expect(response.status!.message).toBe(`SpiderIPPool.spiderpool.spidernet.io "pool-a" is invalid: spec.nodeName: ${cause}`);
  });

  it('a global pool may not become a node pool', () => {
    const response = review('pool-update-global-to-node');
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toMatch(
      /^SpiderIPPool\.spiderpool\.spidernet\.io "pool-global" is invalid: spec\.nodeName: Forbidden: changing spec\.nodeName from none to \["worker-2"\] would turn IaaS global pool "pool-global" into a node pool, .*delete it once no Pod uses it and create it again with spec\.nodeName$/,
    );
  });

  it('dryRun gets the same decision', () => {
    const real = review('pool-update-node-to-global');
    const dry = review('pool-update-node-to-global-dryrun');
    expect(dry.allowed).toBe(false);
    expect(dry.status).toEqual(real.status);
  });

  it.each([
    'pool-update-global-null-to-empty', // absent, null and [] all mean "no node"
    'pool-update-node-to-other-node', // which node a node pool names may change
    'pool-update-node-other-fields',
    'pool-create-iaas-node', // CREATE of a well-formed pool
    'pool-create-iaas-global',
  ])('%s is allowed; without a cluster the pair checks are skipped, with a warning', (fixture) => {
    expect(review(fixture)).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        `metadata.annotations[ipam.spidernet.io/pair-pool]: dual-stack pair checks against other pools were skipped (${NO_CLUSTER_REASON}); a pair this pool names or is named in is not checked`,
      ],
    });
  });

  it("the provider's name may change while no address is in use; only presence is fixed", () => {
    expect(review(idle('pool-update-provider-renamed'))).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [expect.stringContaining('dual-stack pair checks')],
    });
  });

  it.each([
    'pool-update-traditional-add-nodename', // traditional pools are not guarded
    'pool-update-traditional-remove-nodename',
    'pool-update-status-subresource',
    'pool-delete-iaas', // DELETE is not restricted
  ])('%s is allowed', (fixture) => {
    expect(review(fixture)).toEqual({ uid: expect.any(String), allowed: true });
  });
});

describe('SpiderIPPool: a pool keeps its category (the iaas-provider annotation)', () => {
  const field = 'metadata.annotations[ipam.spidernet.io/iaas-provider]';

  it('removing the annotation is refused', () => {
    const response = review(idle('pool-update-annotation-removed'));
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes).toEqual([
      { reason: 'FieldValueForbidden', field, message: expect.stringContaining('removing the annotation (was "openstack")') },
    ]);
  });

  it('adding the annotation is refused', () => {
    const response = review('pool-update-annotation-added');
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toContain(
      `"pool-legacy" is invalid: ${field}: Forbidden: adding the annotation ("openstack") would turn traditional pool "pool-legacy" into an IaaS pool`,
    );
  });

  it('reports every refused field in one response', () => {
    const response = review(idle('pool-update-annotation-and-nodename-removed'));
    expect(response.status!.details!.causes.map((c) => c.field)).toEqual([field, 'spec.nodeName']);
    expect(response.status!.message).toMatch(
      /^SpiderIPPool\.spiderpool\.spidernet\.io "pool-a" is invalid: \[metadata\.annotations\[ipam\.spidernet\.io\/iaas-provider\]: Forbidden: .*, spec\.nodeName: Forbidden: .*\]$/,
    );
  });
});

describe('SpiderIPPool: objects that are not shaped like a SpiderIPPool', () => {
  it('answers Errored(400) for a nodeName that is not a list', () => {
    const input = loadReview('pool-update-node-to-global');
    input.request.object.spec.nodeName = 'worker-1';
    const response = reviewAdmission(input).response;
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(response.status!.message).toMatch(/^cannot decode SpiderIPPool at request\.object\.spec\.nodeName: /);
  });

  it('answers Errored(400) when oldObject is missing on UPDATE', () => {
    const input = loadReview('pool-update-node-to-global');
    delete input.request.oldObject;
    expect(reviewAdmission(input).response.status!.message).toMatch(/^cannot decode SpiderIPPool at request\.oldObject: /);
  });

  it('bounds the node list shown in a message', () => {
    const input = loadReview('pool-update-node-to-global');
    input.request.oldObject.spec.nodeName = ['a', 'b', 'c', 'd', 'e'];
    expect(reviewAdmission(input).response.status!.message).toContain('from ["a", "b", "c", … 2 more] to none');
  });

  it('tolerates unknown and future fields', () => {
    const input = loadReview('pool-update-node-to-other-node');
    input.request.object.spec.someFutureField = { nested: [1, 2, 3] };
    input.request.object.metadata.labels = { team: 'net' };
    expect(reviewAdmission(input).response.allowed).toBe(true);
  });
});
