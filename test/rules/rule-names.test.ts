import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { CONFIGMAP_RULES, POOL_RULES, SPIDERIPPOOL_RULES, TRANSITION_RULES } from '../../src/rules/rule-names.js';

describe('the rule names (one list)', () => {
  it('splits every SpiderIPPool rule into pool rules and transition rules, each once', () => {
    expect([...TRANSITION_RULES, ...POOL_RULES].sort()).toEqual([...SPIDERIPPOOL_RULES].sort());
    expect(new Set(SPIDERIPPOOL_RULES).size).toBe(SPIDERIPPOOL_RULES.length);
    expect(TRANSITION_RULES).toEqual(['provider-fixed-in-use', 'parent-nic-fixed-in-use', 'category-fixed', 'mode-fixed']);
    expect(POOL_RULES).toContain('pair-capacity');
    expect(POOL_RULES).not.toContain('mode-fixed');
    expect(CONFIGMAP_RULES).toEqual(['conf-yml']);
    expect(SPIDERIPPOOL_RULES).not.toContain('conf-yml');
  });

  it("is what the README's pool_violations row lists as the gauge's rule label", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `spiderpool_iaas_webhook_pool_violations` |'));
    expect(row).toBeDefined();
    const labels = row!.split(' | ')[2]!;
    const named = [...labels.matchAll(/`([a-z][a-zA-Z-]*-[a-zA-Z-]+)`/g)].map((m) => m[1]);
    expect(named).toEqual(POOL_RULES);
  });
});
