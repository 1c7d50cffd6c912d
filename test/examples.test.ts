/**
 * examples/: each SpiderIPPool and spiderpool-conf example gets the verdict it is there to
 * show, through the CLI's own functions (`review -f FILE`, `validate-config FILE`), and every
 * file there has one in this table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { reviewFromArguments } from '../src/cli/review.js';
import { validateConfigText } from '../src/cli/validate-config.js';

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));

/** Each example: allowed, or refused and by which rule (SpiderIPPools) or on which fields (conf.yml, in file order). */
const VERDICTS: Record<string, { allowed: true } | { refusedBy: string } | { fields: string[] }> = {
  'pools/good/node-pool.yaml': { allowed: true },
  'pools/good/global-pool.yaml': { allowed: true },
  'pools/good/dual-stack-pair.yaml': { allowed: true },
  'pools/broken/node-pool-two-nodes.yaml': { refusedBy: 'nodes-count' },
  'pools/broken/node-pool-without-parent-nic.yaml': { refusedBy: 'parent-nic-missing' },
  'pools/broken/dual-stack-pair-ipv6-smaller.yaml': { refusedBy: 'pair-capacity' },
  'pools/broken/dual-stack-pair-both-ipv4.yaml': { refusedBy: 'pair-ipVersion' },
  'config/good/spiderpool-conf.yaml': { allowed: true },
  'config/good/conf.yml': { allowed: true },
  'config/broken/timeout-100s.yaml': { fields: ['data[conf.yml].iaasNetworkProvider.httpRequestTimeout'] },
  'config/broken/timeout-without-unit.yml': { fields: ['data[conf.yml].iaasNetworkProvider.httpRequestTimeout'] },
  'config/broken/two-causes.yml': { fields: ['data[conf.yml].iaasNetworkProvider.httpRequestTimeout', 'data[conf.yml].iaasNetworkProvider.serverUrl'] },
};

const files = (folder: string): string[] =>
  readdirSync(path.join(EXAMPLES, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(EXAMPLES, path.join(entry.parentPath, entry.name)));

describe('examples/', () => {
  it('every example has its verdict in this test', () => {
    expect([...files('pools'), ...files('config')].sort()).toEqual(Object.keys(VERDICTS).sort());
  });

  it.each(Object.entries(VERDICTS).filter(([file]) => file.startsWith('pools/')))('review -f %s: %j', async (file, verdict) => {
    const result = await reviewFromArguments([path.join(EXAMPLES, file)], { pools: [], configmapName: 'spiderpool-conf' }, () =>
      Promise.reject(new Error('no stdin')),
    );
    if ('allowed' in verdict) {
      expect(result).toMatchObject({ exitCode: 0, stderr: expect.not.stringMatching(/^(The |Error from server)/m) });
      return;
    }
    expect(result.exitCode).toBe(1);
    // review's note names the rules that refused the pool.
    expect(result.stderr).toMatch(new RegExp(`^note: SpiderIPPool "[^"]+": .*\\(${'refusedBy' in verdict ? verdict.refusedBy : ''}[:)]`, 'm'));
  });

  it('the good pair warns only of its first pool, whose partner is created after it, as docs/cli.md says', async () => {
    const result = await reviewFromArguments([path.join(EXAMPLES, 'pools/good/dual-stack-pair.yaml')], { pools: [], configmapName: 'spiderpool-conf' }, () =>
      Promise.reject(new Error('no stdin')),
    );
    const warnings = result.stderr.split('\n').filter((line) => line.startsWith('Warning: '));
    expect(warnings).toEqual([expect.stringContaining('pair pool "worker-2-eth0-v6" does not exist yet, so the pairing is not checked now; ')]);
    const documented = readFileSync(new URL('../docs/cli.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(documented).toContain('`Warning: … pair pool "worker-2-eth0-v6" does not exist yet, so the pairing is not checked now; …`');
  });

  it("review's stdout for pools/good/node-pool.yaml is test/fixtures/cli/, which the tarball and arm64 tests expect", async () => {
    const result = await reviewFromArguments([path.join(EXAMPLES, 'pools/good/node-pool.yaml')], { pools: [], configmapName: 'spiderpool-conf' }, () =>
      Promise.reject(new Error('no stdin')),
    );
    expect(result.stdout).toBe(readFileSync(new URL('fixtures/cli/review-node-pool.stdout', import.meta.url), 'utf8'));
  });

  it.each(Object.entries(VERDICTS).filter(([file]) => file.startsWith('config/')))('validate-config %s: %j', (file, verdict) => {
    const result = validateConfigText(readFileSync(path.join(EXAMPLES, file), 'utf8'), 'spiderpool-conf', undefined, 'json');
    const printed = JSON.parse(result.stdout);
    expect(result.exitCode).toBe('allowed' in verdict ? 0 : 1);
    expect(printed.causes.map((c: { field: string }) => c.field)).toEqual('fields' in verdict ? verdict.fields : []);
  });
});
