/**
 * How often and how patiently the replicas watch each other in `serve` (src/cli/replicas.ts
 * starts peers.ts with these): one source for the server and for the node-failure windows
 * stated from them (node-failure-windows.ts, docs/node-failure.md).
 */
import type { PeerPolicy } from './peer-verdict.js';

/** Milliseconds between rounds: a dead peer is noticed within a few of them. */
export const PEER_ROUND_INTERVAL_MS = 1_000;
/** A probe's deadline, in milliseconds: a healthy peer answers `/healthz` in milliseconds. */
export const PEER_PROBE_TIMEOUT_MS = 1_000;
/** Each API call's deadline in a round of peer readiness or rebalancing, in milliseconds. */
export const REPLICA_CALL_TIMEOUT_MS = 2_000;
/** Two failed probes in a row, and a heartbeat unchanged for 2.5 rounds. */
export const PEER_POLICY: PeerPolicy = { failedProbesToMark: 2, heartbeatStaleMs: 2_500 };
