/**
 * A node dies: the test cluster gains a second node (second-node.sh), deploy/ is installed
 * through the test overlay, and each scenario runs under the fault load (guarded writes
 * through the API server at 10/s), printing its failed calls, its longest stretch with a
 * failure and its recovery time (from the fault to the last failed call):
 *
 *   1  `kubectl drain` of the second node, which holds a replica: no call fails, and the
 *      replicas are on distinct nodes again once it is uncordoned
 *   2  the second node, holding one replica, dies (packets dropped, processes killed):
 *      failures only within the stated window of the kill, none until it returns, none
 *      after it rejoins
 *   3  both replicas on the second node (forced), which dies: failures only within the
 *      stated window; none when it returns, and the replicas end on distinct nodes
 *   4  pod traffic between the two nodes cut while both reach the API server: no call
 *      fails, neither replica not Ready longer than the stated bound of a false alarm
 *
 * The control plane runs on the first node, so the second is the one that dies. The
 * controller-manager and kube-proxy keep Kubernetes' defaults: the windows are those
 * stated for a default control plane (src/cluster/node-failure-windows.ts, docs/node-failure.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEPLOYMENT_FILE, nodeFailureWindows } from '../../src/cluster/node-failure-windows.js';
import { runProcess } from '../e2e/cluster/processes.js';
import { CLI, ROOT } from '../e2e/cluster/webhook.js';
import { failureWindow, type FailureWindow } from '../helpers/failure-window.js';
import { until } from '../helpers/until.js';
import { runFaults, type Fault, type FaultRunResult } from './faults.js';
import { ApiClient, clusterDir, mustKubectl } from './kube.js';
import { BOTH_NODES, FIRST_NODE, SECOND_NODE, crowdOnto, longestNotReadySeconds, placedOn, secondNode, servingNodes, uncordon } from './twonode.js';
import { copyOverlay, prepareSpiderpool, report, webhookAnswers, waitAvailable } from './webhook-install.js';

/** The windows stated for what the overlay installs: deploy/ (docs/operations.md has the measured figures). */
const WINDOWS = nodeFailureWindows(readFileSync(path.join(ROOT, DEPLOYMENT_FILE), 'utf8'), DEPLOYMENT_FILE);
/** Seconds added to each window here: rounds, API calls, kube-proxy and a pod's start wait for the loaded 2-core machine's CPU. */
const LOADED_MACHINE_MARGIN_S = 5;
/** Seconds from the kill within which every failed call of scenario 2 was sent. */
const DEAD_REPLICA_WINDOW_S = WINDOWS.deadReplica.seconds + LOADED_MACHINE_MARGIN_S;
/** Seconds from the kill within which every failed call of scenario 3 was sent. */
const CROWDED_NODE_WINDOW_S = WINDOWS.crowdedNode.seconds + LOADED_MACHINE_MARGIN_S;
/** The longest a replica may be seen not Ready while the network between the replicas is cut (polled each second: +1). */
const PARTITION_NOT_READY_S = WINDOWS.falseMark.seconds + 1 + LOADED_MACHINE_MARGIN_S;
/** How long the network between the replicas stays cut. */
const CUT_MS = 30_000;
/** Calls after a recovery that must all pass before the node comes back. */
const HOLD_MS = 15_000;

let overlay: string;

beforeAll(async () => {
  await secondNode('up');
  await prepareSpiderpool();
  overlay = await copyOverlay();
  await mustKubectl(['apply', '-k', overlay]);
  await waitAvailable();
  await webhookAnswers();
}, 400_000);

afterAll(async () => {
  await uncordon(FIRST_NODE).catch(() => undefined);
  const unregister = await runProcess(process.execPath, [
    CLI,
    'unregister',
    `--kubeconfig=${path.join(clusterDir(), 'kubeconfig')}`,
    '--name=spiderpool-iaas-webhook',
  ]);
  await mustKubectl(['delete', '-k', overlay, '--timeout=2m', '--ignore-not-found'], { timeoutMs: 150_000 });
  await secondNode('down');
  await mustKubectl(['delete', 'node', SECOND_NODE, '--ignore-not-found']);
  if (unregister.code !== 0) throw new Error(`unregister failed: ${unregister.stderr}`);
}, 300_000);

/**
 * Calls in flight: 10/s, each up to the webhooks' timeoutSeconds (5 s) hanging on a dead
 * replica, with room to spare, so that no call waits in the client behind a hung one.
 */
const MAX_CALLS_IN_FLIGHT = 128;

