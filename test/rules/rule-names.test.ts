import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { CLUSTER_RULES, CONFIGMAP_RULES, POOL_RULES, SPIDERIPPOOL_RULES, TRANSITION_RULES } from '../../src/rules/rule-names.js';

describe('the rule names (one list)', () => {
  it('splits every SpiderIPPool rule into pool, transition and cluster rules, each once', () => {
    expect([...TRANSITION_RULES, ...POOL_RULES, ...CLUSTER_RULES].sort()).toEqual([...SPIDERIPPOOL_RULES].sort());
    expect(CLUSTER_RULES).toEqual(['pair-unsynced']);
    expect(new Set(SPIDERIPPOOL_RULES).size).toBe(SPIDERIPPOOL_RULES.length);
    expect(TRANSITION_RULES).toEqual(['provider-fixed-in-use', 'parent-nic-fixed-in-use', 'category-fixed', 'mode-fixed']);
    expect(POOL_RULES).toContain('pair-capacity');
    expect(POOL_RULES).not.toContain('mode-fixed');
    expect(CONFIGMAP_RULES).toEqual(['conf-yml']);
    expect(SPIDERIPPOOL_RULES).not.toContain('conf-yml');
  });

  /** The rule names (backquoted, with a dash) of the README's metrics row of `metric`. */
  const namedInReadme = async (metric: string) => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${metric}\` |`));
    expect(row).toBeDefined();
    const labels = row!.split(' | ')[2]!;
    return [...labels.matchAll(/`([a-z][a-zA-Z-]*-[a-zA-Z-]+)`/g)].map((m) => m[1]);
  };

  it("is what the README's pool_violations row lists as the gauge's rule label", async () => {
    expect(await namedInReadme('spiderpool_iaas_webhook_pool_violations')).toEqual(POOL_RULES);
  });

  it("is what the README's refusals_total row lists as the counter's rule label, beside the pool rules", async () => {
    expect((await namedInReadme('spiderpool_iaas_webhook_refusals_total')).sort()).toEqual([...TRANSITION_RULES, ...CLUSTER_RULES, ...CONFIGMAP_RULES].sort());
  });
});
