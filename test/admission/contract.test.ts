import { z } from 'zod';
import { describe, expect, it } from '@jest/globals';
import { someValidator, warningsOnly, type Validator } from '../../src/admission/contract.js';

const groupKind = { group: 'example.io', kind: 'Thing' };
const ThingSchema = z.object({ size: z.number() });
type Other = { colour: string };

describe("someValidator (the registry hides each validator's object type)", () => {
  it('opens to the validator it hides, its schema and validate* still paired', () => {
    const validator: Validator<z.infer<typeof ThingSchema>> = {
      groupKind,
      schema: ThingSchema,
      validateCreate: (thing) => warningsOnly([`size ${thing.size}`]),
    };
    const hidden = someValidator(validator);
    expect(hidden.groupKind).toBe(groupKind);
    expect(hidden.schema).toBe(ThingSchema);
    const warnings = hidden.open((typed) => typed.validateCreate?.(typed.schema.parse({ size: 3 }), {} as never).warnings);
    expect(warnings).toEqual(['size 3']);
  });

  it('refuses, at type-check time, a validate* that takes another type than the schema decodes', () => {
    type Thing = z.infer<typeof ThingSchema>;
    const wrongPairing = () =>
      someValidator<Thing>({
        groupKind,
        schema: ThingSchema,
        // @ts-expect-error the schema decodes {size: number}, not Other
        validateCreate: (other: Other) => warningsOnly([other.colour]),
      });
    const inferred = () =>
      // @ts-expect-error T inferred from either side, the other side does not fit
      someValidator({ groupKind, schema: ThingSchema, validateUpdate: (_old: Other, other: Other) => warningsOnly([other.colour]) });
    // Both are errors of `tsc` (npm test's typecheck); at run time they would read an absent field.
    expect(wrongPairing().open((typed) => typed.validateCreate?.(typed.schema.parse({ size: 1 }), {} as never).warnings)).toEqual([undefined]);
    expect(inferred().groupKind).toBe(groupKind);
  });
});
