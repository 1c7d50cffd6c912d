/**
 * `mode-fixed`: an IaaS pool's mode is fixed for its life (design document, "IaaS 池分配模式" /
 * IaaS pool allocation modes: "the validating webhook rejects adding or removing spec.nodeName
 * on an IaaS pool that already exists"). Moving a node pool to another node is fine.
 */
import { nodeNames } from '../../spiderpool/pool.js';
import { causeError, causePlain, either, literal, text, twinMessage, type Cause, type Condition, type PolicyTwin } from './cel.js';
import { nameShown, newPool, nodesShown, oldPool, type PoolRefusal, type Write } from './variables.js';

const WHY_MODE_IS_FIXED = literal<Write>(
  "an IaaS pool's mode is fixed for its life: a node pool's addresses are sub-ENIs pre-warmed on its node, " +
    'a global pool allocates them on any node and keeps them there as a cache, and switching would strand those allocations',
);
const TO_GLOBAL = literal<Write>('to make it a global pool, delete it once no Pod uses it and create it again without spec.nodeName');
const TO_NODE = literal<Write>('to pin it to a node, delete it once no Pod uses it and create it again with spec.nodeName');

const wasNodePool: Condition<Write> = { ts: (w) => nodeNames(w.old).length > 0, cel: 'size(variables.oldNodes) > 0' };

const CAUSE: Cause<Write> = {
  type: 'FieldValueForbidden',
  field: text`spec.nodeName`,
  detail: text`changing spec.nodeName from ${nodesShown('old', oldPool)} to ${nodesShown('new', newPool)} ${either(
    wasNodePool,
    text`would turn IaaS node pool ${nameShown} into a global pool, but ${WHY_MODE_IS_FIXED}; ${TO_GLOBAL}`,
    text`would turn IaaS global pool ${nameShown} into a node pool, but ${WHY_MODE_IS_FIXED}; ${TO_NODE}`,
  )}`,
};

/** The refusal of turning the stored IaaS pool `w.old` from a node pool into a global pool or back, if it does. */
export function modeChange(w: Write): PoolRefusal | undefined {
  return nodeNames(w.old).length > 0 === nodeNames(w.pool).length > 0 ? undefined : { rule: 'mode-fixed', error: causeError(CAUSE, w) };
}

export const MODE_FIXED: PolicyTwin = {
  rule: 'mode-fixed',
  variable: 'modeChanged',
  field: 'spec.nodeName',
  variables: [],
  broken: 'variables.oldIsIaas && (size(variables.oldNodes) > 0) != (size(variables.newNodes) > 0)',
  messageExpression: twinMessage('modeChanged', CAUSE),
  message: causePlain(CAUSE),
};
