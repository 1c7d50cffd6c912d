/**
 * The server of the isolation bench (isolation.ts), a process of its own: `serve`'s server
 * (src/server/serve.ts) with 10 000 SpiderIPPools of 64 allocations each in its pool index
 * (IaaS node pools, dual-stack pairs and traditional pools, names a wildcard can match),
 * dual-stack on, the warn-only webhooks in the worker (`worker`) or in-process
 * (`in-process`). Prints `{"port":N}` once it listens; stops on SIGTERM.
 *
 * Usage: node dist-bench/bench/isolation-server.js <cert-dir> worker|in-process [pools, default 10 000]
 */
import { pino } from 'pino';
import { PoolIndex } from '../src/store/pool-index.js';
import { DEFAULT_MAX_CONNECTIONS } from '../src/server/limits.js';
import { startServer } from '../src/server/serve.js';

const ALLOCATIONS = 64;

function allocated(i: number): string {
  const records: Record<string, unknown> = {};
  for (let a = 0; a < ALLOCATIONS; a++)
    records[`10.${i % 250}.${Math.floor(i / 250)}.${a + 2}`] = {
      interface: 'eth0',
      pod: `ns/pod-${i}-${a}`,
      podUid: `uid-${i}-${a}`,
      node: `worker-${i % 500}`,
    };
  return JSON.stringify(records);
}

function pool(name: string, i: number, { version = 4, iaas = true, pair }: { version?: 4 | 6; iaas?: boolean; pair?: string }): unknown {
  const annotations = {
    ...(iaas ? { 'ipam.spidernet.io/iaas-provider': 'cloud', 'ipam.spidernet.io/parent-nic': 'eth0' } : {}),
    ...(pair ? { 'ipam.spidernet.io/pair-pool': pair } : {}),
  };
  const ips = version === 4 ? [`10.${i % 250}.${Math.floor(i / 250)}.2-10.${i % 250}.${Math.floor(i / 250)}.250`] : [`fd00:${i}::2-fd00:${i}::ff`];
  return {
    apiVersion: 'spiderpool.spidernet.io/v2beta1',
    kind: 'SpiderIPPool',
    metadata: { name, resourceVersion: String(i + 1), annotations },
    spec: { ipVersion: version, ips, ...(iaas && !pair ? { nodeName: [`worker-${i % 500}`] } : {}) },
    status: { allocatedIPCount: ALLOCATIONS, totalIPCount: 249, allocatedIPs: allocated(i) },
  };
}

/** `total` pools: 1 000 pairs (2 000 pools), up to 5 000 IaaS node pools, the rest traditional (10 000: 3 000). */
function pools(total: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < 1_000; i++)
    out.push(pool(`pair-v4-${i}`, out.length, { pair: `pair-v6-${i}` }), pool(`pair-v6-${i}`, out.length + 1, { version: 6, pair: `pair-v4-${i}` }));
  for (let i = 0; i < 5_000 && out.length < total; i++) out.push(pool(`iaas-v4-${i}`, out.length, {}));
  while (out.length < total) out.push(pool(`plain-v4-${out.length}`, out.length, { iaas: false }));
  return out;
}

const [certDir, mode, count = '10000'] = process.argv.slice(2);
if (certDir === undefined || (mode !== 'worker' && mode !== 'in-process')) throw new Error('usage: isolation-server.js <cert-dir> worker|in-process');
const index = new PoolIndex();
index.replaceAll(pools(Number(count)));
const server = await startServer({
  port: 0,
  host: '127.0.0.1',
  certDir,
  generateCerts: false,
  logger: pino({ level: 'warn' }),
  // Every load generator connects from 127.0.0.1: that one address gets the whole cap, as in servers.ts.
  maxConnectionsPerAddress: DEFAULT_MAX_CONNECTIONS,
  review: { pools: index, dualStack: () => ({ known: true, enableIPv6: true }) },
  ...(mode === 'worker' ? { isolateWarnOnly: {} } : {}),
});
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));
