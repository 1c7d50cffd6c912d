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
  createReviewer,
  decodeAdmissionReview,
  encodeAdmissionReview,
  reviewAdmission,
  type ReviewOptions,
  type ReviewOutcome,
} from './admission/review.js';
export * from './admission/schema.js';
export { allowed, denied, errored, invalidStatus, type GroupKind } from './admission/response.js';
export type { Validator } from './admission/validator.js';
export * from './field/errors.js';

export {
  IAAS_PROVIDER_ANNOTATION,
  SpiderIPPoolSchema,
  spiderIPPoolValidator,
  validateSpiderIPPoolCreate,
  validateSpiderIPPoolUpdate,
} from './rules/spiderippool.js';
export { PAIR_POOL_ANNOTATION, PARENT_NIC_ANNOTATION } from './rules/pool.js';
export { noPoolDirectory, type PoolDirectory } from './rules/pool-pair.js';
export { staticCapacity, parseIPRange, type IPVersion } from './ip/ranges.js';
export { ConfigMapSchema, configMapValidator, validateSpiderpoolConfigMap, type SpiderpoolConfigMapRef } from './rules/configmap.js';

export { PoolIndex, type PoolChangeListener } from './cluster/pool-index.js';
export { ClusterState, type ClusterObjects } from './cluster/state.js';
export { buildAdmissionReview, type AdmissionWrite, type KubeObject } from './admission/build.js';
export { PoolViolationTracker, type PoolViolation } from './audit/pool-violations.js';
export { judgePool, POOL_RULES } from './rules/pool-judgement.js';
export { wireValidators, WEBHOOK_NAMES, type ReviewContext } from './validators.js';
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
