/**
 * The committed ValidatingAdmissionPolicy files are what scripts/generate/admission-policy.ts
 * writes from the rule modules (src/rules/pool-rules/), and the component's YAML reads back as
 * the variables and validations those modules define.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import generate, { POLICY_FILE } from '../../scripts/generate/admission-policy.js';
import { policyParts } from '../../src/rules/pool-rules/twins.js';

const committed = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the generated ValidatingAdmissionPolicy', () => {
  test.each(generate().map((file) => [file.path, file.text] as const))('%s is committed as generated (else: npm run generate)', (path, text) => {
    expect(committed(path)).toBe(text);
  });

  test("the component's YAML reads back as the rule modules' variables and validations, in cause order", () => {
    const policy = parseAllDocuments(committed(POLICY_FILE)).map((d) => d.toJS())[0];
    const { variables, validations } = policyParts();
    expect(policy.spec.variables).toEqual(variables.map(({ name, expression }) => ({ name, expression })));
    expect(policy.spec.validations).toEqual(validations.map(({ expression, message, messageExpression }) => ({ expression, message, messageExpression })));
  });
});
