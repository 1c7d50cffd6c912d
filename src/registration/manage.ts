/**
 * `serve --manage-webhook-configuration`: the ValidatingWebhookConfiguration written by the
 * webhook itself, once it answers, so no `failurePolicy: Fail` webhook exists before a pod
 * can answer it (an install applying the configuration with the Deployment refuses every
 * guarded write until the first pod is Ready), and its caBundle kept equal to the CA bundle
 * the server uses, after a renewal and after anyone else changed it. With `caOverlapMs` it
 * is that bundle plus, for a bounded time, the CAs other replicas may still serve during a
 * change, and a replica left behind writes nothing (ca-bundle.ts) and is not Ready: the API
 * server could not call it, and `failurePolicy: Fail` would refuse every guarded write sent
 * to it. Only a configuration read successfully is judged: while reads fail (an API-server
 * hiccup) the last judgement stands, so a hiccup never takes a replica out.
 *
 * Once written, a configuration that disappears is not written again by the same process:
 * an uninstall deletes it first (Helm's pre-delete hook, `unregister`) while the pods still
 * run, and writing it back would leave a `failurePolicy: Fail` webhook with no pod behind it.
 */
import https from 'node:https';
import { AdmissionregistrationV1Api, ApiException, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { caBundleBase64 } from '../certs/files.js';
import { summarizeApiError } from '../cluster/api-error.js';
import { withDeadline } from '../cluster/deadline.js';
import { clusterRoleOwner } from '../cluster/owner.js';
import { applyWebhookConfiguration } from './apply.js';
import { NO_CA_MEMORY, overlappedBundle, stillBehind, type Behind, type CaMemory } from './ca-bundle.js';
import { webhookConfigurationFor, type WebhookConfiguration, type WebhookManifest, type WebhookTarget } from './webhook-configuration.js';

/** How long the server's own `/readyz` may take to answer the check before writing. */
const PROBE_TIMEOUT_MS = 3_000;
/**
 * After how many rounds without it in the stored caBundle a CA the server does not serve is
 * forgotten (ca-bundle.ts): two replicas that disagree write every round, so a CA one of them
 * writes back is never absent that long.
 */
const FORGET_AFTER_ROUNDS = 6;

/** Where the server listens and the name the API server dials. */
export interface ServingEndpoint {
  host: string;
  port: number;
  /** `<service>.<namespace>.svc`, the name kube-apiserver checks the certificate for. */
  serverName: string;
}

/**
 * Why `caPem` would not let the API server call the server at `endpoint`, or `undefined`
 * when it would: `/readyz` is asked over TLS trusting only `caPem` and checking the
 * certificate names `serverName`, as kube-apiserver does, and must answer 200 (every
 * readiness check passes, as for the kubelet's probe).
 */
export function servingProblem(endpoint: ServingEndpoint, caPem: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = https.get(
      { host: endpoint.host, port: endpoint.port, path: '/readyz', ca: caPem, servername: endpoint.serverName, timeout: PROBE_TIMEOUT_MS, agent: false },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? undefined : `/readyz answers ${res.statusCode}`);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
    req.on('error', (err) => resolve(`its own HTTPS endpoint failed with the CA bundle: ${err.message}`));
  });
}

/**
 * Why the API server would find no endpoint of `service` to call, or `undefined` when one
 * of its EndpointSlices (label `kubernetes.io/service-name`) lists a ready address. The API
 * server sends a webhook's calls to the Service's ready endpoints; a pod answers its own
 * `/readyz` a moment before the EndpointSlice controller lists it, and a configuration
 * written in that moment refuses guarded writes ("no endpoints available for service",
 * failurePolicy Fail) until it does. `timeoutMs`: the list's deadline (src/cluster/deadline.ts's default when absent).
 */
export async function serviceEndpointProblem(
  kubeConfig: KubeConfig,
  service: { name: string; namespace: string },
  timeoutMs?: number,
): Promise<string | undefined> {
  const where = `Service ${service.namespace}/${service.name}`;
  try {
    const api = kubeConfig.makeApiClient(DiscoveryV1Api);
    const labelSelector = `kubernetes.io/service-name=${service.name}`;
    const slices = await withDeadline((options) => api.listNamespacedEndpointSlice({ namespace: service.namespace, labelSelector }, options), timeoutMs);
    const ready = slices.items.some((slice) => (slice.endpoints ?? []).some((e) => e.addresses.length > 0 && e.conditions?.ready !== false));
    return ready ? undefined : `${where} has no ready endpoint yet, so the API server could not call it`;
  } catch (err) {
    return `the endpoints of ${where} cannot be read (${summarizeApiError(err).message})`;
  }
}

