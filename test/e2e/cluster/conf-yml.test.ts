/**
 * The whole conf.yml through a real kube-apiserver and kubectl: every conf.yml that would stop
 * Spiderpool's agent or controller is refused at `kubectl apply`, whether or not the
 * IaaS provider is enabled, and what Spiderpool would silently ignore is applied with a
 * warning. The same text through `validate-config` gives the same answer.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, waitUntilWebhookCalled, type Cluster } from './harness.js';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster();
  await waitUntilWebhookCalled(cluster);
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
});

const spiderpoolConf = (confYml: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
  data: { 'conf.yml': confYml },
});

/** The issue's example: three values that each stop Spiderpool at its next start. */
const ISSUE_EXAMPLE = [
  'enableIPv6: "true"',
  'podResourceInject:',
  '  namespacesExclude: kube-system',
  'agent:',
  '  networkResourcePlugin:',
  '    kubeletRootDir: var/lib/kubelet',
  '',
].join('\n');

describe('conf.yml keys beyond the provider block', () => {
  it('refuses the issue example with one cause per value, naming field, value, Go message, component and fix', async () => {
    const result = await cluster.apply(spiderpoolConf(ISSUE_EXAMPLE));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The ConfigMap "spiderpool-conf" is invalid: ');
    expect(result.stderr).toContain(
      'data[conf.yml].enableIPv6: Invalid value: "true": line 1, column 13: cannot unmarshal !!str `true` into bool, so Spiderpool\'s agent (gopkg.in/yaml.v3) and controller (gopkg.in/yaml.v2) refuse to start; write true without quotes',
    );
    expect(result.stderr).toContain(
      'data[conf.yml].podResourceInject.namespacesExclude: Invalid value: "kube-system": line 3, column 22: cannot unmarshal !!str `kube-sy...` into []string',
    );
    expect(result.stderr).toContain('write a list: [kube-system]');
    // The decode errors stop both binaries before the start-time checks run; alone, the
    // relative kubeletRootDir is refused by those checks.
    const root = await cluster.apply(spiderpoolConf('agent:\n  networkResourcePlugin:\n    kubeletRootDir: var/lib/kubelet\n'));
    expect(root.code).toBe(1);
    expect(root.stderr).toContain(
      'data[conf.yml].agent.networkResourcePlugin.kubeletRootDir: Invalid value: "var/lib/kubelet": must be an absolute path, so Spiderpool\'s agent and controller refuse to start; write it from the root, such as /var/lib/kubelet',
    );
    const stored = await cluster.get('configmap', 'spiderpool-conf', 'kube-system');
    expect(stored?.['data']?.['conf.yml'] ?? '').not.toContain('var/lib/kubelet');
  });

  it.each([
    [
      'a quoted "yes" (only yaml.v3, the agent, reads it)',
      'enableIPv4: "yes"\n',
      "Spiderpool's controller (gopkg.in/yaml.v2) refuses to start (its agent reads it)",
    ],
    ['a key written twice (yaml.v3 refuses it)', 'enableIPv4: true\nenableIPv4: false\n', 'mapping key "enableIPv4" already defined at line 1'],
    ['a number beyond int64', 'clusterSubnetAutoPoolDefaultRedundantIPNumber: 9223372036854775808\n', 'cannot unmarshal !!int `9223372...` into int'],
    [
      'a node selector operator Kubernetes does not know',
      'agent:\n  networkResourcePlugin:\n    devicePluginAffinity:\n      nodeSelector:\n        matchexpressions: [{key: a, operator: in, values: [b]}]\n',
      'devicePluginAffinity.nodeSelector: Invalid value: is not a valid label selector: matchexpressions[0].operator: "in" is not a valid label selector operator',
    ],
    [
      'a bad interface pattern',
      'agent:\n  networkResourcePlugin:\n    resourceAdvertisement:\n      masterNIC:\n        rules:\n        - includeInterfaces: ["eth["]\n',
      'masterNIC.rules[0].includeInterfaces[0]: Invalid value: "eth[": is not a valid interface pattern',
    ],
    [
      'a provider Service without a namespace (PR #5778)',
      'iaasNetworkProvider:\n  service: {name: provider, port: 80}\n',
      'data[conf.yml].iaasNetworkProvider.service.namespace: Required value: ',
    ],
  ])('refuses %s', async (_what, confYml, message) => {
    const result = await cluster.apply(spiderpoolConf(confYml));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
  });

  it.each([
    [
      'httpRequestTimeOut (wrong case)',
      'iaasNetworkProvider:\n  httpRequestTimeOut: "500s"\n',
      'Warning: data[conf.yml].iaasNetworkProvider.httpRequestTimeOut: is not a key Spiderpool reads (keys are case-sensitive): it is ignored; did you mean httpRequestTimeout?',
    ],
    [
      'a selector written matchLabels',
      'agent:\n  networkResourcePlugin:\n    devicePluginAffinity:\n      nodeSelector:\n        matchLabels: {kubernetes.io/os: linux}\n',
      'Warning: data[conf.yml].agent.networkResourcePlugin.devicePluginAffinity.nodeSelector.matchLabels: is dropped: Spiderpool reads label selector fields in lower case (matchlabels), so this selector selects every node; write matchlabels',
    ],
    [
      'a second document',
      'enableIPv4: true\n---\nenableIPv6: true\n',
      'Warning: data[conf.yml]: holds more than one YAML document (---): Spiderpool reads only the first',
    ],
    ['an empty conf.yml', '', 'Warning: data[conf.yml]: is empty: Spiderpool starts with every setting at its default'],
  ])('applies %s with a warning', async (_what, confYml, warning) => {
    const result = await cluster.apply(spiderpoolConf(confYml));
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(warning);
    const stored = await cluster.get('configmap', 'spiderpool-conf', 'kube-system');
    expect(stored?.['data']?.['conf.yml'] ?? '').toBe(confYml);
  });

  it('validate-config gives the same refusal for the same conf.yml', async () => {
    const file = path.join(cluster.workDir, 'issue-10-conf.yml');
    await writeFile(file, ISSUE_EXAMPLE);
    const viaCli = await cluster.cli(['validate-config', file]);
    const viaKubectl = await cluster.apply(spiderpoolConf(ISSUE_EXAMPLE));
    expect(viaCli.code).toBe(1);
    expect(viaKubectl.code).toBe(1);
    // kubectl lists the causes one per line ("* <field>: <message>"); validate-config prints
    // the status message that holds the same causes.
    const causes = viaKubectl.stderr
      .split('\n')
      .filter((line) => line.startsWith('* '))
      .map((line) => line.slice(2));
    expect(causes).toHaveLength(2);
    for (const cause of causes) expect(viaCli.stderr).toContain(cause);
  });
});
