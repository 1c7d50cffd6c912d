import { InvalidAdmissionReviewError, decodeAdmissionReview } from '../../src/admission/review.js';
import { reviewAdmission } from '../../src/rules/registry.js';
import { loadReview } from '../fixtures/load.js';

describe('decodeAdmissionReview refuses what is not an admission.k8s.io/v1 AdmissionReview', () => {
  const valid = () => loadReview('pool-update-node-to-other-node');

  it.each([
    ['null', null, 'not an admission.k8s.io/v1 AdmissionReview: must be an object, not null'],
    ['an array', [], 'not an admission.k8s.io/v1 AdmissionReview: must be an object, not an array'],
    [
      'v1beta1',
      { ...valid(), apiVersion: 'admission.k8s.io/v1beta1' },
      'not an admission.k8s.io/v1 AdmissionReview: apiVersion: must be "admission.k8s.io/v1"',
    ],
    ['another kind', { ...valid(), kind: 'Pod' }, 'not an admission.k8s.io/v1 AdmissionReview: kind: must be "AdmissionReview"'],
    [
      'no request',
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      'not an admission.k8s.io/v1 AdmissionReview: request: is required (an object)',
    ],
  ])('%s', (_what, body, message) => {
    expect(() => decodeAdmissionReview(body)).toThrow(new InvalidAdmissionReviewError(message));
  });

  it('names a missing or empty request.uid', () => {
    const missing = valid();
    delete missing.request.uid;
    expect(() => decodeAdmissionReview(missing)).toThrow('request.uid: is required (a string)');
    const empty = valid();
    empty.request.uid = '';
    expect(() => decodeAdmissionReview(empty)).toThrow('request.uid: must not be empty');
  });

  it('names an unknown operation', () => {
    const body = valid();
    body.request.operation = 'PATCH';
    expect(() => decodeAdmissionReview(body)).toThrow(/^not an admission\.k8s\.io\/v1 AdmissionReview: request\.operation: /);
  });

  it('keeps every message on one line', () => {
    for (const body of [null, 1, 'x', {}, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }]) {
      try {
        decodeAdmissionReview(body);
        throw new Error('expected a refusal');
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidAdmissionReviewError);
        expect((e as Error).message).not.toContain('\n');
      }
    }
  });
});

describe('reviewAdmission', () => {
  it('answers with the same apiVersion and kind and echoes the uid', () => {
    const input = loadReview('pool-update-node-to-global');
    const output = reviewAdmission(input);
    expect(output.apiVersion).toBe('admission.k8s.io/v1');
    expect(output.kind).toBe('AdmissionReview');
    expect(output.response.uid).toBe(input.request.uid);
  });

  it('allows every other kind untouched', () => {
    const input = loadReview('pool-update-node-to-global');
    input.request.kind = { group: 'apps', version: 'v1', kind: 'Deployment' };
    input.request.resource = { group: 'apps', version: 'v1', resource: 'deployments' };
    expect(reviewAdmission(input).response).toEqual({ uid: input.request.uid, allowed: true });
  });

  it('allows CONNECT', () => {
    const input = loadReview('pool-update-node-to-global');
    input.request.operation = 'CONNECT';
    expect(reviewAdmission(input).response.allowed).toBe(true);
  });

  it('routes by group and kind, so a SpiderIPPool in another version is still guarded', () => {
    const input = loadReview('pool-update-node-to-global');
    input.request.kind.version = 'v2';
    expect(reviewAdmission(input).response.allowed).toBe(false);
  });

  it('does not confuse a same-named kind of another group', () => {
    const input = loadReview('pool-update-node-to-global');
    input.request.kind.group = 'example.com';
    expect(reviewAdmission(input).response.allowed).toBe(true);
  });

  it('does not modify its input', () => {
    const input = loadReview('configmap-update-timeout-100s');
    const copy = structuredClone(input);
    reviewAdmission(input);
    expect(input).toEqual(copy);
  });
});
