/**
 * The one ConfigMap the candidate-pool warnings read, Spiderpool's `spiderpool-conf`
 * (`enableIPv6` of its `conf.yml`: whether a paired IaaS pool ranks first), listed and
 * watched by name (`fieldSelector=metadata.name=<name>` on both, so a namespaced Role with
 * `resourceNames: [<name>]` is enough: the API server authorizes a list or watch carrying
 * that selector as a request for that one name). Reviews read memory only (informer.ts).
 */
import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DualStack } from '../candidates/categories.js';
import { enableIPv6Of } from '../candidates/dual-stack.js';
import { CONF_YML_KEY } from '../defaults.js';
import type { ReadinessCheck } from '../server/readiness.js';
import { startInformer, type Informer, type InformerTiming } from './informer.js';

export interface SpiderpoolConfRef {
  name: string;
  namespace: string;
}

/** What a review reads: `enableIPv6`, or why it is not known. */
export class SpiderpoolConfState {
  private synced = false;
  private current: DualStack;

  constructor(private readonly ref: SpiderpoolConfRef) {
    this.current = { known: false, reason: `ConfigMap ${ref.namespace}/${ref.name} has not been listed from the API server yet` };
  }

  /** Stores the ConfigMap as listed or watched, or its absence (`undefined`). */
  set(configMap: KubernetesObject | undefined): void {
    const where = `ConfigMap ${this.ref.namespace}/${this.ref.name}`;
    const data = (configMap as { data?: Record<string, unknown> } | undefined)?.data;
    const confYml = data?.[CONF_YML_KEY];
    if (configMap === undefined) this.current = { known: false, reason: `${where} does not exist` };
    else if (typeof confYml !== 'string') this.current = { known: false, reason: `${where} has no ${CONF_YML_KEY}` };
    else {
      const read = enableIPv6Of(confYml);
      this.current = read.ok ? { known: true, enableIPv6: read.enableIPv6 } : { known: false, reason: `${where}: ${read.reason}` };
    }
  }

  markSynced(): void {
    this.synced = true;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  dualStack(): DualStack {
    return this.current;
  }
}

export interface SpiderpoolConfCache extends Pick<Informer, 'lastSyncSeconds' | 'errors' | 'stop'> {
  state: SpiderpoolConfState;
}

const isNamed = (object: KubernetesObject, name: string) => object.metadata?.name === name;

/** Starts listing and watching `ref` through `config`; returns at once. */
export function startSpiderpoolConfCache(config: KubeConfig, ref: SpiderpoolConfRef, options: InformerTiming & { logger: Logger }): SpiderpoolConfCache {
  const { logger, ...timing } = options;
  const state = new SpiderpoolConfState(ref);
  const api = config.makeApiClient(CoreV1Api);
  const fieldSelector = `metadata.name=${ref.name}`;
  const informer = startInformer(
    config,
    {
      logger,
      what: 'spiderpool-conf',
      path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/configmaps`,
      fieldSelector,
      list: (requestOptions) => api.listNamespacedConfigMap({ namespace: ref.namespace, fieldSelector }, requestOptions),
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
  new Counter({
    name: 'spiderpool_iaas_webhook_conf_cache_errors_total',
    help: 'spiderpool-conf list and watch errors (each is retried with backoff).',
    labelNames: ['operation'] as const,
    registers: [registry],
    collect() {
      const errors = cache.errors();
      this.reset();
      this.inc({ operation: 'list' }, errors.list);
      this.inc({ operation: 'watch' }, errors.watch);
    },
  });
}

/** `/readyz?verbose` line `[+]spiderpool-conf-cache ok`, informational as the pool cache's. */
export function spiderpoolConfReadinessCheck(cache: Pick<SpiderpoolConfCache, 'state'>): ReadinessCheck {
  return {
    name: 'spiderpool-conf-cache',
    informational: true,
    check: () => (cache.state.hasSynced() ? undefined : 'spiderpool-conf not listed yet; candidate-pool warnings say dual-stack is not known until it is'),
  };
}
