/**
 * The composition root of the admission layer, the one module that knows which validators
 * exist: every guarded kind, the webhook of `WEBHOOKS` (src/defaults.ts) that sends it, and
 * what each reads of the cluster. It hands them to the generic reviewer of src/admission/; the server, `review` and
 * the tests all get their reviewer through `createReviewer`; plug a new validator in here,
 * nowhere else.
 */
import { createDispatcher, withWebhooks, type ReviewOutcome, type WiredValidator } from '../admission/review.js';
import type { AdmissionReviewResponse } from '../kubernetes/schema.js';
import type { DualStack } from '../spiderpool/candidate-categories.js';
import { dualStackInCluster } from '../spiderpool/conf-dual-stack.js';
import type { ClusterObjects } from '../kubernetes/cluster-objects.js';
import { candidatePoolValidators } from './candidate-pools.js';
import { configMapValidator, type SpiderpoolConfigMapRef } from './configmap.js';
import { noPoolDirectory, type PoolDirectory, type UnsyncedPools } from './pool-pair.js';
import { spiderIPPoolValidator } from './spiderippool.js';
import { actionsOf, DENY_EVERY_RULE, type EnforcementTable } from './enforcement-table.js';
import { someValidator } from '../admission/contract.js';
import { DEFAULT_CONFIGMAP_NAME, WEBHOOKS } from '../defaults.js';

/** What the validators may read besides the request: settings and the cluster's state, from memory only. */
export interface ReviewContext {
  /** Spiderpool's ConfigMap; default `spiderpool-conf` in any namespace. */
  configMap?: SpiderpoolConfigMapRef;
  /**
   * The SpiderIPPools (the server's informer cache, or `--pools`); the pair checks read them.
   * Without it those checks are skipped with a warning saying so ({@link NO_CLUSTER_REASON}).
   */
  pools?: PoolDirectory;
  /**
   * What an IaaS pool write gets while `pools` is unavailable (`serve --unsynced-pools`,
   * whose default is `Refuse`); `Warn` when absent, and always without `pools`.
   */
  unsyncedPools?: UnsyncedPools;
  /** Other stored objects (Namespaces, ConfigMaps, …) when known (`--pools`, `--kubeconfig`). */
  cluster?: ClusterObjects;
  /** `enableIPv6` of the watched spiderpool-conf (the server); else read from `cluster`, else not known. */
  dualStack?: () => DualStack;
  /** Each rule's action (`--enforcement`); every rule `Deny` when absent. */
  enforcement?: EnforcementTable;
}

/** Why pair checks are skipped when no pool directory is given. */
export const NO_CLUSTER_REASON = 'no cluster connection, so other SpiderIPPools are not known';

/** Why dual-stack is not known when neither a watch nor a cluster state is given. */
const NO_CONF_REASON = 'no cluster connection, so spiderpool-conf is not known';

/** Where the candidate-pool warnings learn whether dual-stack is on. */
export function dualStackSource(context: ReviewContext): () => DualStack {
  if (context.dualStack) return context.dualStack;
  const { cluster } = context;
  if (cluster === undefined) return () => ({ known: false, reason: NO_CONF_REASON });
  const ref = { name: context.configMap?.name ?? DEFAULT_CONFIGMAP_NAME, ...(context.configMap?.namespace ? { namespace: context.configMap.namespace } : {}) };
  const known = dualStackInCluster(cluster, ref); // a state read from manifests or one list does not change
  return () => known;
}

/** Every validator, bound to `context`, with the webhook that calls it. */
export function wireValidators(context: ReviewContext): WiredValidator[] {
  const dualStack = dualStackSource(context);
  const pools = context.pools ?? noPoolDirectory(NO_CLUSTER_REASON);
  const unsynced = context.pools === undefined ? 'Warn' : (context.unsyncedPools ?? 'Warn');
  const validators = [
    someValidator(spiderIPPoolValidator(pools, dualStack, unsynced)),
    someValidator(configMapValidator(context.configMap)),
    ...candidatePoolValidators({ pools, dualStack }),
  ];
  return withWebhooks(validators, Object.values(WEBHOOKS));
}

/** What the validators may read besides the request (the reviewer only passes it on). */
export type ReviewOptions = ReviewContext;

/**
 * Builds a reviewer for fixed options (the server builds one at start). The returned
 * function is pure: same body in, same outcome out, no I/O.
 *
 * @throws InvalidAdmissionReviewError when `body` is not an `admission.k8s.io/v1`
 *   AdmissionReview request with a `uid`.
 */
export function createReviewer(options: ReviewOptions = {}): (body: unknown) => ReviewOutcome {
  return createDispatcher(wireValidators(options), actionsOf(options.enforcement ?? DENY_EVERY_RULE));
}

/** The URL path of the webhook named `name` (a `name` of {@link WEBHOOKS}). */
const pathOfWebhook = (name: string): string => Object.values(WEBHOOKS).find((webhook) => webhook.name === name)!.path;

/**
 * {@link createReviewer} judging only the kinds whose webhook is served at one of `paths`;
 * any other kind is allowed unchecked, as the API server never sends it there. So a Pod
 * posted to `/validate-spiderippool` costs the refusing path no candidate matching.
 */
export function createPathReviewer(options: ReviewOptions, paths: readonly string[]): (body: unknown) => ReviewOutcome {
  const wired = wireValidators(options).filter(({ webhook }) => paths.includes(pathOfWebhook(webhook)));
  return createDispatcher(wired, actionsOf(options.enforcement ?? DENY_EVERY_RULE));
}

const defaultReviewer = createReviewer();

/**
 * Turns an AdmissionReview (parsed JSON) into the response AdmissionReview: same
 * `apiVersion`/`kind`, `response.uid` equal to `request.uid`. `dryRun` requests get the
 * same decision as real ones.
 *
 * @throws InvalidAdmissionReviewError when `review` is not an `admission.k8s.io/v1`
 *   AdmissionReview request with a `uid` (the server answers HTTP 400).
 */
export function reviewAdmission(review: unknown, options?: ReviewOptions): AdmissionReviewResponse {
  return (options === undefined ? defaultReviewer : createReviewer(options))(review).review;
}
