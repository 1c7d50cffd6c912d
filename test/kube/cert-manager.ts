/**
 * A real cert-manager on the one-node cluster: its controller and cainjector built from
 * cert-manager's Go module (test/kube/cert-manager/build.sh; the images `cluster.sh cert-manager-images` imports)
 * and its CRDs from the same module's deploy/crds in the Go module cache, not from the
 * internet. No cert-manager webhook: the CRDs are v1 only (no conversion webhook needed);
 * the objects it would default and validate are the chart's, valid as written.
 *
 * The two Deployments run in namespace cert-manager with cluster-admin (a throwaway
 * cluster; cert-manager's own chart grants narrower roles). The controller runs with
 * `--enable-certificate-owner-ref`, so deleting a Certificate deletes its Secret:
 * without it cert-manager keeps the Secrets of deleted Certificates (its documented
 * default), and `helm uninstall` would leave them.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { runProcess } from '../e2e/cluster/processes.js';
import { ROOT } from '../e2e/cluster/webhook.js';
import { clusterDir, mustKubectl } from './kube.js';

/** The module and the image tags; kept equal to test/kube/cert-manager/build.sh and cluster.sh. */
export const CERT_MANAGER_MODULE = 'github.com/cert-manager/cert-manager@v1.21.2';
const IMAGE_PREFIX = 'localhost/spiderpool-iaas-e2e/cert-manager';
const VERSION = CERT_MANAGER_MODULE.slice(CERT_MANAGER_MODULE.indexOf('@') + 1);
export const CERT_MANAGER_NS = 'cert-manager';
const COMPONENTS = ['controller', 'cainjector'] as const;

/** The module's deploy/crds directory in the Go module cache (`go mod download` fetches it when absent). */
export async function certManagerCrdDir(): Promise<string> {
  const r = await runProcess('go', ['mod', 'download', '-json', CERT_MANAGER_MODULE], { timeoutMs: 300_000 });
  const dir = r.code === 0 ? (JSON.parse(r.stdout).Dir as string | undefined) : undefined;
  if (dir === undefined) throw new Error(`go mod download ${CERT_MANAGER_MODULE} failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  return path.join(dir, 'deploy/crds');
}

/** The namespace, the ServiceAccount and its binding, and one Deployment per component. */
export function certManagerObjects(): Record<string, unknown>[] {
  const labels = (component: string) => ({ 'app.kubernetes.io/name': 'cert-manager', 'app.kubernetes.io/component': component });
  const deployment = (component: (typeof COMPONENTS)[number]) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `cert-manager-${component}`, namespace: CERT_MANAGER_NS, labels: labels(component) },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels(component) },
      template: {
        metadata: { labels: labels(component) },
        spec: {
          serviceAccountName: 'cert-manager',
          enableServiceLinks: false,
          securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: component,
              image: `${IMAGE_PREFIX}-${component}:${VERSION}`,
              imagePullPolicy: 'Never',
              args: component === 'controller' ? ['--v=2', `--cluster-resource-namespace=${CERT_MANAGER_NS}`, '--enable-certificate-owner-ref'] : ['--v=2'],
              resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      },
    },
  });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CERT_MANAGER_NS } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cert-manager', namespace: CERT_MANAGER_NS } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'cert-manager-test' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'cert-manager', namespace: CERT_MANAGER_NS }],
    },
    ...COMPONENTS.map(deployment),
  ];
}

/**
 * Imports both images into the node (cluster.sh cert-manager-images), installs the CRDs and
 * both components; resolves once the CRDs are Established and the Deployments Available.
 *
 * @throws Error when an image cannot be imported or a step fails.
 */
export async function installCertManager(): Promise<void> {
  const images = await runProcess('bash', [path.join(ROOT, 'test/kube/cluster.sh'), 'cert-manager-images', clusterDir()], { timeoutMs: 120_000 });
  if (images.code !== 0) throw new Error(`cluster.sh cert-manager-images failed: ${images.stderr}`);
  await mustKubectl(['apply', '--server-side', '-f', await certManagerCrdDir()]);
  await mustKubectl(['wait', '--for=condition=Established', '-f', await certManagerCrdDir(), '--timeout=60s']);
  await mustKubectl(['apply', '-f', '-'], {
    stdin: certManagerObjects()
      .map((o) => stringify(o))
      .join('---\n'),
  });
  for (const component of COMPONENTS) {
    await mustKubectl(['-n', CERT_MANAGER_NS, 'rollout', 'status', `deployment/cert-manager-${component}`, '--timeout=3m'], { timeoutMs: 200_000 });
  }
}

/** Removes what {@link installCertManager} made, the CRDs (and so every cert-manager object) included. */
export async function removeCertManager(): Promise<void> {
  await mustKubectl(['delete', 'clusterrolebinding/cert-manager-test', `namespace/${CERT_MANAGER_NS}`, '--ignore-not-found', '--timeout=2m'], {
    timeoutMs: 150_000,
  });
  await mustKubectl(['delete', '--ignore-not-found', '--timeout=2m', '-f', await certManagerCrdDir()], { timeoutMs: 150_000 });
}
