/**
 * The one module that knows which validators exist: every guarded kind, the webhook (as
 * named in deploy/base/validatingwebhookconfiguration.yaml) that sends it, and what each reads
 * of the cluster. The server, `review` and the tests all get their reviewer through
 * `createReviewer`, which asks this module; plug a new validator in here, nowhere else.
 */
import type { Validator } from './admission/validator.js';
import type { ClusterObjects } from './cluster/state.js';
import { configMapValidator, type SpiderpoolConfigMapRef } from './rules/configmap.js';
import type { PoolDirectory } from './rules/pool-pair.js';
import { spiderIPPoolValidator } from './rules/spiderippool.js';

/** What the validators may read besides the request: settings and the cluster's state, from memory only. */
export interface ReviewContext {
  /** Spiderpool's ConfigMap; default `spiderpool-conf` in any namespace. */
  configMap?: SpiderpoolConfigMapRef;
  /** The SpiderIPPools (the server's informer cache, or `--pools`); the pair checks read them. */
  pools: PoolDirectory;
  /** Other stored objects (Namespaces, ConfigMaps, …) when known (`--pools`, `--kubeconfig`). */
  cluster?: ClusterObjects;
}

/** A validator and the webhook that calls it: kubectl names that webhook when a denial is not `Invalid`. */
export interface WiredValidator {
  webhook: string;
  /** Each validator decodes its own object type; the dispatch only hands it requests, hence `any`. */
  validator: Validator<any>;
}

/** The webhooks of deploy/base/validatingwebhookconfiguration.yaml. */
export const WEBHOOK_NAMES = {
  spiderIPPool: 'spiderippool.iaas-webhook.spidernet.io',
  configMap: 'spiderpool-conf.iaas-webhook.spidernet.io',
} as const;

/** Every validator, bound to `context`. */
export function wireValidators(context: ReviewContext): WiredValidator[] {
  return [
    { webhook: WEBHOOK_NAMES.spiderIPPool, validator: spiderIPPoolValidator(context.pools) },
    { webhook: WEBHOOK_NAMES.configMap, validator: configMapValidator(context.configMap) },
  ];
}
