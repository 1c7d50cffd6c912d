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

  it('throws for an unreadable --kubeconfig instead of falling through, naming the flag', () => {
    const missing = join(root, 'missing');
    expect(() => loadKubeConfig(missing, environment({}, home))).toThrow(
      `cannot read the kubeconfig given by --kubeconfig (${missing}): ENOENT: no such file or directory, open '${missing}'`,
    );
  });

  it.each([
    ['empty', ''],
    ['null', '~\n'],
  ])('says a %s --kubeconfig holds no kubeconfig, not a JavaScript error (found by hostile testing)', (_what, text) => {
    const file = join(root, `kubeconfig-${text.length}`);
    writeFileSync(file, text);
    expect(() => loadKubeConfig(file, environment({}, home))).toThrow(
      `cannot read the kubeconfig given by --kubeconfig (${file}): it holds no kubeconfig (the file is empty or not a YAML mapping)`,
    );
  });

  it('says a --kubeconfig field of another type is one, not that the file holds no kubeconfig (review2)', () => {
    const file = join(root, 'kubeconfig-server-number');
    writeFileSync(file, 'clusters: [{name: a, cluster: {server: 5}}]\n');
    expect(() => loadKubeConfig(file, environment({}, home))).toThrow(
      new RegExp(
        `^cannot read the kubeconfig given by --kubeconfig \\(${file}\\): a field does not have the type a kubeconfig gives it \\(.+\\); compare the file with the output of kubectl config view$`,
      ),
    );
  });

  it('names $KUBECONFIG, and which of the files it lists, when one cannot be read', () => {
    const missing = join(root, 'missing');
    expect(() => loadKubeConfig(undefined, environment({ KUBECONFIG: missing }, home))).toThrow(
      /^cannot read the kubeconfig given by \$KUBECONFIG \(.*missing\): ENOENT/,
    );
    const list = `${flagFile}:${missing}`;
    expect(() => loadKubeConfig(undefined, environment({ KUBECONFIG: list }, home))).toThrow(
      `cannot read the kubeconfig ${missing}, one of those $KUBECONFIG lists (${list}): ENOENT: no such file or directory, open '${missing}'`,
    );
  });

  it("merges the files $KUBECONFIG lists, the first one's current-context winning (as kubectl does)", () => {
    const other = writeKubeconfig(join(root, 'other'), 'https://other.example:6443');
    const loaded = loadKubeConfig(undefined, environment({ KUBECONFIG: `${flagFile}:${other}` }, emptyHome));
    expect(loaded?.source).toBe('KUBECONFIG');
    expect(loaded?.config.getCurrentCluster()?.server).toBe('https://flag.example:6443');
    const noContext = join(root, 'no-context-first');
    mkdirSync(noContext, { recursive: true });
    writeFileSync(join(noContext, 'config'), 'apiVersion: v1\nkind: Config\n');
    const second = loadKubeConfig(undefined, environment({ KUBECONFIG: `${join(noContext, 'config')}:${other}` }, emptyHome));
    expect(second?.config.getCurrentCluster()?.server).toBe('https://other.example:6443');
  });

  it('names ~/.kube/config when it is not YAML, with only the first line of the parser error (no excerpt of the file)', () => {
    const brokenHome = join(root, 'broken-home');
    mkdirSync(join(brokenHome, '.kube'), { recursive: true });
    writeFileSync(join(brokenHome, '.kube', 'config'), 'token: secret-value\nusers: [');
    let message = '';
    try {
      loadKubeConfig(undefined, environment({}, brokenHome));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^cannot read the kubeconfig ~\/\.kube\/config \(.*broken-home\/\.kube\/config\): \S/);
    expect(message).not.toContain('\n');
    expect(message).not.toContain('secret-value');
  });

  it('refuses a kubeconfig without a current context, naming its source', () => {
    const dir = join(root, 'no-context');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: []\n');
    expect(() => loadKubeConfig(file, environment({}, home))).toThrow(
      `cannot use the kubeconfig given by --kubeconfig (${file}): it sets no current-context; set current-context (kubectl config use-context) or choose another file`,
    );
    writeFileSync(file, kubeconfigYaml('https://x.example').replace('current-context: x', 'current-context: gone'));
    expect(() => loadKubeConfig(file, environment({}, home))).toThrow(/: its current-context "gone" names no cluster it defines;/);
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

  it("kubectl's order for the one-shot commands: ~/.kube/config before the in-cluster service account", () => {
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    const both = environment({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, home, [token]);
    expect(loadKubeConfig(undefined, both, { order: 'kubectl' })?.source).toBe('home');
    expect(loadKubeConfig(undefined, both)?.source).toBe('in-cluster');
  });

  it("--context picks a context of the merged $KUBECONFIG files; an unknown one is kubectl's error naming the source", () => {
    const other = join(root, 'other-context');
    mkdirSync(other, { recursive: true });
    writeFileSync(
      join(other, 'config'),
      kubeconfigYaml('https://other.example:6443')
        .replace(/\bname: c\b/, 'name: c2')
        .replace('cluster: c,', 'cluster: c2,')
        .replace(/name: x\b/, 'name: staging')
        .replace('current-context: x', 'current-context: staging'),
    );
    const env = environment({ KUBECONFIG: `${flagFile}:${join(other, 'config')}` }, emptyHome);
    const loaded = loadKubeConfig(undefined, env, { context: 'staging' });
    expect(loaded?.config.getCurrentContext()).toBe('staging');
    expect(loaded?.config.getCurrentCluster()?.server).toBe('https://other.example:6443');
    expect(() => loadKubeConfig(undefined, env, { context: 'prod' })).toThrow(
      /^context was not found for specified context: prod \(in the kubeconfig given by \$KUBECONFIG \(.*\); its contexts: "x", "staging"; see kubectl config get-contexts\)$/,
    );
  });
});