export interface WebhookConfigurationManagerOptions {
  kubeConfig: KubeConfig;
  /** The configuration to keep (name, selectors and annotations final); clientConfig and caBundle are filled in. */
  manifest: WebhookManifest;
  /** Where the API server calls the webhook. */
  target: WebhookTarget;
  /** The CA bundle (PEM) the server uses now: `ca.crt` of its certificate directory; `undefined` while there is none. */
  caBundlePem(): string | undefined;
  /** Why the server cannot be called with a bundle yet (see {@link servingProblem}). */
  servingProblem(caPem: string): Promise<string | undefined>;
  /**
   * A ClusterRole of the install to own the configuration (`metadata.ownerReferences`), so
   * deleting the install deletes it by garbage collection; none when absent.
   */
  ownerClusterRole?: string;
  /**
   * For a CA from a Secret the kubelet mounts (no `--tls-secret`), which changes without an
   * overlap: how long (milliseconds) a CA the server does not serve stays in caBundle from
   * when this process first saw it so ({@link overlappedBundle}). Without it caBundle is the
   * server's bundle exactly.
   */
  caOverlapMs?: number;
  /** The clock, epoch milliseconds; `Date.now` by default. */
  now?: () => number;
  /** How often the stored configuration is compared with the bundle, in milliseconds. */
  intervalMs: number;
  /** Each API call's deadline, in milliseconds (src/cluster/deadline.ts's default when absent). */
  callTimeoutMs?: number;
  logger: Logger;
}

export interface WebhookConfigurationManager {
  /**
   * Checks now (e.g. after a new certificate was loaded): resolves after a round that began
   * after the call. Rounds never overlap; calls during a round share one round after it.
   */
  sync(): Promise<void>;
  /**
   * Why this replica must not be Ready (one line), or `undefined`: the last configuration
   * read left its CA out of caBundle for a newer one past the overlap, and it still serves
   * the CA judged so (a new mounted CA makes it Ready at once). For a `/readyz` check.
   */
  behind(): string | undefined;
  stop(): void;
}

/** Each stored webhook's caBundle, decoded to PEM text. */
const storedPems = (configuration: Parameters<typeof caBundlesOf>[0]): string[] =>
  [...caBundlesOf(configuration).values()].map((b64) => Buffer.from(b64, 'base64').toString('utf8'));

const caBundlesOf = (configuration: { webhooks?: { name: string; clientConfig?: { caBundle?: unknown } }[] } | undefined) =>
  new Map((configuration?.webhooks ?? []).map((w) => [w.name, w.clientConfig?.caBundle === undefined ? '' : String(w.clientConfig.caBundle)]));

/**
 * Whether every webhook of `desired` is in `stored` with the same caBundle. The API server
 * returns caBundle as base64 of the bytes, as it was sent.
 */
export function caBundlesMatch(desired: WebhookConfiguration, stored: Parameters<typeof caBundlesOf>[0]): boolean {
  const have = caBundlesOf(stored);
  return desired.webhooks.every((w) => have.get(w.name) === w.clientConfig.caBundle);
}

/**
 * `round` run one at a time: every call of a round has a deadline, so a round ends; what
 * asks meanwhile waits for one more round, never a queue. A round's error goes to `failed`.
 */
