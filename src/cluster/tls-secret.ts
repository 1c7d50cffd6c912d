/**
 * `serve --tls-secret`: the webhook's CA and serving certificate kept in a Secret of its
 * namespace (layout and renewal: src/certs/rotation.ts), filled when empty and renewed
 * before expiry, and the served pair written to the certificate directory, where the hot
 * reload (src/certs/reload.ts) takes it up.
 *
 * The Secret exists before the pods start, empty (deploy/base/tls-secret.yaml, the chart's
 * tls.method auto): the pods only read and update it, so their Role needs no `create` on
 * Secrets (docs/adr/0005-tls-secret-precreated.md). Replicas agree through the API
 * server's optimistic concurrency: every write is an update carrying the resourceVersion
 * read (409 Conflict when another replica wrote in between); the loser reads again and
 * continues from the winner's content, so two replicas starting at once end with one CA.
 * Every call has a deadline (deadline.ts), so a round ends even when the API server does not answer.
 */
import { ApiException, CoreV1Api, type KubeConfig, type ConfigurationOptions, type V1OwnerReference, type V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { writeServingDirectory } from '../certs/files.js';
import { planRotation, SecretContentError, type RotationPlan, type RotationPolicy, type SecretPems } from '../certs/rotation.js';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';
import { clusterRoleOwner } from './owner.js';

/** Where the Secret is. */
export interface SecretRef {
  namespace: string;
  name: string;
}

/** What one synchronisation ended with. */
export interface SecretSync {
  pems: RotationPlan['pems'];
  /** What this replica changed in the Secret; absent when it kept what it read. */
  reason?: string;
}

/** Reads and updates one Secret; a 409 is returned as `'conflict'`. */
interface SecretStore {
  read(): Promise<V1Secret>;
  replace(body: V1Secret): Promise<'replaced' | 'conflict'>;
}

/** Writes lost to other replicas before giving up for this round. */
const MAX_ATTEMPTS = 5;

function describeRefusal(verb: string, ref: SecretRef, err: unknown): Error {
  const { statusCode, message } = summarizeApiError(err);
  if (!(err instanceof ApiException)) return new Error(`cannot reach the API server to ${verb} Secret ${ref.namespace}/${ref.name}: ${message}`);
  const hint = statusCode === 403 ? ' (the ServiceAccount needs get and update on this Secret: deploy/base/rbac.yaml)' : '';
  return new Error(`the API server refused to ${verb} Secret ${ref.namespace}/${ref.name}: ${message}${hint}`);
}

/** The one line for a Secret that is not there: the pods never create it. */
function missingSecretMessage(ref: SecretRef): string {
  return (
    `Secret ${ref.namespace}/${ref.name} does not exist: the install creates it, empty, before the pods start; ` +
    `re-apply the install (kubectl apply -k, helm upgrade) or run kubectl -n ${ref.namespace} create secret generic ${ref.name}; will try again`
  );
}

function store(api: CoreV1Api, ref: SecretRef, timeoutMs: number | undefined): SecretStore {
  return {
    async read() {
      try {
        return await withDeadline((options) => api.readNamespacedSecret(ref, options), timeoutMs);
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) throw new Error(missingSecretMessage(ref));
        throw describeRefusal('read', ref, err);
      }
    },
    async replace(body) {
      try {
        await withDeadline((options: ConfigurationOptions) => api.replaceNamespacedSecret({ ...ref, body }, options), timeoutMs);
        return 'replaced';
      } catch (err) {
        if (err instanceof ApiException && err.code === 409) return 'conflict';
        // 404: deleted since it was read.
        if (err instanceof ApiException && err.code === 404) throw new Error(missingSecretMessage(ref));
        throw describeRefusal('update', ref, err);
      }
    },
  };
}

/** The Secret's PEM texts; `undefined` for one without data (as the install creates it). */
const decode = (data: Record<string, string> | undefined): SecretPems | undefined =>
  data === undefined || Object.keys(data).length === 0
    ? undefined
    : Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));

const encode = (pems: RotationPlan['pems']): Record<string, string> =>
  Object.fromEntries(Object.entries(pems).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));

/**
 * Brings the Secret up to date once: reads it, decides (`planRotation`, a new CA for an
 * empty Secret) and updates it when something changed, reading again after every write
 * another replica won.
 *
 * @param timeoutMs each API call's deadline, in milliseconds (deadline.ts's default when absent).
 * @throws Error with one line when the Secret does not exist (what to do), when the API
 *   server cannot be reached, does not answer in time or refuses (a 403 names the RBAC it
 *   needs), when the Secret holds content this webhook did not write, or when other
 *   replicas won {@link MAX_ATTEMPTS} writes in a row.
 */
