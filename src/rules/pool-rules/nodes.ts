/**
 * `nodes-count`, `node-empty` (rule 2 of the shape; Spiderpool's IaaS-pool webhook,
 * `validateIaasSingleNode`): a node pool is pinned to exactly one node, its addresses being
 * sub-ENIs pre-warmed on that node. More entries are refused (their count is the measure, so
 * an existing over-long list may shrink but not grow), and so are empty entries.
 */
import { Path } from '../../kubernetes/field-path.js';
import { nodeNames, type SpiderIPPool } from '../../spiderpool/pool.js';
import type { Violation } from '../ratchet.js';
import { bothSides, causeError, causePlain, celString, either, literal, ratcheted, text, twinMessage, type Cause, type Hole, type PolicyTwin } from './cel.js';
import { nodesShown } from './variables.js';

/** Lists longer than this are not counted in CEL (the cost grows with the square of the length). */
const COUNTED_NODES = 256;

const itself = (pool: SpiderIPPool) => pool;

const nodeCount: Hole<SpiderIPPool> = { ts: (p) => String(nodeNames(p).length), cel: 'string(size(variables.newNodes))' };
const ONE_NODE = literal<SpiderIPPool>(
  'its addresses are sub-ENIs pre-warmed on that node and cannot serve Pods elsewhere; keep one node here and create one pool per node',
);

const COUNT_CAUSE: Cause<SpiderIPPool> = {
  type: 'FieldValueInvalid',
  field: literal('spec.nodeName'),
  detail: text`lists ${nodeCount} nodes (${nodesShown('new', itself)}), but an IaaS node pool is pinned to exactly one node: ${ONE_NODE}`,
};

const emptyCount = (pool: SpiderIPPool): number => nodeNames(pool).filter((node) => node === '').length;

// One cause for all empty entries, at the first: a list of many "" must not become as many causes.
const EMPTY_CAUSE: Cause<SpiderIPPool> = {
  type: 'FieldValueInvalid',
  field: {
    ts: (p) => Path.of('spec', 'nodeName').index(nodeNames(p).indexOf('')).toString(),
    cel: "'spec.nodeName[' + string(variables.newNodes.indexOf('')) + ']'",
    plain: 'spec.nodeName',
  },
  badValue: { ts: () => '', cel: celString('""') },
  detail: text`names no node${either(
    { ts: (p) => emptyCount(p) > 1, cel: `size(variables.newNodes) <= ${COUNTED_NODES} && variables.newEmptyNodes > 1` },
    text` (${{ ts: (p) => String(emptyCount(p) - 1), cel: 'string(variables.newEmptyNodes - 1)' }} more entries are empty too)`,
    literal(''),
  )}, so the pool's sub-ENIs would be pre-warmed nowhere; write the name of the node the pool is pinned to`,
};

/** The violations of an IaaS pool's spec.nodeName: more than one node, empty entries. */
export function nodeList(pool: SpiderIPPool): Violation[] {
  const nodes = nodeNames(pool);
  const found: Violation[] = [];
  if (nodes.length > 1) found.push({ rule: 'nodes-count', key: 'nodes-count', measure: BigInt(nodes.length), error: causeError(COUNT_CAUSE, pool) });
  if (nodes.includes('')) found.push({ rule: 'node-empty', key: 'node-empty', measure: BigInt(emptyCount(pool)), error: causeError(EMPTY_CAUSE, pool) });
  return found;
}

export const NODES_COUNT: PolicyTwin = {
  rule: 'nodes-count',
  variable: 'tooManyNodes',
  field: 'spec.nodeName',
  variables: [],
  broken: ratcheted('size(variables.newNodes) > 1', 'size(variables.oldNodes) > 1 && size(variables.newNodes) <= size(variables.oldNodes)'),
  messageExpression: twinMessage('tooManyNodes', COUNT_CAUSE),
  message: causePlain(COUNT_CAUSE),
};

export const NODE_EMPTY: PolicyTwin = {
  rule: 'node-empty',
  variable: 'emptyNodeName',
  field: 'spec.nodeName',
  // `in` first; the empty entries are counted (for ratcheting) only in lists of at most
  // COUNTED_NODES entries, and a longer list with an empty entry is refused.
  variables: bothSides('EmptyNodes', (side) => `variables.${side}Nodes.filter(n, n == '').size()`),
  broken: ratcheted(
    "'' in variables.newNodes",
    `'' in variables.oldNodes && size(variables.newNodes) <= ${COUNTED_NODES} && size(variables.oldNodes) <= ${COUNTED_NODES} && ` +
      'variables.newEmptyNodes <= variables.oldEmptyNodes',
  ),
  messageExpression: twinMessage('emptyNodeName', EMPTY_CAUSE),
  message: causePlain(EMPTY_CAUSE),
};
