/**
 * The reviewer of the warn-only candidate-pool webhooks alone, for a thread that holds no
 * pool cache, only what those validators read (`CandidateState`, e.g. a `PoolMirror`): the
 * warn-only worker (src/server/warn-only-worker.ts). Apart from validators.ts so that the
 * worker loads none of the refusing rules' modules (conf.yml's decoders, the pool rules):
 * ~12 MiB less resident per worker.
 */
import { WEBHOOKS } from '../defaults.js';
import { createDispatcher, withWebhooks, type ReviewOutcome } from '../admission/review.js';
import { candidatePoolValidators, type CandidateState } from './candidate-pools.js';

/**
 * The reviewer of the candidate-pool validators (Pod, the workload kinds, Namespace);
 * every other kind is allowed unchecked. Pure, as `createReviewer`'s.
 *
 * @throws InvalidAdmissionReviewError when the body is not an `admission.k8s.io/v1` AdmissionReview request with a `uid`.
 */
export function createCandidateReviewer(state: CandidateState): (body: unknown) => ReviewOutcome {
  return createDispatcher(withWebhooks(candidatePoolValidators(state), Object.values(WEBHOOKS)));
}
