/**
 * `unregister`: deletes the ValidatingWebhookConfiguration, so no write waits for a webhook
 * that is about to go. Helm's pre-delete hook runs it before the Deployment is removed;
 * kustomize users run it before `kubectl delete -k`.
 */
import { AdmissionregistrationV1Api, ApiException, type KubeConfig } from '@kubernetes/client-node';
import { connectionName, kubectlErrorLine, summarizeApiError } from '../cluster/api-error.js';
import { withDeadline } from '../cluster/deadline.js';
import { WEBHOOK_CONFIGURATIONS } from './apply.js';

/** `deleted`, or `absent` when there was nothing to delete (running it twice is fine). */
export type Unregistration = 'deleted' | 'absent';

/**
 * Deletes the ValidatingWebhookConfiguration `name`.
 *
 * @throws Error with one line when the API server cannot be reached, does not answer
 *   within src/cluster/deadline.ts's default deadline, or refuses (a 403 names the permission needed).
 */
export async function unregisterWebhook(kubeConfig: KubeConfig, name: string): Promise<Unregistration> {
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server in the kubeconfig)';
  try {
    const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    await withDeadline((options) => api.deleteValidatingWebhookConfiguration({ name }, options));
    return 'deleted';
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return 'absent';
    const { message } = summarizeApiError(err);
    if (!(err instanceof ApiException)) throw new Error(`${kubectlErrorLine(err, server, WEBHOOK_CONFIGURATIONS, '')} (${connectionName(kubeConfig)})`);
    const hint = err.code === 403 ? ` (needs delete on validatingwebhookconfigurations/${name})` : '';
    throw new Error(`the API server at ${server} refused to delete ValidatingWebhookConfiguration ${name}: ${message}${hint}`);
  }
}
