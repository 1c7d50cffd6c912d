/** Which writes the API server sends to a webhook (rules, namespaceSelector, objectSelector), as `review` applies them. */
import { selects, webhookMatches, WebhookMatchSchema, type MatchedRequest } from '../../src/kubernetes/webhook-match.js';
import { readWebhooks } from '../../src/cli/review.js';

const request = (over: Partial<MatchedRequest>): MatchedRequest => ({
  operation: 'CREATE',
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespace: 'kube-system',
  namespaceLabels: { 'kubernetes.io/metadata.name': 'kube-system' },
  objectLabels: {},
  oldObjectLabels: undefined,
  isNamespace: false,
  ...over,
});

describe('webhook matching', () => {
  it('the deploy/ webhooks: pools on CREATE and UPDATE only, the ConfigMap in kube-system only', async () => {
    const [pools, configMaps] = await readWebhooks();
    const pool = request({ group: 'spiderpool.spidernet.io', version: 'v2beta1', resource: 'spiderippools', namespace: '', namespaceLabels: {} });
    expect(webhookMatches(pools!, pool)).toBe(true);
    expect(webhookMatches(pools!, { ...pool, operation: 'UPDATE' })).toBe(true);
    expect(webhookMatches(pools!, { ...pool, operation: 'DELETE' })).toBe(false);
    expect(webhookMatches(configMaps!, request({}))).toBe(true);
    expect(webhookMatches(configMaps!, request({ namespace: 'default', namespaceLabels: { 'kubernetes.io/metadata.name': 'default' } }))).toBe(false);
    expect(webhookMatches(configMaps!, request({ resource: 'secrets' }))).toBe(false);
  });

  it('scope, wildcards, exact versions and object selectors', () => {
    const webhook = WebhookMatchSchema.parse({
      name: 'w',
      matchPolicy: 'Exact',
      rules: [{ operations: ['*'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['*'], scope: 'Namespaced' }],
      objectSelector: { matchLabels: { guarded: 'yes' } },
    });
    const deployment = request({ group: 'apps', resource: 'deployments', namespace: 'shop', objectLabels: { guarded: 'yes' } });
    expect(webhookMatches(webhook, deployment)).toBe(true);
    expect(webhookMatches(webhook, { ...deployment, version: 'v1beta1' })).toBe(false);
    expect(webhookMatches(webhook, { ...deployment, objectLabels: {} })).toBe(false);
    expect(webhookMatches(webhook, { ...deployment, objectLabels: {}, oldObjectLabels: { guarded: 'yes' } })).toBe(true);
    expect(webhookMatches(webhook, { ...deployment, namespace: '' })).toBe(false);
  });

  it.each([
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, { a: '1' }, true],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, {}, false],
    [{ matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, {}, true],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, { a: '' }, true],
    [{ matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '' }, false],
    [{}, { a: '1' }, true],
  ] as const)('selector %j on %j: %s', (selector, labels, expected) => {
    expect(selects(selector as never, labels)).toBe(expected);
  });
});