/** Runs `faults` under the load and prints the run and each fault's figures. */
async function measure(what: string, faults: Fault[], maxFaultMs?: number): Promise<{ run: FaultRunResult; figures: FailureWindow[] }> {
  const client = new ApiClient({ maxSockets: MAX_CALLS_IN_FLIGHT });
  let run: FaultRunResult;
  try {
    run = await runFaults(client, { ratePerSecond: 10, faults, ...(maxFaultMs ? { maxFaultMs } : {}) });
  } finally {
    client.close();
  }
  report(what, run);
  const figures = run.faults.map((f, i) => failureWindow(run.failedAtSeconds, f.startSeconds, run.faults[i + 1]?.startSeconds ?? Infinity));
  run.faults.forEach((f, i) => {
    const w = figures[i]!;
    console.log(
      `${what}, ${f.name}: ${w.failed} failed calls, longest stretch with a failure ${w.longestStretchSeconds} s, recovered ${w.recoverySeconds} s after it began`,
    );
  });
  return { run, figures };
}

/** Resolves once the webhook Service has two ready endpoints. */
const twoServing = () => until(async () => (await servingNodes()).length === 2, 'two serving replicas', { timeoutMs: 240_000, intervalMs: 1000 });

/**
 * The second node comes back (a reboot: its kubelet restarts what it still holds) and the
 * replicas end on distinct nodes again (a replica sharing a node moves: serve --rebalance).
 */
const returns: Fault = {
  name: `${SECOND_NODE} returns`,
  run: async () => {
    await secondNode('revive');
    await placedOn(BOTH_NODES, 240_000);
  },
};

describe('1. kubectl drain of the node holding a replica', () => {
  let figures: FailureWindow[];
  beforeAll(async () => {
    await placedOn(BOTH_NODES, 240_000);
    ({ figures } = await measure('drain run', [
      {
        name: `kubectl drain ${SECOND_NODE}`,
        run: async () => {
          await mustKubectl(['drain', SECOND_NODE, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=3m'], { timeoutMs: 200_000 });
          await uncordon(SECOND_NODE);
          await placedOn(BOTH_NODES, 240_000);
        },
      },
    ]));
  }, 600_000);

  it('had not one failed admission call', () => {
    expect(figures[0]!.failed).toBe(0);
  });
});

describe('4. the network between the replicas cut while both reach the API server', () => {
  let figures: FailureWindow[];
  let notReadySeconds = 0;
  beforeAll(async () => {
    await placedOn(BOTH_NODES, 240_000);
    ({ figures } = await measure('partition run', [
      {
        name: 'pod traffic between the nodes cut',
        run: async () => {
          notReadySeconds = await longestNotReadySeconds(
            (async () => {
              await secondNode('cut');
              try {
                await new Promise((resolve) => setTimeout(resolve, CUT_MS));
              } finally {
                await secondNode('heal');
              }
              await twoServing();
            })(),
          );
          console.log(`partition run: longest a replica was not Ready: ${notReadySeconds} s`);
        },
      },
    ]));
  }, 600_000);

  it('had not one failed admission call', () => {
    expect(figures[0]!.failed).toBe(0);
  });

  it(`marked neither replica not Ready for longer than ${PARTITION_NOT_READY_S} s`, () => {
    expect(notReadySeconds).toBeLessThanOrEqual(PARTITION_NOT_READY_S);
  });
});

describe('2. the node holding one replica dies', () => {
  let figures: FailureWindow[];
  beforeAll(async () => {
    await placedOn(BOTH_NODES, 240_000);
    ({ figures } = await measure('dead replica run', [
      {
        name: `${SECOND_NODE} dies`,
        run: async () => {
          await secondNode('kill');
          await until(async () => (await servingNodes()).join() === FIRST_NODE, `no serving replica on ${SECOND_NODE}`, {
            timeoutMs: 240_000,
            intervalMs: 1000,
          });
          await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
        },
      },
      returns,
    ]));
  }, 900_000);

  it(`failed calls only within ${DEAD_REPLICA_WINDOW_S} s of the kill`, () => {
    expect(figures[0]!.recoverySeconds).toBeLessThanOrEqual(DEAD_REPLICA_WINDOW_S);
  });

  it('no failed call while the node returned and after', () => {
    expect(figures[1]!.failed).toBe(0);
  });
});

describe('3. both replicas on one node, which dies', () => {
  let figures: FailureWindow[];
  beforeAll(async () => {
    await crowdOnto(SECOND_NODE);
    ({ figures } = await measure(
      'crowded node run',
      [
        {
          name: `${SECOND_NODE} dies with both replicas`,
          run: async () => {
            await secondNode('kill');
            await uncordon(FIRST_NODE);
            await until(async () => (await servingNodes()).includes(FIRST_NODE), `a serving replica on ${FIRST_NODE}`, {
              timeoutMs: 600_000,
              intervalMs: 1000,
            });
            await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
          },
        },
        returns,
      ],
      720_000,
    ));
  }, 1_800_000);

  it(`failed calls only within ${CROWDED_NODE_WINDOW_S} s of the kill`, () => {
    expect(figures[0]!.recoverySeconds).toBeLessThanOrEqual(CROWDED_NODE_WINDOW_S);
  });

  it('no failed call while the node returned and the replicas moved apart again', () => {
    expect(figures[1]!.failed).toBe(0);
  });
});
