/**
 * `serve --tls-secret`: the webhook's CA and serving certificate kept in a Secret of its
 * namespace (layout and renewal: src/certs/rotation.ts), created when absent and renewed
 * before expiry, and the served pair written to the certificate directory, where the hot
 * reload (src/certs/reload.ts) takes it up.
 *
 * Replicas agree through the API server's optimistic concurrency: every write is a create
 * (refused with 409 AlreadyExists when another replica created it first) or an update
 * carrying the resourceVersion read (409 Conflict when another replica wrote in between).
 * The loser reads again and continues from the winner's content, so two replicas starting
 * at once end with one CA.
 */
import { ApiException, CoreV1Api, type KubeConfig, type V1OwnerReference, type V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { writeServingDirectory } from '../certs/files.js';
import { planRotation, SecretContentError, type RotationPlan, type RotationPolicy, type SecretPems } from '../certs/rotation.js';
import { summarizeApiError } from './api-error.js';
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

/** Reads and writes one Secret; 409s are returned as `'conflict'`, absence as `undefined`. */
interface SecretStore {
  read(): Promise<V1Secret | undefined>;
  create(body: V1Secret): Promise<'created' | 'conflict'>;
  replace(body: V1Secret): Promise<'replaced' | 'conflict'>;
}

/** Writes lost to other replicas before giving up for this round. */
const MAX_ATTEMPTS = 5;

function describeRefusal(verb: string, ref: SecretRef, err: unknown): Error {
  const { statusCode, message } = summarizeApiError(err);
  if (!(err instanceof ApiException)) return new Error(`cannot reach the API server to ${verb} Secret ${ref.namespace}/${ref.name}: ${message}`);
  const hint = statusCode === 403 ? ' (the ServiceAccount needs get, create and update on this Secret: deploy/base/rbac.yaml)' : '';
  return new Error(`the API server refused to ${verb} Secret ${ref.namespace}/${ref.name}: ${message}${hint}`);
}

function store(api: CoreV1Api, ref: SecretRef): SecretStore {
  const conflictOr = async <T>(verb: string, call: () => Promise<unknown>, done: T): Promise<T | 'conflict'> => {
    try {
      await call();
      return done;
    } catch (err) {
      if (err instanceof ApiException && err.code === 409) return 'conflict';
      throw describeRefusal(verb, ref, err);
    }
  };
  return {
    async read() {
      try {
        return await api.readNamespacedSecret(ref);
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw describeRefusal('read', ref, err);
      }
    },
    create: (body) => conflictOr('create', () => api.createNamespacedSecret({ namespace: ref.namespace, body }), 'created' as const),
    replace: (body) => conflictOr('update', () => api.replaceNamespacedSecret({ ...ref, body }), 'replaced' as const),
  };
}

const decode = (data: Record<string, string> | undefined): SecretPems =>
  Object.fromEntries(Object.entries(data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));

const encode = (pems: RotationPlan['pems']): Record<string, string> =>
  Object.fromEntries(Object.entries(pems).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));

/**
 * Brings the Secret up to date once: reads it, decides (`planRotation`) and writes when
 * something changed, reading again after every write another replica won.
 *
 * @throws Error with one line when the API server cannot be reached or refuses (a 403
 *   names the RBAC it needs), when the Secret holds content this webhook did not write,
 *   or when other replicas won {@link MAX_ATTEMPTS} writes in a row.
 */
export async function syncTlsSecret(
  kubeConfig: KubeConfig,
  ref: SecretRef,
  policy: RotationPolicy,
  now: () => Date = () => new Date(),
  owner?: V1OwnerReference,
): Promise<SecretSync> {
  const secrets = store(kubeConfig.makeApiClient(CoreV1Api), ref);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const secret = await secrets.read();
    let plan: RotationPlan;
    try {
      plan = await planRotation(secret === undefined ? undefined : decode(secret.data), policy, now());
    } catch (err) {
      if (!(err instanceof SecretContentError)) throw err;
      throw new Error(
        `Secret ${ref.namespace}/${ref.name} cannot be used: ${err.message}; delete it to have a new CA made, or name another Secret with --tls-secret`,
      );
    }
    if (plan.reason === undefined) return { pems: plan.pems };
    const outcome =
      secret === undefined
        ? await secrets.create({
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: {
              name: ref.name,
              namespace: ref.namespace,
              labels: { 'app.kubernetes.io/name': 'spiderpool-iaas-webhook' },
              ...(owner === undefined ? {} : { ownerReferences: [owner] }),
            },
            type: 'kubernetes.io/tls',
            data: encode(plan.pems),
          })
        : // Keys of others stay; ca-next.key goes when the plan has none.
          await secrets.replace({ ...secret, metadata: withOwner(secret.metadata, owner), data: { ...withoutNextKey(secret.data), ...encode(plan.pems) } });
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
 * Secret's serving pair or CA bundle changed. A failed round is logged and retried at the
 * next; the files in place are kept meanwhile.
 *
 * @throws Error as {@link syncTlsSecret}, when the owner ClusterRole does not exist, or the
 *   filesystem error when `certDir` cannot be written, from the first round only.
 */
export async function startTlsSecretSync(options: TlsSecretOptions): Promise<TlsSecretSync> {
  const { logger, secret } = options;
  const where = { secret: `${secret.namespace}/${secret.name}`, certDir: options.certDir };
  let written = '';
  const round = async () => {
    const owner = options.ownerClusterRole === undefined ? undefined : await clusterRoleOwner(options.kubeConfig, options.ownerClusterRole);
    if (owner === 'absent') throw new Error(`ClusterRole ${options.ownerClusterRole}, the Secret's owner (--owner-cluster-role), does not exist: the install is incomplete or being deleted`);
    const synced = await syncTlsSecret(options.kubeConfig, secret, options.policy, undefined, owner);
    if (synced.reason !== undefined) logger.info(where, `TLS Secret: ${synced.reason}`);
    const key = servedKey(synced.pems);
    if (key === written) return;
    await writeServingDirectory(options.certDir, { certPem: synced.pems['tls.crt'], keyPem: synced.pems['tls.key'], caCertPem: synced.pems['ca.crt'] });
    written = key;
  };
  await round();
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    round()
      .catch((err: unknown) => logger.error({ ...where, err: (err as Error).message }, 'TLS Secret synchronisation failed; keeping the certificates in use'))
      .finally(() => (running = false));
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
