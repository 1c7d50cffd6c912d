/**
 * Enforcement actions on the real kube-apiserver with an audit policy: a refused (Deny), a
 * warned (Warn) and an audited (Audit) SpiderIPPool write each leave
 * `<webhook>/decision` and `<webhook>/rules` in the API server's audit log; kubectl prints
 * the Warn rule's cause as a warning; a clean write leaves neither annotation.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { WEBHOOKS } from '../../../src/defaults.js';
import { spiderIPPool } from '../../helpers/pools.js';
import { until } from '../../helpers/until.js';
import { startCluster, type Cluster } from './harness.js';

/** Every SpiderIPPool write at Metadata level: the level that carries admission audit annotations. */
const AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata', resources: [{ group: 'spiderpool.spidernet.io', resources: ['spiderippools'] }] }, { level: 'None' }],
};

const WEBHOOK = WEBHOOKS.spiderIPPool.name;
let cluster: Cluster;
let dir: string;
let auditLog: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'enforcement-e2e-'));
  auditLog = path.join(dir, 'audit.log');
  await writeFile(path.join(dir, 'policy.yaml'), stringify(AUDIT_POLICY));
  cluster = await startCluster({
    apiServerArgs: [`--audit-policy-file=${path.join(dir, 'policy.yaml')}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking'],
    serveArgs: ['--enforcement=Deny', '--enforcement=nodes-count=Warn', '--enforcement=parent-nic-missing=Audit'],
  });
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The annotations of our webhook on the ResponseComplete event of a create of pool `name`. */
async function annotationsOf(name: string): Promise<Record<string, string>> {
  const event = await until(async () => {
    const lines = (await readFile(auditLog, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
    return lines.map((l) => JSON.parse(l)).find((e) => e.stage === 'ResponseComplete' && e.verb === 'create' && e.objectRef?.name === name);
  }, `the audit event of creating SpiderIPPool ${name}`);
  return Object.fromEntries(Object.entries((event.annotations ?? {}) as Record<string, string>).filter(([key]) => key.startsWith(`${WEBHOOK}/`)));
}

const pool = (name: string, nodeName: string[], extra: { provider?: string; nic?: string } = {}) =>
  spiderIPPool(name, {
    provider: extra.provider ?? 'example-cloud',
    ...(extra.nic !== undefined ? { nic: extra.nic } : {}),
    subnet: '10.9.0.0/16',
    ips: ['10.9.0.10-10.9.0.20'],
    nodeName,
  });

describe('enforcement actions through the API server', () => {
  it('Deny: refused, and the audit log records decision=deny with its rule', async () => {
    const result = await cluster.apply(pool('refused', ['w1'], { provider: '', nic: 'eth0' }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is invalid: metadata\.annotations\[ipam\.spidernet\.io\/iaas-provider\]/);
    expect(await annotationsOf('refused')).toEqual({ [`${WEBHOOK}/decision`]: 'deny', [`${WEBHOOK}/rules`]: 'provider-empty' });
  });

  it('Warn: created, kubectl prints the cause as a warning, the audit log records decision=warn', async () => {
    const result = await cluster.apply(pool('warned', ['w1', 'w2'], { nic: 'eth0' }));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^Warning: spec\.nodeName: Invalid value: lists 2 nodes /m);
    expect(await annotationsOf('warned')).toEqual({ [`${WEBHOOK}/decision`]: 'warn', [`${WEBHOOK}/rules`]: 'nodes-count' });
  });

  it('Audit: created without a warning of it, the audit log records decision=audit', async () => {
    const result = await cluster.apply(pool('audited', ['w1']));
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/parent-nic/);
    expect(await annotationsOf('audited')).toEqual({ [`${WEBHOOK}/decision`]: 'audit', [`${WEBHOOK}/rules`]: 'parent-nic-missing' });
  });

  it('a clean write: no annotation of ours', async () => {
    expect((await cluster.apply(pool('clean', ['w1'], { nic: 'eth0' }))).code).toBe(0);
    expect(await annotationsOf('clean')).toEqual({});
  });
});
