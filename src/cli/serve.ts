/**
 * `serve`: the webhook server, with the SpiderIPPool and spiderpool-conf caches when a
 * cluster connection is found, until SIGTERM or SIGINT.
 *
 * Start order: the caches' first list requests go out before the server's modules load, so the
 * API server prepares its first page meanwhile (docs/adr/0021-start-order.md).
 *
 * Exit codes: 0 after a clean stop; 2 when it cannot start (certificates, kubeconfig, the
 * port: input it cannot use, as for every command; 1 means findings elsewhere in the CLI);
 * 1 when stopping fails.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DualStack } from '../spiderpool/candidate-categories.js';
import { findKubeConfig } from '../cluster/kubeconfig-source.js';
import type { PoolCache } from '../cluster/pool-cache.js';
import type { UnsyncedPools } from '../rules/pool-pair.js';
import { DEFAULT_SPIDERPOOL_NAMESPACE, REPORTS_LEASE_NAME } from '../defaults.js';
import type { WebhookMetrics } from '../server/metrics.js';
import { closeLog, createLogger } from '../server/logger.js';
import type { ReadinessCheck } from '../kubernetes/healthz.js';
import type { RunningServer } from '../server/serve.js';
import type { LifecycleFlags } from './lifecycle.js';
import { watchReplicas, type ReplicaFlags } from './replicas.js';
import { afterRequestsSent } from './requests-sent.js';
import { actionsOf, parseEnforcement } from '../rules/enforcement-table.js';
import type { ActionOf } from '../admission/enforcement.js';

/** `serve`'s options as the command line parses them. */
export interface ServeArguments extends Omit<LifecycleFlags, 'configmapNamespace'>, ReplicaFlags {
  port: number;
  host?: string;
  certDir: string;
  generateCerts: boolean;
  kubeconfig?: string;
  /** `--context`: a context of the kubeconfig instead of its current-context. */
  context?: string;
  poolCache: boolean;
  clientCaFile?: string;
  maxConnections: number;
  maxConnectionsPerAddress?: number;
  /** `--handshake-timeout`, in milliseconds. */
  handshakeTimeout: number;
  /** `--idle-timeout`, in milliseconds. */
  idleTimeout: number;
  /** `--shutdown-timeout`, in milliseconds. */
  shutdownTimeout: number;
  /** `--pool-cache-sync-wait`, in milliseconds. */
  poolCacheSyncWait: number;
  /** `--unsynced-pools`: IaaS pool writes while the pool cache has not synced. */
  unsyncedPools: UnsyncedPools;
  logLevel: string;
  /** `--enforcement` values, checked as parsed (`collectEnforcement`). */
  enforcement: string[];
  /** `--reports-owner-cluster-role`: the reports' owner, else `--owner-cluster-role`'s ClusterRole. */
  reportsOwnerClusterRole?: string;
  /** `--reports`: keep the OpenReports ClusterReports (one replica at a time); default: on with a cluster. */
  reports?: boolean;
  configmapName: string;
  configmapNamespace?: string;
}

/** Exit code of a `serve` that cannot start: unusable input, as a usage error (kubectl's 2), never 1 ("findings"). */
export const START_FAILURE_EXIT_CODE = 2;

/** What to change when binding failed, by Node's error code (listen(2)'s errno); other errors say only "cannot start". */
const BIND_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the port is in use; choose another with --port or PORT',
  EADDRNOTAVAIL: '--host is not an address of this machine; give one of its addresses, or leave --host out to bind all interfaces',
  EACCES: 'binding a port below 1024 needs a privilege this process lacks; choose another with --port or PORT',
};

/** The fatal log line of a `serve` that could not start with `error`. */
export function cannotStart(error: unknown): string {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  const fix = syscall === 'listen' && code !== undefined ? BIND_FAILURES[code] : undefined;
  return fix === undefined ? 'cannot start' : `cannot start: ${fix}`;
}

/** How long the server's modules wait for the caches' first list requests to be sent, in milliseconds. */
const FIRST_REQUESTS_WAIT_MS = 500;

