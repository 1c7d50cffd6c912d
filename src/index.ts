/**
 * The package's library surface, kept to what other tools call: Go durations exactly as
 * `time.ParseDuration` and `Duration.String()`, conf.yml as Spiderpool reads it, and the
 * offline reviewer behind `review` and the webhook (same judgement, no I/O).
 */
export { formatGoDuration } from './go/duration-format.js';
export { parseGoDuration } from './go/duration-parse.js';
export { validateConfYml } from './spiderpool/conf-validate.js';
export { createReviewer, reviewAdmission, type ReviewOptions } from './rules/registry.js';
