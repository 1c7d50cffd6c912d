/**
 * The generated webhook configuration sends what it says: each webhook's matchConditions
 * evaluated by a CEL evaluator (@marcbachmann/cel-js; the kube-apiserver runs them in
 * test/e2e/cluster) over (object, oldObject) pairs, never an evaluation error (which
 * failurePolicy Fail would turn into a refusal), and no rule matches a subresource.
 */
import { evaluate } from '@marcbachmann/cel-js';
import { parse } from 'yaml';
import generate from '../../scripts/generate/webhook-configuration.js';
import { WEBHOOKS } from '../../src/defaults.js';

type Obj = Record<string, any>;
const configuration: Obj = parse(generate()[0]!.text);
const webhookOf = (row: { name: string }): Obj => configuration['webhooks'].find((w: Obj) => w['name'] === row.name);

/** Whether the API server sends (object, oldObject) to the webhook: every matchCondition true. */
function sends(row: { name: string }, object: Obj, oldObject: Obj | null = null): boolean {
  return (webhookOf(row)['matchConditions'] as Obj[]).every((c) => evaluate(c['expression'], { object, oldObject }) === true);
}

const annotated = (annotations?: Record<string, string>, rest: Obj = {}): Obj => ({
  metadata: { name: 'x', ...(annotations ? { annotations } : {}) },
  ...rest,
});
const IAAS = { 'ipam.spidernet.io/iaas-provider': 'p' };

test('one webhook per row of WEBHOOKS, none matching a subresource (status, scale)', () => {
  expect(configuration['webhooks'].map((w: Obj) => w['name'])).toEqual(Object.values(WEBHOOKS).map((row) => row.name));
  const resources = configuration['webhooks'].flatMap((w: Obj) => w['rules'].flatMap((r: Obj) => r['resources']));
  expect(resources.filter((r: string) => r.includes('/'))).toEqual([]);
});

test.each<[string, Obj, Obj | null, boolean]>([
  ['an IaaS pool created (oldObject null)', annotated(IAAS), null, true],
  ['a traditional pool created', annotated(), null, false],
  ['the IaaS annotation removed', annotated(), annotated(IAAS), true],
  ['the IaaS annotation added', annotated(IAAS), annotated(), true],
  ['a traditional pool updated', annotated({ a: 'b' }), annotated(), false],
])('the SpiderIPPool webhook: %s', (_name, object, oldObject, expected) => {
  expect(sends(WEBHOOKS.spiderIPPool, object, oldObject)).toBe(expected);
});

test.each<[string, Obj, Obj | null, boolean]>([
  ['a traditional default pool created', annotated(undefined, { spec: { default: true } }), null, true],
  ['an IaaS default pool', annotated(IAAS, { spec: { default: true } }), null, false],
  ['a default pool that was an IaaS pool', annotated(undefined, { spec: { default: true } }), annotated(IAAS), false],
  ['a pool without spec', annotated(), null, false],
])('the default-pools webhook: %s', (_name, object, oldObject, expected) => {
  expect(sends(WEBHOOKS.defaultPools, object, oldObject)).toBe(expected);
});

test("the ConfigMap webhook: Spiderpool's ConfigMap only", () => {
  expect(sends(WEBHOOKS.configMap, { metadata: { name: 'spiderpool-conf' } })).toBe(true);
  expect(sends(WEBHOOKS.configMap, { metadata: { name: 'other' } })).toBe(false);
});

test.each<[string, Obj, boolean]>([
  ['with ipam.spidernet.io/ippools', annotated({ 'ipam.spidernet.io/ippools': '[]' }), true],
  ['with ipam.spidernet.io/ippool', annotated({ 'ipam.spidernet.io/ippool': '{}' }), true],
  ['without annotations', annotated(), false],
  [
    'with the annotation, owned by a controller',
    { metadata: { annotations: { 'ipam.spidernet.io/ippool': '{}' }, ownerReferences: [{ name: 'r', controller: true }] } },
    false,
  ],
  ['with the annotation, owned by no controller', { metadata: { annotations: { 'ipam.spidernet.io/ippool': '{}' }, ownerReferences: [{ name: 'r' }] } }, true],
])('the Pod webhook: a Pod %s', (_name, pod, expected) => {
  expect(sends(WEBHOOKS.pod, pod)).toBe(expected);
});

test.each<[string, Obj, boolean]>([
  ['a Deployment whose template has the annotation', { spec: { template: annotated({ 'ipam.spidernet.io/ippools': '[]' }) } }, true],
  ['a CronJob whose job template has it', { spec: { jobTemplate: { spec: { template: annotated({ 'ipam.spidernet.io/ippool': '{}' }) } } } }, true],
  ['a Deployment without it', { spec: { template: annotated() } }, false],
  ['an object without spec', {}, false],
])('the workload webhook: %s', (_name, object, expected) => {
  expect(sends(WEBHOOKS.workload, { metadata: { name: 'w' }, ...object })).toBe(expected);
});

test('the Namespace webhook: a default IPv4 or IPv6 pool annotation', () => {
  expect(sends(WEBHOOKS.namespace, annotated({ 'ipam.spidernet.io/default-ipv6-ippool': '[]' }))).toBe(true);
  expect(sends(WEBHOOKS.namespace, annotated({ 'ipam.spidernet.io/default-ipv4-ippool': '[]' }))).toBe(true);
  expect(sends(WEBHOOKS.namespace, annotated({ other: 'x' }))).toBe(false);
});
