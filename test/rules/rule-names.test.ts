import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { CLUSTER_RULES, CONFIGMAP_RULES, POOL_RULES, SPIDERIPPOOL_RULES, TRANSITION_RULES } from '../../src/rules/rule-names.js';

const EVERY_RULE = [...SPIDERIPPOOL_RULES, ...CONFIGMAP_RULES];

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

  /** The rule names (backquoted, with a dash) of docs/operations.md's metrics row of `metric`. */
  const namedInOperations = async (metric: string) => {
    const doc = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${metric}\` |`));
    expect(row).toBeDefined();
    const labels = row!.split(' | ')[2]!;
    return [...labels.matchAll(/`([a-z][a-zA-Z-]*-[a-zA-Z-]+)`/g)].map((m) => m[1]);
  };

  it("is what docs/operations.md's pool_violations row lists as the gauge's rule label", async () => {
    expect(await namedInOperations('spiderpool_iaas_webhook_pool_violations')).toEqual(POOL_RULES);
  });

  it("is what docs/operations.md's refusals_total row lists as the counter's rule label, beside the pool rules", async () => {
    expect((await namedInOperations('spiderpool_iaas_webhook_refusals_total')).sort()).toEqual(
      [...TRANSITION_RULES, ...CLUSTER_RULES, ...CONFIGMAP_RULES].sort(),
    );
  });

  it('is what docs/rules.md and the README list, one row or line per rule', async () => {
    const rules = await readFile(new URL('../../docs/rules.md', import.meta.url), 'utf8');
    const index = rules.slice(rules.indexOf('<!-- rule index'), rules.indexOf('<!-- rule index: end -->'));
    const rows = [...index.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual([...EVERY_RULE].sort());
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const lines = [...readme.matchAll(/^- (`[a-zA-Z-]+`(?:, `[a-zA-Z-]+`)*):/gm)].flatMap((m) => m[1]!.split(', ').map((name) => name.slice(1, -1)));
    expect([...lines, ...[...readme.matchAll(/: `(conf-yml)`,/g)].map((m) => m[1])].sort()).toEqual([...EVERY_RULE].sort());
  });
});
