import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig, type KubeConfigEnvironment } from '../../src/cluster/kubeconfig.js';

const kubeconfigYaml = (server: string): string => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

function writeKubeconfig(dir: string, server: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'config');
  writeFileSync(file, kubeconfigYaml(server));
  return file;
}

/** `exists` sees the real files plus the paths listed (the in-cluster token cannot be written here). */
function environment(env: NodeJS.ProcessEnv, home: string, alsoExisting: string[] = []): KubeConfigEnvironment {
  return { env, home, exists: (path) => alsoExisting.includes(path) || existsSync(path) };
}

describe('loadKubeConfig (controller-runtime order: flag, $KUBECONFIG, in-cluster, ~/.kube/config)', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  const emptyHome = join(root, 'empty-home');
  const home = join(root, 'home');
  writeKubeconfig(join(home, '.kube'), 'https://home.example:6443');
  const flagFile = writeKubeconfig(join(root, 'flag'), 'https://flag.example:6443');

  it('uses --kubeconfig before anything else', () => {
    const loaded = loadKubeConfig(flagFile, environment({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, home));
    expect(loaded?.source).toBe('flag');
    expect(loaded?.config.getCurrentCluster()?.server).toBe('https://flag.example:6443');
  });

  it('throws for an unreadable --kubeconfig instead of falling through', () => {
    expect(() => loadKubeConfig(join(root, 'missing'), environment({}, home))).toThrow();
  });

  it('reads ~/.kube/config when nothing else is set', () => {
    const loaded = loadKubeConfig(undefined, environment({}, home));
    expect(loaded).toMatchObject({ source: 'home', from: join(home, '.kube', 'config') });
    expect(loaded?.config.getCurrentCluster()?.server).toBe('https://home.example:6443');
  });

  it('prefers the in-cluster service account to ~/.kube/config only when its token is mounted', () => {
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    expect(loadKubeConfig(undefined, environment({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, home))?.source).toBe('home');
    const inCluster = environment({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, emptyHome, [token]);
    expect(loadKubeConfig(undefined, inCluster)?.source).toBe('in-cluster');
  });

  it('returns undefined when there is no cluster to connect to', () => {
    expect(loadKubeConfig(undefined, environment({}, emptyHome))).toBeUndefined();
  });
});