/** Starts the server; returns once it serves (or has failed to start, with `process.exitCode` set). */
export async function serve(opts: ServeArguments): Promise<void> {
  const logger = createLogger(opts.logLevel);
  let cache: Pick<PoolCache, 'pools' | 'stop'> | undefined;
  let secret: { stop(): void } | undefined;
  let replicas: { stop(): void } | undefined;
  let started: RunningServer | undefined;
  try {
    const conf = { name: opts.configmapName, namespace: opts.configmapNamespace ?? DEFAULT_SPIDERPOOL_NAMESPACE };
    const sync = { syncWaitMs: opts.poolCacheSyncWait, unsyncedPools: opts.unsyncedPools, reports: reportsWanted(opts, logger) };
    const watching = opts.poolCache ? await watchPools({ kubeconfig: opts.kubeconfig, context: opts.context }, conf, sync, logger) : undefined;
    if (!opts.poolCache) logger.warn('--no-pool-cache: dual-stack pair checks are skipped, with a warning in each IaaS pool review');
    cache = watching?.cache;
    const [{ startServer }, { manageWebhookConfiguration, provisionCertificates, webhookCaBundleReadiness }] = await Promise.all([
      import('../server/serve.js'),
      import('./lifecycle.js'),
    ]);
    const lifecycle = { ...opts, configmapNamespace: conf.namespace };
    secret = await provisionCertificates(lifecycle, logger);
    let caBundlePem: string | undefined;
    let manager: Awaited<ReturnType<typeof manageWebhookConfiguration>>;
    const server = await startServer({
      port: opts.port,
      host: opts.host,
      certDir: opts.certDir,
      // With --tls-secret the directory is written from the Secret.
      generateCerts: opts.generateCerts && secret === undefined,
      onCertificateReloaded: (cert) => {
        caBundlePem = cert.material.caCertPem;
        void manager?.sync();
      },
      clientCaFile: opts.clientCaFile,
      maxConnections: opts.maxConnections,
      maxConnectionsPerAddress: opts.maxConnectionsPerAddress,
      timeouts: { handshakeMs: opts.handshakeTimeout, keepAliveMs: opts.idleTimeout },
      shutdownGraceMs: opts.shutdownTimeout,
      review: {
        configMap: { name: opts.configmapName, namespace: opts.configmapNamespace },
        enforcement: parseEnforcement(opts.enforcement),
        ...(watching ? { pools: watching.cache.pools, dualStack: watching.dualStack, unsyncedPools: opts.unsyncedPools } : {}),
      },
      readinessChecks: [...(watching?.readiness ?? []), ...webhookCaBundleReadiness(opts, () => manager)],
      ...(watching ? { metrics: watching.metrics } : {}),
      // Tenant-written reviews in a thread of their own: the refusing webhooks never wait on them.
      isolateWarnOnly: {},
      logger,
    });
    started = server;
    caBundlePem = server.caCertPem;
    manager = await manageWebhookConfiguration(lifecycle, server, () => caBundlePem, logger);
    replicas = await watchReplicas(opts, server, logger);
    const shutdown = (signal: string) => {
      logger.info({ signal }, 'stopping: no longer ready, finishing in-flight reviews');
      secret?.stop();
      manager?.stop();
      replicas?.stop();
      // Exit explicitly: a timer or watcher left behind must not keep the pod terminating.
      void server
        .stop()
        .then(() => cache?.stop())
        .then(
          () => {
            logger.info('stopped');
            return closeLog(logger).then(() => process.exit(0));
          },
          (e: unknown) => {
            logger.error({ err: (e as Error)?.message ?? String(e) }, 'stopping failed');
            return closeLog(logger).then(() => process.exit(1));
          },
        );
    };
    process.once('SIGTERM', shutdown);
    process.once('SIGINT', shutdown);
  } catch (e) {
    logger.fatal({ err: (e as Error).message }, cannotStart(e));
    process.exitCode = START_FAILURE_EXIT_CODE;
    // Started before the step that failed: a server left listening would keep a process
    // that cannot start alive (and its pod Ready, with no webhook configuration written).
    secret?.stop();
    await started?.stop();
    // A watch request still waiting for a silent API server cannot be aborted through
    // client-node, and would keep the process alive.
    if (cache)
      await cache
        .stop()
        .then(() => closeLog(logger))
        .then(() => process.exit());
  }
}

/** The pool and spiderpool-conf caches (stopped together) and what `serve` adds for them: readiness lines and metrics. */
interface PoolWatching {
  cache: Pick<PoolCache, 'pools' | 'stop'>;
  dualStack: () => DualStack;
  readiness: ReadinessCheck[];
  metrics: WebhookMetrics;
}

/**
 * The SpiderIPPool cache for the pair checks, when a cluster connection is found
 * (`findKubeConfig`'s order); without one the checks are skipped with a warning.
 * `@kubernetes/client-node` is imported only then: it about doubles the idle memory and
 * the start time of a server that does not need it. With a cluster, it resolves once the
 * caches' first list requests are on the wire (`afterRequestsSent`), at once without one.
 *
 * @throws Error when the chosen kubeconfig cannot be read.
 */
async function watchPools(cluster: ServeCluster, conf: { name: string; namespace: string }, sync: PoolSync, logger: Logger): Promise<PoolWatching | undefined> {
  const noCluster = () =>
    logger.warn('no kubeconfig or in-cluster configuration found: dual-stack pair checks are skipped, with a warning in each IaaS pool review');
  if (findKubeConfig(cluster.kubeconfig) === undefined) return void noCluster();
  return afterRequestsSent(() => startWatching(cluster, conf, sync, logger, noCluster), FIRST_REQUESTS_WAIT_MS);
}

/** `--kubeconfig` and `--context` of `serve`. */
interface ServeCluster {
  kubeconfig: string | undefined;
  context: string | undefined;
}

/** How the pool cache waits for its first list, in milliseconds, what IaaS pool writes get until it has, and where the reports' Lease is. */
interface PoolSync {
  syncWaitMs: number;
  unsyncedPools: UnsyncedPools;
  reports: ReportsPlace | undefined;
}

