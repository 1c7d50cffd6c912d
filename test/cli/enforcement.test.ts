/**
 * `--enforcement` in the command line: one-line usage errors with a did-you-mean, and what
 * `review`, `audit` and `validate-config` show and exit with for each action
 * (`review --warnings-as-errors` as kubectl's flag).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { stringify } from 'yaml';
import { collectEnforcement } from '../../src/cli/arguments.js';
import { auditFromArguments } from '../../src/cli/audit.js';
import { runReview, type ReviewCommand } from '../../src/cli/review.js';
import { validateConfigText } from '../../src/cli/validate-config.js';
import { actionsOf, parseEnforcement } from '../../src/rules/enforcement-table.js';
import { ClusterState } from '../../src/store/state.js';
import { spiderIPPool } from '../helpers/pools.js';

const twoNodes = stringify(spiderIPPool('p', { provider: 'cloud', nic: 'eth0', nodeName: ['w1', 'w2'] })); // nodes-count
const run = (enforcement: string[], extra: Partial<ReviewCommand> = {}) =>
  runReview({
    inputs: [{ text: twoNodes, source: 'p.yaml' }],
    configMap: { name: 'spiderpool-conf' },
    state: ClusterState.of([]).state,
    enforcement: parseEnforcement(enforcement),
    ...extra,
  });

describe('--enforcement on the command line', () => {
  it('collects values, each checked with those before it, a bad one a one-line usage error', () => {
    expect(['warn', 'mode-fixed=Deny'].reduce<string[]>((all, v) => collectEnforcement(v, all), [])).toEqual(['warn', 'mode-fixed=Deny']);
    expect(() => collectEnforcement('nodes-cuont=Warn', [])).toThrow(new InvalidArgumentError('no rule is named "nodes-cuont"; did you mean nodes-count?'));
    expect(() => collectEnforcement('Audit', ['Warn'])).toThrow(InvalidArgumentError);
  });

  it('is a flag of serve, review, audit and validate-config', async () => {
    const main = await readFile(new URL('../../src/cli/main.ts', import.meta.url), 'utf8');
    for (const command of ['serve', 'review', 'audit', 'validate-config']) expect(main).toContain(`enforcementOption(program.command('${command}'))`);
  });
});

describe('review --enforcement', () => {
  it('Deny: refused as before, exit 1', () => {
    expect(run(['Deny'])).toMatchObject({ exitCode: 1, stderr: expect.stringMatching(/is invalid: spec\.nodeName/) });
  });

  it('Warn: the cause as a kubectl warning and a note, exit 0; 1 with --warnings-as-errors', () => {
    const result = run(['nodes-count=Warn']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('spiderippool.spiderpool.spidernet.io/p created (server dry run)\n');
    expect(result.stderr).toMatch(/^Warning: spec\.nodeName: Invalid value: lists 2 nodes /m);
    expect(result.stderr).toContain('note: SpiderIPPool "p": let through by --enforcement: nodes-count (Warn: allowed with a warning); Deny would refuse it\n');
    expect(run(['nodes-count=Warn'], { warningsAsErrors: true }).exitCode).toBe(1);
  });

  it('Audit: no warning, a note, exit 0 even with --warnings-as-errors (kubectl would print nothing)', () => {
    const result = run(['Audit'], { warningsAsErrors: true });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe(
      'note: SpiderIPPool "p": let through by --enforcement: nodes-count (Audit: allowed, recorded in the audit log only); Deny would refuse it\n',
    );
  });

  it('-o json: the response with its audit annotations', () => {
    const result = run(['Audit'], { output: 'json' });
    expect(JSON.parse(result.stdout).response).toMatchObject({ allowed: true, auditAnnotations: { decision: 'audit', rules: 'nodes-count' } });
  });
});

describe('audit --enforcement', () => {
  it('shows the count by action; exit 1 only for a Deny rule broken', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'audit-enforcement-'));
    try {
      const file = path.join(dir, 'pools.yaml');
      await writeFile(file, twoNodes);
      const warn = await auditFromArguments({ pools: [file], enforcement: ['Warn'] });
      expect(warn).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/\nby action: Warn 1 \(allowed with a warning\)\n$/) });
      const mixed = await auditFromArguments({ pools: [file], enforcement: ['Audit', 'nodes-count=Deny'], output: 'json' });
      expect(mixed.exitCode).toBe(1);
      expect(JSON.parse(mixed.stdout).violations.map((v: { rule: string; action: string }) => [v.rule, v.action])).toEqual([['nodes-count', 'Deny']]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('validate-config --enforcement', () => {
  const bad = 'iaasNetworkProvider:\n  serverUrl: http://p:80\n  httpRequestTimeout: 100s\n';
  it('Warn: the cause as a warning and a note, exit 0; Deny as before', () => {
    const warned = validateConfigText(bad, 'spiderpool-conf', actionsOf(parseEnforcement(['conf-yml=Warn'])));
    expect(warned.exitCode).toBe(0);
    expect(warned.stderr).toMatch(/^Warning: data\[conf\.yml\]\.iaasNetworkProvider\.httpRequestTimeout: Invalid value: "100s": /);
    expect(warned.stderr).toContain(
      'note: ConfigMap "spiderpool-conf": let through by --enforcement: conf-yml (Warn: allowed with a warning); Deny would refuse it\n',
    );
    expect(validateConfigText(bad, 'spiderpool-conf', actionsOf(parseEnforcement(['Deny'])))).toEqual(validateConfigText(bad, 'spiderpool-conf'));
    expect(validateConfigText(bad, 'spiderpool-conf').exitCode).toBe(1);
  });

  it('-o json: the audit annotations say what fired, Audit included (else it reads as a clean conf.yml)', () => {
    const json = (enforcement: string[], text = bad) =>
      JSON.parse(validateConfigText(text, 'spiderpool-conf', actionsOf(parseEnforcement(enforcement)), 'json').stdout);
    expect(json(['Audit'])).toMatchObject({ allowed: true, warnings: [], causes: [], auditAnnotations: { decision: 'audit', rules: 'conf-yml' } });
    expect(json(['Deny'])).toMatchObject({ allowed: false, auditAnnotations: { decision: 'deny', rules: 'conf-yml' } });
    expect(json(['Audit'], 'iaasNetworkProvider:\n  serverUrl: http://p:80\n')).not.toHaveProperty('auditAnnotations');
  });
});
