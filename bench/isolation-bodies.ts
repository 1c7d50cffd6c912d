/**
 * The warn-only bodies of the isolation bench (isolation.ts), posted to `/validate-pod`:
 * an ordinary Pod CREATE naming candidate pools (two by name, one wildcard), and the
 * hostile mix a tenant can send: a Pod of ~6 MiB (many small objects to parse), a body
 * nested 1 000 000 deep (no AdmissionReview, as a stray client's: 400 once parsed), and a Pod
 * whose pool pattern makes a backtracking matcher slow.
 */
import { readFileSync } from 'node:fs';
import type { BenchBody } from './bodies.js';

type Json = Record<string, any>;

const fixture = (): Json => JSON.parse(readFileSync(new URL('../../test/fixtures/reviews/pod-create-mixed-pools.json', import.meta.url), 'utf8'));

function pod(uid: string, annotation: string, extra: (object: Json) => void = () => undefined): Json {
  const review = fixture();
  review.request.uid = uid;
  review.request.object.metadata.annotations = { 'ipam.spidernet.io/ippool': annotation };
  extra(review.request.object);
  return review;
}

const body = (id: string, title: string, review: Json | string, uid: string): BenchBody => ({
  id,
  title,
  path: '/validate-pod',
  json: typeof review === 'string' ? review : JSON.stringify(review),
  uid,
  expectAllowed: true,
});

/** Every body of the isolation bench, ids prefixed `iso-`. */
export function isolationBodies(): BenchBody[] {
  const env = Array.from({ length: 150_000 }, (_, i) => ({ name: `VARIABLE_${i}`, value: 'x' }));
  const depth = 1_000_000;
  return [
    body('iso-pod', 'Pod CREATE, candidate pools', pod('iso-pod-0001', '{"ipv4":["iaas-v4-7","plain-v4-3","pair-v4-1*"]}'), 'iso-pod-0001'),
    body(
      'iso-large',
      '~6 MiB Pod CREATE',
      pod('iso-large-0002', '{"ipv4":["iaas-v4-7"]}', (o) => (o.spec = { containers: [{ name: 'c', image: 'x', env }] })),
      'iso-large-0002',
    ),
    body(
      'iso-deep',
      `JSON nested ${depth} deep`,
      `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"iso-deep-0003","x":${'['.repeat(depth)}${']'.repeat(depth)}}}`,
      'iso-deep-0003',
    ),
    body(
      'iso-wildcard',
      'Pod CREATE, backtracking pattern',
      pod('iso-wildcard-0004', JSON.stringify({ ipv4: ['*'.repeat(13) + '?'.repeat(64)] })),
      'iso-wildcard-0004',
    ),
  ];
}
