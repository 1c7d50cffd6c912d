/**
 * Sends the ValidatingWebhookConfiguration to the API server with server-side apply.
 *
 * Server-side apply is Kubernetes' own create-or-update: one PATCH creates the object when
 * it is absent, sets the fields this field manager sends, leaves fields other managers own
 * (labels added by hand, webhooks added by an overlay) alone, and is a no-op when nothing
 * changed (the resourceVersion stays). `webhooks` is a map list keyed by `name`, so a
 * webhook is merged by its name, never by its position.
 * (https://kubernetes.io/docs/reference/using-api/server-side-apply/)
 */
import { AdmissionregistrationV1Api, ApiException, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { connectionName, kubectlErrorLine, summarizeApiError } from '../cluster/api-error.js';
import { withDeadline } from '../cluster/deadline.js';

/** The resource `register` and `unregister` write, as errors name it. */
export const WEBHOOK_CONFIGURATIONS = 'validatingwebhookconfigurations.admissionregistration.k8s.io/v1';
import type { WebhookConfiguration } from './webhook-configuration.js';

/** `metadata.managedFields[].manager` of what `register` writes. */
export const FIELD_MANAGER = 'spiderpool-iaas-webhook';

/** What the API server stored. */
export interface AppliedWebhookConfiguration {
  name: string;
  resourceVersion: string | undefined;
  /** Whether the stored object changed (a new object, or a new resourceVersion). */
  changed: boolean;
}

/** One line for a refused request: the API server's Status message when it sent one. */
function refusal(server: string, e: ApiException<unknown>): string {
  const { message } = summarizeApiError(e);
  const why = e.code === 401 && message === 'Unauthorized' ? 'Unauthorized (check the kubeconfig credentials)' : message;
  return `the API server at ${server} refused the ValidatingWebhookConfiguration: ${why}`;
}

/**
 * Creates or updates `configuration` (server-side apply, field manager
 * {@link FIELD_MANAGER}, `force: true` so this command wins conflicts over the fields it
 * sends: it is the registration's owner).
 *
 * @param kubeConfig the cluster connection (from `loadKubeConfig`).
 * @param timeoutMs each call's deadline (a read, then the apply), in milliseconds
 *   (src/cluster/deadline.ts's default when absent).
 * @throws Error with one line (no stack, no HTTP dump) when the API server cannot be
 *   reached, does not answer in time, or refuses the request (authentication,
 *   authorization, validation).
 */
export async function applyWebhookConfiguration(
  kubeConfig: KubeConfig,
  configuration: WebhookConfiguration,
  timeoutMs?: number,
): Promise<AppliedWebhookConfiguration> {
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server in the kubeconfig)';
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const name = configuration.metadata.name;
  try {
    const before = await currentResourceVersion(api, name, timeoutMs);
    const applied = await withDeadline(
      (options) =>
        api.patchValidatingWebhookConfiguration(
          { name, body: configuration, fieldManager: FIELD_MANAGER, force: true },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply, options),
        ),
      timeoutMs,
    );
    const resourceVersion = applied.metadata?.resourceVersion;
    return { name, resourceVersion, changed: before !== resourceVersion };
  } catch (e) {
    if (e instanceof ApiException) throw new Error(refusal(server, e));
    throw new Error(`${kubectlErrorLine(e, server, WEBHOOK_CONFIGURATIONS, '')} (${connectionName(kubeConfig)})`);
  }
}

/** The stored object's resourceVersion, or `undefined` when there is none yet. */
async function currentResourceVersion(api: AdmissionregistrationV1Api, name: string, timeoutMs: number | undefined): Promise<string | undefined> {
  try {
    return (await withDeadline((options) => api.readValidatingWebhookConfiguration({ name }, options), timeoutMs)).metadata?.resourceVersion;
  } catch (e) {
    if (e instanceof ApiException && e.code === 404) return undefined;
    throw e;
  }
}
