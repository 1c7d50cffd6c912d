/**
 * The one ConfigMap the candidate-pool warnings read, Spiderpool's `spiderpool-conf`
 * (`enableIPv6` of its `conf.yml`: whether a paired IaaS pool ranks first), listed and
 * watched by name (`fieldSelector=metadata.name=<name>` on both, so a namespaced Role with
 * `resourceNames: [<name>]` is enough: the API server authorizes a list or watch carrying
 * that selector as a request for that one name). Reviews read memory only (informer.ts).
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { SpiderpoolConfState, type SpiderpoolConfRef } from '../spiderpool/conf-dual-stack.js';
import type { ReadinessCheck } from '../kubernetes/healthz.js';
import { describeApiFailure, registerInformerErrors, startInformer, type CacheFailure, type Informer, type InformerTiming } from './informer.js';

export interface SpiderpoolConfCache extends Pick<Informer, 'lastSyncSeconds' | 'errors' | 'stop'> {
  state: SpiderpoolConfState;
}

const isNamed = (object: KubernetesObject, name: string) => object.metadata?.name === name;

/** The Role and RoleBinding of deploy/base/rbac.yaml that let the server read the one ConfigMap. */
const CONF_READER = 'spiderpool-iaas-webhook-conf-reader';

/** A failed list or watch in one line; a 403 says which Role is missing and where. */
function describeConfCacheFailure(ref: Required<SpiderpoolConfRef>, operation: 'list' | 'watch', err: unknown): CacheFailure {
  const failure = describeApiFailure(operation, err);
  if (failure.statusCode !== 403) return failure;
  return {
    ...failure,
    message:
      `the Role and RoleBinding ${CONF_READER} from deploy/base/rbac.yaml are missing in namespace "${ref.namespace}": the API server forbids ` +
      `"${operation}" on ConfigMap "${ref.name}" (${failure.message}); re-apply your overlay to create them (get, list, watch on that one ConfigMap, bound to the webhook's ServiceAccount)`,
  };
}

/** Starts listing and watching `ref` through `config`; returns at once. */
export function startSpiderpoolConfCache(
  config: KubeConfig,
  ref: Required<SpiderpoolConfRef>,
  options: InformerTiming & { logger: Logger },
): SpiderpoolConfCache {
  const { logger, ...timing } = options;
  const state = new SpiderpoolConfState(ref);
  const fieldSelector = `metadata.name=${ref.name}`;
  const informer = startInformer(
    config,
    {
      logger,
      what: 'spiderpool-conf',
      path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/configmaps`,
      fieldSelector,
      replaceAll: (items) => {
        state.set(items.find((item) => isNamed(item, ref.name)));
        state.markSynced();
      },
      upsert: (object) => {
        if (isNamed(object, ref.name)) state.set(object);
      },
      remove: (object) => {
        if (isNamed(object, ref.name)) state.set(undefined);
      },
      synced: () => state.hasSynced(),
      describeFailure: (operation, err) => describeConfCacheFailure(ref, operation, err),
      degraded: {
        unsynced: 'candidate-pool warnings say dual-stack is not known',
        stale: 'candidate-pool warnings use the last known enableIPv6',
      },
    },
    timing,
  );
  return { state, ...informer };
}

/**
 * `spiderpool_iaas_webhook_conf_cache_synced` (1 once spiderpool-conf has been listed) and
 * `spiderpool_iaas_webhook_conf_cache_errors_total{operation}` on `registry`.
 */
export function registerSpiderpoolConfCacheMetrics(registry: Registry, cache: Pick<SpiderpoolConfCache, 'state' | 'errors'>): void {
  new Gauge({
    name: 'spiderpool_iaas_webhook_conf_cache_synced',
    help: 'Whether spiderpool-conf has been listed (1) or not (0: candidate-pool warnings say dual-stack is not known).',
    registers: [registry],
    collect() {
      this.set(cache.state.hasSynced() ? 1 : 0);
    },
  });
  registerInformerErrors(
    registry,
    'spiderpool_iaas_webhook_conf_cache_errors_total',
    'spiderpool-conf list and watch errors (each is retried with backoff).',
    () => cache.errors(),
  );
}

/** `/readyz?verbose` line `[+]spiderpool-conf-cache ok`, informational as the pool cache's. */
export function spiderpoolConfReadinessCheck(cache: Pick<SpiderpoolConfCache, 'state'>): ReadinessCheck {
  return {
    name: 'spiderpool-conf-cache',
    informational: true,
    check: () => (cache.state.hasSynced() ? undefined : 'spiderpool-conf not listed yet; candidate-pool warnings say dual-stack is not known until it is'),
  };
}
