/**
 * Public API of spiderpool-iaas-webhook. The pure core (Go durations, Spiderpool's
 * conf.yml rules, admission decisions) has no I/O; the server and certificate helpers
 * are the shells the CLI uses.
 */
export { formatGoDuration } from './duration/format.js';
export { parseGoDuration } from './duration/parse.js';

export { readConfYml, type ConfYmlReading, type ProviderSettings } from './config/conf-yml.js';
export { DEFAULT_HTTP_REQUEST_TIMEOUT, checkProviderSettings, httpRequestTimeoutProblem, checkServerUrl } from './config/provider.js';
export { validateConfYml } from './config/validate.js';

export {
  InvalidAdmissionReviewError,
  createDispatcher,
  decodeAdmissionReview,
  encodeAdmissionReview,
  type ReviewOutcome,
  type WiredValidator,
} from './admission/review.js';
export * from './kubernetes/schema.js';
export { allowed, denied, errored, invalidStatus } from './admission/response.js';
export type { GroupKind } from './kubernetes/resources.js';
export { warningsOnly, type Findings, type Validator } from './rules/validator.js';
export * from './field/errors.js';

export {
  IAAS_PROVIDER_ANNOTATION,
  SpiderIPPoolSchema,
  spiderIPPoolValidator,
  validateSpiderIPPoolCreate,
  validateSpiderIPPoolUpdate,
} from './rules/spiderippool.js';
export { PAIR_POOL_ANNOTATION, PARENT_NIC_ANNOTATION } from './spiderpool/pool.js';
export { noPoolDirectory, type PoolDirectory } from './rules/pool-pair.js';
export { staticCapacity, parseIPRange, type IPVersion } from './ip/ranges.js';
export { ConfigMapSchema, configMapValidator, validateSpiderpoolConfigMap, type SpiderpoolConfigMapRef } from './rules/configmap.js';

export { PoolIndex, type PoolChangeListener } from './state/pool-index.js';
export { ClusterState } from './state/state.js';
export type { ClusterObjects } from './kubernetes/cluster-objects.js';
export { buildAdmissionReview, type AdmissionWrite, type KubeObject } from './kubernetes/build.js';
export { PoolViolationTracker, type PoolViolation } from './audit/pool-violations.js';
export { judgePool } from './rules/pool-judgement.js';
export { CONFIGMAP_RULES, POOL_RULES, SPIDERIPPOOL_RULES, TRANSITION_RULES, type PoolRule, type RuleName, type SpiderIPPoolRule, type TransitionRule } from './rules/rule-names.js';
export { createReviewer, reviewAdmission, wireValidators, type ReviewContext, type ReviewOptions } from './validators.js';
export {
  poolCacheReadinessCheck,
  registerPoolCacheMetrics,
  startPoolCache,
  type PoolCache,
  type PoolCacheErrors,
  type PoolCacheOptions,
} from './cluster/pool-cache.js';
export { loadKubeConfig, type LoadedKubeConfig } from './cluster/kubeconfig.js';
export { findKubeConfig, type KubeConfigLocation, type KubeConfigSource } from './cluster/kubeconfig-source.js';

export { createApp } from './server/app.js';
export { startServer, type RunningServer, type ServeOptions } from './server/serve.js';
export { generateCertificates, type CertificateBundle, type CertificateOptions } from './certs/generate.js';
export { caBundleBase64, loadOrCreateCertificates, readServingCertificates, writeCertificates } from './certs/files.js';
export * from './defaults.js';