function oneAtATime(round: () => Promise<void>, failed: (err: unknown) => void): () => Promise<void> {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const sync = (): Promise<void> => {
    if (running !== undefined) {
      queued ??= running.then(() => {
        queued = undefined;
        return sync();
      });
      return queued;
    }
    running = round()
      .catch(failed)
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  return sync;
}

/**
 * Starts the manager: every `intervalMs` (and on `sync()`), it writes the configuration with
 * server-side apply when the server answers with the current bundle and (a) this process
 * has not written it yet (a new version's rules take effect), or (b) a webhook's caBundle
 * differs from the bundle. It logs each distinct reason for waiting once.
 */
export function startWebhookConfigurationManager(options: WebhookConfigurationManagerOptions): WebhookConfigurationManager {
  const { logger } = options;
  const name = options.manifest.metadata.name;
  const admission = options.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const now = options.now ?? Date.now;
  let written = false;
  /** The CAs of the previous rounds, for the overlap. */
  let memory: CaMemory = NO_CA_MEMORY;
  let lastWait: string | undefined;
  const wait = (why: string) => {
    if (why !== lastWait) logger.warn({ webhookConfiguration: name }, `not writing the webhook configuration yet: ${why}`);
    lastWait = why;
  };
  let judged: Behind | undefined;
  /** The new judgement, logged in one line when it takes the replica out or brings it back (`back`: why). */
  const judge = (next: Behind | undefined, back: string) => {
    if (next !== undefined && next.why !== judged?.why) logger.warn({ webhookConfiguration: name }, `not Ready: ${outOfService(next.why)}`);
    if (next === undefined && judged !== undefined) logger.info({ webhookConfiguration: name }, `Ready again: ${back}`);
    judged = next;
  };

  const { callTimeoutMs } = options;
  const owner = async () =>
    options.ownerClusterRole === undefined ? undefined : clusterRoleOwner(options.kubeConfig, options.ownerClusterRole, callTimeoutMs);
  const stored = async () => {
    try {
      return await withDeadline((call) => admission.readValidatingWebhookConfiguration({ name }, call), callTimeoutMs);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  };

  const round = async (): Promise<void> => {
    const caPem = options.caBundlePem();
    if (stillBehind(judged, caPem) === undefined) judge(undefined, 'its mounted CA changed');
    if (caPem === undefined) return wait('the certificate directory has no ca.crt to take the caBundle from');
    // A read that fails throws: the round ends and the judgement stands.
    const current = await stored();
    if (written && current === undefined) {
      judge(undefined, 'the webhook configuration was deleted');
      return wait('it was deleted (an uninstall?); restart the pods to write it again');
    }
    let bundle = caPem;
    if (options.caOverlapMs !== undefined) {
      const overlap = overlappedBundle({
        own: caPem,
        stored: current === undefined ? [] : storedPems(current),
        memory,
        nowMs: now(),
        overlapMs: options.caOverlapMs,
        forgetAfterMs: FORGET_AFTER_ROUNDS * options.intervalMs,
      });
      memory = overlap.memory;
      judge(
        overlap.behind === undefined ? undefined : { why: overlap.behind, ownPem: caPem },
        "this pod's CA is no longer left out of caBundle for a newer one",
      );
      if (overlap.behind !== undefined) return void (lastWait = undefined);
      bundle = overlap.bundle;
    }
    const desired = webhookConfigurationFor(options.manifest, options.target, caBundleBase64(bundle));
    if (written && caBundlesMatch(desired, current)) return void (lastWait = undefined);
    const problem = await options.servingProblem(caPem);
    if (problem !== undefined) return wait(`the server does not answer with this CA bundle yet: ${problem}`);
    const ownedBy = await owner();
    if (ownedBy === 'absent') return wait(`its owner, ClusterRole ${options.ownerClusterRole}, does not exist (an uninstall?)`);
    const body = ownedBy === undefined ? desired : { ...desired, metadata: { ...desired.metadata, ownerReferences: [ownedBy] } };
    const applied = await applyWebhookConfiguration(options.kubeConfig, body, callTimeoutMs);
    written = true;
    lastWait = undefined;
    logger.info(
      { webhookConfiguration: name, resourceVersion: applied.resourceVersion, changed: applied.changed, webhooks: desired.webhooks.length },
      'webhook configuration written with the CA bundle in use',
    );
  };

  const sync = oneAtATime(round, (err) =>
    logger.error({ webhookConfiguration: name, err: summarizeApiError(err).message }, 'webhook configuration not written; trying again'),
  );
  const timer = setInterval(() => void sync(), options.intervalMs);
  timer.unref();
  return {
    sync,
    behind: () => {
      const why = stillBehind(judged, options.caBundlePem());
      return why === undefined ? undefined : outOfService(why);
    },
    stop: () => clearInterval(timer),
  };
}

/** A replica behind, said with what brings it back: the line logged and shown in `/readyz`. */
const outOfService = (why: string) => `${why}, until caBundle holds this pod's CA or its CA changes`;