export async function syncTlsSecret(
  kubeConfig: KubeConfig,
  ref: SecretRef,
  policy: RotationPolicy,
  now: () => Date = () => new Date(),
  owner?: V1OwnerReference,
  timeoutMs?: number,
): Promise<SecretSync> {
  const secrets = store(kubeConfig.makeApiClient(CoreV1Api), ref, timeoutMs);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const secret = await secrets.read();
    let plan: RotationPlan;
    try {
      plan = await planRotation(decode(secret.data), policy, now());
    } catch (err) {
      if (!(err instanceof SecretContentError)) throw err;
      throw new Error(
        `Secret ${ref.namespace}/${ref.name} cannot be used: ${err.message}; empty its data to have a new CA made, or name another Secret with --tls-secret`,
      );
    }
    if (plan.reason === undefined) return { pems: plan.pems };
    // Keys of others stay; ca-next.key goes when the plan has none.
    const outcome = await secrets.replace({
      ...secret,
      metadata: withOwner(secret.metadata, owner),
      data: { ...withoutNextKey(secret.data), ...encode(plan.pems) },
    });
    if (outcome !== 'conflict') return { pems: plan.pems, reason: plan.reason };
  }
  throw new Error(`Secret ${ref.namespace}/${ref.name}: other writers changed it ${MAX_ATTEMPTS} times in a row while it was being renewed; will try again`);
}

/** `metadata` with `owner` among its ownerReferences (added when missing). */
function withOwner(metadata: V1Secret['metadata'], owner: V1OwnerReference | undefined): V1Secret['metadata'] {
  const refs = metadata?.ownerReferences ?? [];
  if (owner === undefined || refs.some((ref) => ref.uid === owner.uid)) return metadata;
  return { ...metadata, ownerReferences: [...refs, owner] };
}

function withoutNextKey(data: Record<string, string> | undefined): Record<string, string> {
  const { 'ca-next.key': _next, ...rest } = data ?? {};
  return rest;
}

export interface TlsSecretOptions {
  kubeConfig: KubeConfig;
  secret: SecretRef;
  policy: RotationPolicy;
  /** Directory the served pair is written to (the server's `--cert-dir`). */
  certDir: string;
  /** How often the Secret is read again (renewals, other replicas' writes), in milliseconds. */
  intervalMs: number;
  /** Each API call's deadline, in milliseconds (default: deadline.ts's `API_CALL_TIMEOUT_MS`). */
  callTimeoutMs?: number;
  /** A ClusterRole of the install to own the Secret (src/cluster/owner.ts); no owner when absent. */
  ownerClusterRole?: string;
  logger: Logger;
}

export interface TlsSecretSync {
  /** Stops the periodic synchronisation. */
  stop(): void;
}

const servedKey = (pems: RotationPlan['pems']) => [pems['tls.crt'], pems['tls.key'], pems['ca.crt']].join('\0');

/**
 * Synchronises the Secret once and writes the served files into `certDir` (so the server
 * can start with them), then again every `intervalMs`, rewriting the files whenever the
 * Secret's serving pair or CA bundle changed. A failed round (every call bounded by
 * `callTimeoutMs`, so a silent API server ends it too) is logged, at warn when its line
 * differs from the last one, and retried at the next; the files in place are kept meanwhile.
 *
 * @throws Error as {@link syncTlsSecret}, when the owner ClusterRole does not exist, or the
 *   filesystem error when `certDir` cannot be written, from the first round only.
 */
export async function startTlsSecretSync(options: TlsSecretOptions): Promise<TlsSecretSync> {
  const { logger, secret, callTimeoutMs } = options;
  const where = { secret: `${secret.namespace}/${secret.name}`, certDir: options.certDir };
  let written = '';
  const round = async () => {
    const owner = options.ownerClusterRole === undefined ? undefined : await clusterRoleOwner(options.kubeConfig, options.ownerClusterRole, callTimeoutMs);
    if (owner === 'absent')
      throw new Error(
        `ClusterRole ${options.ownerClusterRole}, the Secret's owner (--owner-cluster-role), does not exist: the install is incomplete or being deleted`,
      );
    const synced = await syncTlsSecret(options.kubeConfig, secret, options.policy, undefined, owner, callTimeoutMs);
    if (synced.reason !== undefined) logger.info(where, `TLS Secret: ${synced.reason}`);
    const key = servedKey(synced.pems);
    if (key === written) return;
    await writeServingDirectory(options.certDir, { certPem: synced.pems['tls.crt'], keyPem: synced.pems['tls.key'], caCertPem: synced.pems['ca.crt'] });
    written = key;
  };
  await round();
  let running = false;
  let lastFailure: string | undefined;
  const failed = (err: unknown) => {
    const message = (err as Error).message;
    (message === lastFailure ? logger.debug.bind(logger) : logger.error.bind(logger))(
      { ...where, err: message },
      'TLS Secret synchronisation failed; keeping the certificates in use',
    );
    lastFailure = message;
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    round()
      .then(() => {
        if (lastFailure !== undefined) logger.info(where, 'TLS Secret synchronisation works again');
        lastFailure = undefined;
      }, failed)
      .finally(() => (running = false));
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
