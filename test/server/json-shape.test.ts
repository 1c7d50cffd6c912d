import fc from 'fast-check';
import { MAX_BODY_BYTES } from '../../src/defaults.js';
import { MAX_JSON_DEPTH, MAX_JSON_TOKENS, scanJsonShape } from '../../src/server/json-shape.js';
import { parseReviewBody } from '../../src/server/review-body.js';
import { loadReview } from '../fixtures/load.js';

/** The depth and token count of a parsed value, counted the slow way. */
function shapeOf(value: unknown, depth = 0): { depth: number; tokens: number } {
  if (value === null || typeof value !== 'object') return { depth, tokens: 1 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const keys = Array.isArray(value) ? 0 : children.length;
  let deepest = depth + 1;
  let tokens = 1 + keys;
  for (const child of children) {
    const inner = shapeOf(child, depth + 1);
    deepest = Math.max(deepest, inner.depth);
    tokens += inner.tokens;
  }
  return { depth: deepest, tokens };
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

describe('scanJsonShape', () => {
  it('counts the depth and the values and keys of any JSON as JSON.parse reads it (strings with quotes, backslashes, brackets, any Unicode)', () => {
    const text = fc.string({ unit: fc.constantFrom('"', '\\', '[', '{', '}', ']', ',', ':', 'a', ' ', 'é', '😀', '\u0000') });
    const json = fc.oneof(
      fc.jsonValue({ maxDepth: 6 }),
      fc.letrec((tie) => ({ v: fc.oneof(text, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(text, tie('v'), { maxKeys: 4 })) })).v,
    );
    fc.assert(
      fc.property(json, fc.boolean(), (value, spaced) => {
        const body = utf8(JSON.stringify(value, null, spaced ? 1 : undefined));
        expect(scanJsonShape(body)).toEqual(shapeOf(JSON.parse(body.toString('utf8'))));
      }),
      { numRuns: 500 },
    );
  });

  it('accepts exactly the bounds and refuses one past each, with a one-line message', () => {
    const nested = (n: number) => utf8('['.repeat(n) + ']'.repeat(n));
    expect(scanJsonShape(nested(5), 5, 100)).toEqual({ depth: 5, tokens: 5 });
    expect(scanJsonShape(nested(6), 5, 100)).toBe(
      "request body nests JSON deeper than 5 levels (the API server's limit for an object); send the AdmissionReview the API server sent",
    );
    const numbers = (n: number) =>
      utf8(
        `[${Array(n - 1)
          .fill(0)
          .join(',')}]`,
      );
    expect(scanJsonShape(numbers(10), 5, 10)).toEqual({ depth: 1, tokens: 10 });
    expect(scanJsonShape(numbers(11), 5, 10)).toBe('request body holds more than 10 JSON values and keys; send the AdmissionReview the API server sent');
  });

  it('reads an unterminated string or stray closers without looping or throwing (JSON.parse judges them)', () => {
    expect(scanJsonShape(utf8('["abc\\"'))).toEqual({ depth: 1, tokens: 2 });
    expect(scanJsonShape(utf8(']]]}}'))).toEqual({ depth: 0, tokens: 0 });
  });
});

describe('parseReviewBody refuses shapes the API server never sends, before JSON.parse', () => {
  const review = JSON.stringify(loadReview('pool-update-node-to-global'));
  it.each([
    [
      'the object nested one level past 10 000',
      review.replace('"object":', `"object":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)},"x":`),
      /deeper than 10002 levels/,
    ],
    ['3.5 million nested arrays (7 MiB)', '['.repeat(3_670_016) + ']'.repeat(3_670_016), /deeper than 10002 levels/],
    ['1 Mi empty arrays', `[${'[],'.repeat(MAX_JSON_TOKENS)}[]]`, /more than 1048576 JSON values and keys/],
    [
      'a million distinct keys',
      `{${Array.from({ length: MAX_JSON_TOKENS / 2 + 1 }, (_, i) => `"${i.toString(36)}":0`).join(',')}}`,
      /more than 1048576 JSON values and keys/,
    ],
  ])('%s', (_what, body, message) => {
    const parsed = parseReviewBody(utf8(body));
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toMatch(message);
  });

  it('parses a review whose object nests 10 000 levels, and a 7 MiB review of ordinary density', () => {
    const deepest = review.replace('"object":', `"object":${'['.repeat(MAX_JSON_DEPTH - 2)}${']'.repeat(MAX_JSON_DEPTH - 2)},"x":`);
    expect(parseReviewBody(utf8(deepest)).ok).toBe(true);
    const ips = Array.from({ length: 500_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(parseReviewBody(utf8(review.replace('"nodeName":["worker-1"]', `"ips":${JSON.stringify(ips)},"nodeName":["worker-1"]`))).ok).toBe(true);
  });

  it('parses a Pod UPDATE of 3 MiB each side in its densest real shape (env variables and their managedFields, 7.3 bytes per token)', () => {
    const pod = loadReview('pod-create-mixed-pools');
    const env = Array.from({ length: 36_000 }, (_, i) => ({ name: `VAR_${i}`, value: 'x' }));
    const fields = Object.fromEntries(env.map(({ name }) => [`k:{"name":"${name}"}`, { '.': {}, 'f:name': {}, 'f:value': {} }]));
    pod.request.operation = 'UPDATE';
    pod.request.object.spec.containers[0].env = env;
    pod.request.object.metadata.managedFields = [
      { manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:containers': fields } } },
    ];
    pod.request.oldObject = pod.request.object;
    const body = utf8(JSON.stringify(pod));
    expect(body.length).toBeGreaterThan(6 * 1024 * 1024);
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(parseReviewBody(body).ok).toBe(true);
  });
});
