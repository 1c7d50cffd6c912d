/**
 * The stated node-failure windows against what they are read from: deploy/base/deployment.yaml
 * as committed, variants of it (a chart's added tolerations, another readiness probe), bad
 * manifests, and the test cluster's flags (its windows assume Kubernetes' defaults). That the
 * peer part holds for peers.ts itself: test/cluster/peers.test.ts.
 */
import { parse, stringify } from 'yaml';
import { DEPLOYMENT_FILE, nodeFailureWindows, peerMarkParts, type WindowPart } from '../../src/cluster/node-failure-windows.js';
import { PEER_ROUND_INTERVAL_MS } from '../../src/cluster/replica-defaults.js';
import { readRepoFile } from '../../scripts/generate/lib/files.js';

const DEPLOYED = readRepoFile(DEPLOYMENT_FILE)!;
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** The committed Deployment with `change` applied to its pod spec, as YAML. */
function variant(change: (spec: Record<string, any>) => void): string {
  const deployment = parse(DEPLOYED);
  change(deployment.spec.template.spec);
  return stringify(deployment);
}

const part = (manifest: string, what: RegExp) => nodeFailureWindows(manifest, DEPLOYMENT_FILE).crowdedNode.parts.find((p) => what.test(p.what))!.seconds;
const sumOf = (parts: readonly WindowPart[]) => parts.reduce((total, p) => total + p.seconds, 0);
const crowded = (manifest: string) => nodeFailureWindows(manifest, DEPLOYMENT_FILE).crowdedNode.seconds;

describe('nodeFailureWindows of the committed Deployment', () => {
  const windows = nodeFailureWindows(DEPLOYED, DEPLOYMENT_FILE);
  const spec = parse(DEPLOYED).spec.template.spec;

  it("reads the crowded node's eviction and readiness from the manifest", () => {
    const toleration = spec.tolerations.find((t: { key?: string }) => t.key === UNREACHABLE);
    expect(part(DEPLOYED, /toleration/)).toBe(toleration.tolerationSeconds);
    const probe = spec.containers[0].readinessProbe;
    expect(part(DEPLOYED, /readiness/)).toBe((probe.initialDelaySeconds ?? 0) + probe.periodSeconds);
  });

  it('states each window as the sum of its parts; the dead replica is the peer mark and one kube-proxy sync', () => {
    for (const stated of Object.values(windows)) expect(stated.seconds).toBeCloseTo(sumOf(stated.parts), 9);
    expect(windows.deadReplica.parts.slice(0, -1)).toEqual(peerMarkParts());
    expect(windows.falseMark.seconds).toBe(PEER_ROUND_INTERVAL_MS / 1000);
  });
});

describe('nodeFailureWindows follows the manifest', () => {
  const base = crowded(DEPLOYED);
  const baseToleration = part(DEPLOYED, /toleration/);
  const add = (toleration: object) => variant((s) => s.tolerations.push(toleration));

  it('a shorter matching toleration shortens the window; a longer one, or one of another taint, changes nothing', () => {
    expect(crowded(add({ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 3 }))).toBe(base - baseToleration + 3);
    expect(crowded(add({ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: baseToleration + 100 }))).toBe(base);
    expect(crowded(add({ key: 'example.com/other', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 }))).toBe(base);
    expect(crowded(add({ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }))).toBe(base);
  });

  it("a longer toleration or another readiness probe moves it by as much (a probe's absent fields: Kubernetes' defaults)", () => {
    const longer = variant((s) => {
      for (const t of s.tolerations) t.tolerationSeconds += 20;
    });
    expect(crowded(longer)).toBe(base + 20);
    const probe = (readinessProbe: object) =>
      variant((s) => {
        s.containers[0].readinessProbe = readinessProbe;
      });
    expect(part(probe({ initialDelaySeconds: 7, periodSeconds: 3 }), /readiness/)).toBe(10);
    expect(part(probe({}), /readiness/)).toBe(10);
    expect(
      part(
        variant((s) => delete s.containers[0].readinessProbe),
        /readiness/,
      ),
    ).toBe(0);
  });
});

describe('nodeFailureWindows refuses what it cannot read, in one line naming the file', () => {
  it.each([
    ['no Deployment', 'apiVersion: v1\nkind: Service\nmetadata: {name: x}\n', /^deploy\/base\/deployment\.yaml: no Deployment$/],
    ['not YAML', 'kind: [Deployment\n', /^deploy\/base\/deployment\.yaml: not valid YAML or JSON: /],
    [
      'no timed toleration of the taint',
      variant((s) => {
        s.tolerations = [{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }];
      }),
      /^deploy\/base\/deployment\.yaml: no toleration of node\.kubernetes\.io\/unreachable with tolerationSeconds: the window needs one$/,
    ],
    [
      'a probe period that is no number',
      variant((s) => {
        s.containers[0].readinessProbe.periodSeconds = '5';
      }),
      /^deploy\/base\/deployment\.yaml: .*periodSeconds/,
    ],
  ])('%s', (_, manifest, message) => {
    let error: Error | undefined;
    try {
      nodeFailureWindows(manifest, DEPLOYMENT_FILE);
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain('\n');
  });
});

it("the test cluster keeps the controller-manager's and kube-proxy's defaults the windows assume", () => {
  for (const file of ['test/kube/cluster.sh', 'test/kube/node-lib.sh', 'test/kube/second-node.sh']) {
    expect(readRepoFile(file)).not.toMatch(/node-monitor-(grace-)?period|minSyncPeriod/);
  }
});
