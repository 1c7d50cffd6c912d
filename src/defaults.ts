/**
 * Names shared by the server, the CLI, the generated certificates and the manifests in
 * `deploy/`: `npm run generate` writes the webhook configuration from them, `test/deploy`
 * checks that the other manifests agree with them.
 */

/**
 * The webhooks of deploy/base/validatingwebhookconfiguration.yaml, one row each: the name the
 * API server shows in its messages, the URL path it calls, and the API groups and resources it
 * sends (scripts/generate/webhook-configuration.ts writes the manifest from these rows). The server serves each path;
 * a validator answers for the first webhook sending its kind. The IaaS pools' refusing webhook
 * and the traditional default pools' warn-only one share the SpiderIPPool path.
 */
export const WEBHOOKS = {
  spiderIPPool: {
    name: 'spiderippool.iaas-webhook.spidernet.io',
    path: '/validate-spiderippool',
    apiGroups: ['spiderpool.spidernet.io'],
    resources: ['spiderippools'],
  },
  configMap: { name: 'spiderpool-conf.iaas-webhook.spidernet.io', path: '/validate-configmap', apiGroups: [''], resources: ['configmaps'] },
  /** Candidate-pool warnings: Pods, workloads' Pod templates, Namespaces. */
  pod: { name: 'candidate-pools-pod.iaas-webhook.spidernet.io', path: '/validate-pod', apiGroups: [''], resources: ['pods'] },
  workload: {
    name: 'candidate-pools-workload.iaas-webhook.spidernet.io',
    path: '/validate-workload',
    apiGroups: ['apps', 'batch'],
    resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets', 'jobs', 'cronjobs'],
  },
  namespace: { name: 'candidate-pools-namespace.iaas-webhook.spidernet.io', path: '/validate-namespace', apiGroups: [''], resources: ['namespaces'] },
  defaultPools: {
    name: 'default-pools.iaas-webhook.spidernet.io',
    path: '/validate-spiderippool',
    apiGroups: ['spiderpool.spidernet.io'],
    resources: ['spiderippools'],
  },
} as const satisfies Record<string, { name: string; path: `/${string}`; apiGroups: readonly string[]; resources: readonly string[] }>;

/** The URL paths the server serves: each path of {@link WEBHOOKS}, once. */
export const WEBHOOK_SERVED_PATHS: readonly string[] = [...new Set(Object.values(WEBHOOKS).map((webhook) => webhook.path))];

/** Port the HTTPS server listens on when neither `--port` nor `PORT` is given. */
export const DEFAULT_PORT = 8443;

/** Service and namespace the manifests in `deploy/` install the webhook as. */
export const DEFAULT_SERVICE_NAME = 'spiderpool-iaas-webhook';
export const DEFAULT_NAMESPACE = 'spiderpool-iaas-webhook';

/** The Lease (in the pods' namespace) whose holder keeps the OpenReports reports: deploy/base/rbac.yaml names it. */
export const REPORTS_LEASE_NAME = 'spiderpool-iaas-webhook-reports';

/** Spiderpool's ConfigMap and its data key (brief: "Spiderpool ConfigMap"). */
export const DEFAULT_CONFIGMAP_NAME = 'spiderpool-conf';
export const CONF_YML_KEY = 'conf.yml';
/** Where `serve` watches that ConfigMap when `--configmap-namespace` is not given (Spiderpool's Helm default). */
export const DEFAULT_SPIDERPOOL_NAMESPACE = 'kube-system';

/** Directory (relative to the working directory) for certificates of a local `npm start`. */
export const DEFAULT_CERT_DIR = 'certs';

/**
 * Largest request body served, 7 MiB as controller-runtime (`maxRequestSize` in
 * pkg/webhook/admission/http.go). An UPDATE review carries `object`, up to the
 * kube-apiserver's 3 MiB write limit (`MaxRequestBodyBytes`, k8s.io/apiserver), and
 * `oldObject`, up to etcd's 1.5 MiB, plus the envelope: 3 MiB refused valid UPDATEs of large
 * pools (413, which `failurePolicy: Fail` turns into a refused write).
 */
export const MAX_BODY_BYTES = 7 * 1024 * 1024;

/**
 * `timeoutSeconds` of the refusing webhooks (`failurePolicy: Fail`; scripts/generate/webhook-configuration.ts
 * writes it): how long the API server waits for a review before it refuses the write.
 */
export const REFUSING_WEBHOOK_TIMEOUT_SECONDS = 5;

/**
 * How long a review waits for room in the body budget (src/server/body-budget.ts) before it is refused
 * with 429: below {@link REFUSING_WEBHOOK_TIMEOUT_SECONDS}, so waiting, which lets the
 * write through, is tried as long as the API server would wait anyway.
 */
export const BODY_WAIT_MS = 4_000;

/**
 * How long after its request came a review's body may arrive slowly while another body
 * waits for room, in milliseconds (src/server/body-budget.ts judges the rate): the API
 * server writes a review of even `MAX_BODY_BYTES` in well under this on any cluster
 * network, and preempting by then leaves a waiting review most of {@link BODY_WAIT_MS}.
 */
export const BODY_STALL_MS = 1_000;

/**
 * How long a new replica's readiness waits for the first list of SpiderIPPools, in
 * milliseconds (`serve --pool-cache-sync-wait`): long enough for a list of 50 000 pools,
 * short enough that an API server that cannot be listed does not hold a rollout for long.
 */
export const DEFAULT_SYNC_WAIT_MS = 60_000;
