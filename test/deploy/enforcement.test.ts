/**
 * Enforcement in the deployment files, Node only: the chart's `enforcement.default` and
 * `enforcement.rules` (values.yaml, values.schema.json listing the rule names as keys,
 * base.yaml passing them as `serve --enforcement`), and the kustomize component
 * deploy/components/enforcement-audit, each readable by the server's own parser.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { ENFORCEMENT_ACTIONS } from '../../src/admission/enforcement.js';
import { parseEnforcement } from '../../src/rules/enforcement-table.js';
import { REFUSAL_RULES } from '../../src/rules/rule-names.js';
import { DEPLOY_DIR } from './readme-overlays.js';
import { valuesProblems, type JsonSchema } from './values-schema.js';

const CHART_DIR = path.join(DEPLOY_DIR, 'helm/spiderpool-iaas-webhook');
const read = (file: string) => readFile(path.join(CHART_DIR, file), 'utf8');

describe("the chart's enforcement values", () => {
  it('default to Deny for every rule; the schema names every rule, each action', async () => {
    const values = parse(await read('values.yaml'));
    const schema = JSON.parse(await read('values.schema.json')) as JsonSchema & { properties: Record<string, any> };
    expect(values['enforcement']).toEqual({ default: 'Deny', rules: {} });
    const enforcement = schema.properties['enforcement'];
    expect(Object.keys(enforcement.properties.rules.properties)).toEqual(REFUSAL_RULES);
    expect(enforcement.properties.default.enum).toEqual(ENFORCEMENT_ACTIONS);
    for (const rule of REFUSAL_RULES) expect(enforcement.properties.rules.properties[rule].enum).toEqual(ENFORCEMENT_ACTIONS);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a misspelt rule', { default: 'Deny', rules: { 'mode-fixd': 'Warn' } }, /^enforcement\.rules: unknown key "mode-fixd"$/],
    ['an action of another tool', { default: 'dryrun', rules: {} }, /^enforcement\.default: must be equal to one of the allowed values$/],
    [
      'a rule action in lower case',
      { default: 'Deny', rules: { 'conf-yml': 'warn' } },
      /^enforcement\.rules\.conf-yml: must be equal to one of the allowed values$/,
    ],
  ])('refuses %s', async (_name, enforcement, expected) => {
    const values = { ...parse(await read('values.yaml')), enforcement };
    expect(valuesProblems(JSON.parse(await read('values.schema.json')), values)).toEqual([expect.stringMatching(expected)]);
  });

  it('are passed to serve as --enforcement=DEFAULT (when not Deny) and --enforcement=RULE=ACTION', async () => {
    const base = await read('templates/base.yaml');
    expect(base).toContain('(printf "--enforcement=%s" $default)');
    expect(base).toContain('(printf "--enforcement=%s=%s" $rule (get $rules $rule))');
  });
});

describe('deploy/components/enforcement-audit', () => {
  it('adds --enforcement=Audit to serve, which the server reads as every rule in Audit; the chart makes it enforcement.default', async () => {
    const component = parse(await readFile(path.join(DEPLOY_DIR, 'components/enforcement-audit/kustomization.yaml'), 'utf8'));
    const [op] = parse(component['patches'][0]['patch']) as { op: string; path: string; value: string }[];
    expect(op).toEqual({ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--enforcement=Audit' });
    expect(parseEnforcement([op!.value.replace(/^--enforcement=/, '')])).toEqual({ default: 'Audit', rules: {} });
    expect(await read('templates/components.yaml')).toMatch(/\$asValue := dict [^\n]*"enforcement-audit" "enforcement\.default"/);
  });
});
