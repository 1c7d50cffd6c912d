import { describe, expect, it } from '@jest/globals';
import { WEBHOOKS } from '../../src/defaults.js';
import { wireValidators } from '../../src/rules/registry.js';

describe('the registry: each validator answers for the webhook of WEBHOOKS sending its kind', () => {
  const byKind = new Map(wireValidators({}).map(({ validator, webhook }) => [`${validator.groupKind.group}/${validator.groupKind.kind}`, webhook]));

  it.each([
    ['spiderpool.spidernet.io/SpiderIPPool', WEBHOOKS.spiderIPPool.name],
    ['/ConfigMap', WEBHOOKS.configMap.name],
    ['/Pod', WEBHOOKS.pod.name],
    ['apps/Deployment', WEBHOOKS.workload.name],
    ['apps/ReplicaSet', WEBHOOKS.workload.name],
    ['batch/CronJob', WEBHOOKS.workload.name],
    ['/Namespace', WEBHOOKS.namespace.name],
  ])('%s: %s', (kind, webhook) => {
    expect(byKind.get(kind)).toBe(webhook);
  });

  it('wires every kind a webhook sends except the default pools one, which shares the SpiderIPPool path and validator', () => {
    const wired = new Set(byKind.values());
    expect(
      Object.values(WEBHOOKS)
        .filter((w) => !wired.has(w.name))
        .map((w) => w.name),
    ).toEqual([WEBHOOKS.defaultPools.name]);
    expect(WEBHOOKS.defaultPools.path).toBe(WEBHOOKS.spiderIPPool.path);
    expect(byKind.size).toBe(10);
  });
});
