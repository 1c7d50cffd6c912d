import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { z } from 'zod';
import { compiled } from '../../src/kubernetes/fast-schema.js';
import { AdmissionReviewRequestSchema } from '../../src/kubernetes/schema.js';
import { wireValidators } from '../../src/rules/registry.js';
import { loadReview } from '../fixtures/load.js';

/** Every schema a review is decoded with: the envelope and each validator's object. */
const SCHEMAS: [string, z.ZodType][] = [
  ['AdmissionReview', AdmissionReviewRequestSchema],
  ...wireValidators({}).map(({ webhook, validator }) => [`${validator.groupKind.kind} (${webhook})`, validator.schema] as [string, z.ZodType]),
];

const REVIEWS = readdirSync(new URL('../fixtures/reviews/', import.meta.url))
  .filter((file) => file.endsWith('.json'))
  .map((file) => loadReview(file.slice(0, -'.json'.length)));

/** What a parse says, in a form `toEqual` compares whole: the output, or every issue with its path and message. */
function outcome(schema: z.ZodType, value: unknown) {
  const result = schema.safeParse(value);
  return result.success ? { data: result.data } : { issues: result.error.issues.map(({ path, message, code }) => ({ path, message, code })) };
}

describe('compiled', () => {
  it.each(SCHEMAS)('%s compiles (z.compile strict: its top level is not left to the runtime parser)', (_name, schema) => {
    expect(() => z.compile(schema, { strict: true })).not.toThrow();
  });

  it('compiles each schema once', () => {
    const [, schema] = SCHEMAS[0]!;
    expect(compiled(schema)).toBe(compiled(schema));
    expect(compiled(schema)).not.toBe(schema);
  });

  it.each(SCHEMAS)('%s: the compiled parse answers as the runtime one on every fixture', (_name, schema) => {
    for (const review of REVIEWS) {
      for (const value of [review, review.request.object, review.request.oldObject]) {
        expect(outcome(compiled(schema), value)).toStrictEqual(outcome(schema, value));
      }
    }
  });

  it.each(SCHEMAS)('%s: the compiled parse answers as the runtime one on fixtures with a field replaced by any JSON', (_name, schema) => {
    const objects = REVIEWS.flatMap((review) => [review.request.object, review.request.oldObject]).filter((o) => o !== null && typeof o === 'object');
    fc.assert(
      fc.property(
        fc.constantFrom(...objects),
        fc.array(fc.constantFrom('metadata', 'annotations', 'spec', 'nodeName', 'ips', 'data', 'template', 'request', 'kind', 'uid', '0')),
        fc.jsonValue(),
        (base, path, replacement) => {
          const value = structuredClone(base);
          let at: any = value;
          for (const key of path.slice(0, -1)) if (at !== null && typeof at === 'object' && key in at) at = at[key];
          if (at !== null && typeof at === 'object' && path.length > 0) at[path.at(-1)!] = replacement;
          expect(outcome(compiled(schema), value)).toStrictEqual(outcome(schema, value));
        },
      ),
      { numRuns: 300 },
    );
  });
});