/** The reports Lease's namespace, the reports' owner, and each rule's action (a Deny rule's result is `fail`, others `warn`). */
interface ReportsPlace {
  namespace: string;
  ownerClusterRole?: string;
  /** The flag that named it: `--reports-owner-cluster-role`, else `--owner-cluster-role`. */
  ownerFlag?: string;
  actionOf: ActionOf;
}

/**
 * Where the reports are kept from, or `undefined` when they are off: `--reports=false`, or
 * by default without the pod's namespace (logged).
 *
 * @throws Error for `--reports=true` without `--namespace` (POD_NAMESPACE).
 */
function reportsWanted(opts: ServeArguments, logger: Logger): ReportsPlace | undefined {
  if (opts.reports === false) return undefined;
  if (opts.namespace === undefined || opts.namespace === '') {
    if (opts.reports === true) throw new Error("--reports needs the pod's namespace for its Lease: pass --namespace or set POD_NAMESPACE");
    return void logger.info("no --namespace (POD_NAMESPACE): no OpenReports reports (their Lease lives in the pod's namespace)");
  }
  const actionOf = actionsOf(parseEnforcement(opts.enforcement));
  const [owner, ownerFlag] =
    opts.reportsOwnerClusterRole !== undefined
      ? [opts.reportsOwnerClusterRole, '--reports-owner-cluster-role']
      : [opts.ownerClusterRole, '--owner-cluster-role'];
  return { namespace: opts.namespace, actionOf, ...(owner === undefined ? {} : { ownerClusterRole: owner, ownerFlag }) };
}

/** `watchPools` once a kubeconfig was found: `noCluster` when it has gone since. */
async function startWatching(
  flags: ServeCluster,
  conf: { name: string; namespace: string },
  sync: PoolSync,
  logger: Logger,
  noCluster: () => void,
): Promise<PoolWatching | undefined> {
  const [{ loadKubeConfig }, { poolCacheReadinessCheck, registerPoolCacheMetrics, startPoolCache }, confCache, { createWebhookMetrics }] = await Promise.all([
    import('../cluster/kubeconfig.js'),
    import('../cluster/pool-cache.js'),
    import('../cluster/spiderpool-conf-cache.js'),
    import('../server/metrics.js'),
  ]);
  const cluster = loadKubeConfig(flags.kubeconfig, undefined, flags.context !== undefined ? { context: flags.context } : {});
  if (cluster === undefined) return void noCluster(); // removed since it was found
  logger.info({ source: cluster.source, from: cluster.from }, 'watching SpiderIPPools for the dual-stack pair checks');
  const { reports: place, ...cacheSync } = sync;
  const cache = startPoolCache(cluster.config, { logger, ...cacheSync });
  logger.info(conf, 'watching spiderpool-conf for enableIPv6 (candidate-pool warnings)');
  const confs = confCache.startSpiderpoolConfCache(cluster.config, conf, { logger });
  const metrics = createWebhookMetrics();
  registerPoolCacheMetrics(metrics.registry, cache);
  confCache.registerSpiderpoolConfCacheMetrics(metrics.registry, confs);
  const reports = place === undefined ? undefined : await startReports(cluster.config, cache, place, metrics, logger);
  return {
    // The reports first: a leader hands its Lease back before the watches end.
    cache: {
      pools: cache.pools,
      stop: () => (reports?.stop() ?? Promise.resolve()).then(() => Promise.all([cache.stop(), confs.stop()])).then(() => undefined),
    },
    dualStack: () => confs.state.dualStack(),
    readiness: [poolCacheReadinessCheck(cache), confCache.spiderpoolConfReadinessCheck(confs)],
    metrics,
  };
}

/** The OpenReports reports of the stored pools' violations, kept by one replica at a time (src/cluster/pool-reports.ts). */
async function startReports(
  config: KubeConfig,
  cache: PoolCache,
  place: ReportsPlace,
  metrics: WebhookMetrics,
  logger: Logger,
): Promise<{ stop(): Promise<void> }> {
  const [{ registerPoolReportMetrics, startPoolReports }, { EVENT_LOOP_SLICING }] = await Promise.all([
    import('../cluster/pool-reports.js'),
    import('../store/slices.js'),
  ]);
  logger.info(
    { lease: `${place.namespace}/${REPORTS_LEASE_NAME}` },
    "keeping the OpenReports ClusterReports of the stored pools' violations while holding the Lease",
  );
  const reports = startPoolReports({
    kubeConfig: config,
    tracker: cache.violations,
    synced: () => cache.pools.hasSynced(),
    uidOf: (pool) => cache.pools.get(pool)?.metadata.uid,
    lease: { namespace: place.namespace, name: REPORTS_LEASE_NAME },
    identity: `${hostname()}_${randomUUID()}`,
    ...place,
    slicing: EVENT_LOOP_SLICING,
    logger,
  });
  registerPoolReportMetrics(metrics.registry, reports);
  return reports;
}
