/**
 * The owner of what the webhook writes itself (its TLS Secret, its webhook configuration):
 * a ClusterRole of the install. Deleting the install deletes the ClusterRole, and the
 * garbage collector then deletes every object naming it in `metadata.ownerReferences`
 * (https://kubernetes.io/docs/concepts/architecture/garbage-collection/#owners-dependents;
 * a cluster-scoped owner may own both cluster-scoped and namespaced objects).
 */
import { ApiException, RbacAuthorizationV1Api, type KubeConfig, type V1OwnerReference } from '@kubernetes/client-node';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';

/**
 * The owner reference to ClusterRole `name`, or `'absent'` when it does not exist (the
 * install is being deleted: nothing should be written then).
 *
 * @param timeoutMs the call's deadline, in milliseconds (deadline.ts's default when absent).
 * @param flag the flag that named the ClusterRole, for the error messages.
 * @throws Error with one line for any other failure (no answer within the deadline; a 403
 *   names the RBAC it needs), never client-node's whole HTTP exchange.
 */
export async function clusterRoleOwner(
  kubeConfig: KubeConfig,
  name: string,
  timeoutMs?: number,
  flag = '--owner-cluster-role',
): Promise<V1OwnerReference | 'absent'> {
  try {
    const api = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    const role = await withDeadline((options) => api.readClusterRole({ name }, options), timeoutMs);
    return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name, uid: role.metadata?.uid ?? '' };
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return 'absent';
    const { message } = summarizeApiError(err);
    if (!(err instanceof ApiException)) throw new Error(`cannot reach the API server to read ClusterRole ${name} (${flag}): ${message}`);
    const hint = err.code === 403 ? ' (the ServiceAccount needs get on this ClusterRole: deploy/base/rbac.yaml)' : '';
    throw new Error(`the API server refused to read ClusterRole ${name} (${flag}): ${message}${hint}`);
  }
}
