/**
 * `provider-empty`: the provider annotation's value names the IaaS provider (rule 1 of the
 * shape; Spiderpool's IaaS-pool webhook, `pkg/ippoolmanager/ippool_validate.go`), so it may not be empty.
 */
import { IAAS_PROVIDER_ANNOTATION, annotationField, iaasProvider, type SpiderIPPool } from '../../spiderpool/pool.js';
import type { Violation } from '../ratchet.js';
import { causeError, causePlain, literal, ratcheted, twinMessage, type Cause, type PolicyTwin } from './cel.js';
import { annotationCel } from './variables.js';

const FIELD = annotationField(IAAS_PROVIDER_ANNOTATION);

const CAUSE: Cause<SpiderIPPool> = {
  type: 'FieldValueRequired',
  field: literal(FIELD),
  detail: literal(
    "the annotation marks an IaaS pool and its value names the IaaS provider that manages the pool's sub-ENIs; " +
      "an empty name matches no provider, so Pods would fail at start; set it to the provider's name",
  ),
};

/** The violation of an IaaS pool whose provider annotation is empty, if it is. */
export function emptyProvider(pool: SpiderIPPool): Violation | undefined {
  return iaasProvider(pool) !== '' ? undefined : { rule: 'provider-empty', key: 'provider-empty', measure: '', error: causeError(CAUSE, pool) };
}

export const PROVIDER_EMPTY: PolicyTwin = {
  rule: 'provider-empty',
  variable: 'providerEmpty',
  field: FIELD,
  variables: [],
  broken: ratcheted(`${annotationCel('new', IAAS_PROVIDER_ANNOTATION)} == ''`, `${annotationCel('old', IAAS_PROVIDER_ANNOTATION)} == ''`),
  messageExpression: twinMessage('providerEmpty', CAUSE),
  message: causePlain(CAUSE),
};
