/**
 * `pair-self`: the pair-pool annotation may not name the pool itself (Spiderpool's IaaS-pool
 * webhook, `validatePairPool`): a dual-stack pair is two pools. The pair rules that read the
 * other pool stay in pool-pair.ts, with the webhook alone.
 */
import { PAIR_POOL_ANNOTATION, annotationField } from '../../spiderpool/pool.js';
import type { Violation } from '../ratchet.js';
import { causeError, causePlain, celString, literal, ratcheted, twinMessage, type Cause, type PolicyTwin } from './cel.js';
import { annotationCel } from './variables.js';

const FIELD = annotationField(PAIR_POOL_ANNOTATION);

const CAUSE: Cause<{ name: string }> = {
  type: 'FieldValueInvalid',
  field: literal(FIELD),
  badValue: { ts: (c) => c.name, cel: 'variables.name' },
  detail: literal('names the pool itself, but a dual-stack pair is two pools, one IPv4 and one IPv6; name the other pool of the pair'),
};

/** The violation of pool `name` whose pair-pool annotation `named` names itself, if it does ('' names no pool). */
export function pairSelf(named: string | undefined, name: string): Violation | undefined {
  if (named === undefined || named === '' || named !== name) return undefined;
  return { rule: 'pair-self', key: 'pair-self', measure: named, error: causeError(CAUSE, { name }) };
}

const pairCel = (side: 'new' | 'old') => annotationCel(side, PAIR_POOL_ANNOTATION);

export const PAIR_SELF: PolicyTwin = {
  rule: 'pair-self',
  variable: 'pairSelf',
  field: FIELD,
  variables: [],
  broken: ratcheted(`${pairCel('new')} != ${celString('')} && ${pairCel('new')} == object.metadata.name`, `${pairCel('old')} == object.metadata.name`),
  messageExpression: twinMessage('pairSelf', CAUSE),
  message: causePlain(CAUSE),
};
