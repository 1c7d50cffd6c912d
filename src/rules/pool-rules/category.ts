/**
 * `category-fixed`: a pool's category (IaaS or traditional, the provider annotation's
 * presence) is fixed for its life, as its mode is (mode.ts); changing the provider's value is fine.
 */
import { IAAS_PROVIDER_ANNOTATION, annotationField, iaasProvider } from '../../spiderpool/pool.js';
import { causeError, causePlain, either, literal, text, twinMessage, type Cause, type Condition, type PolicyTwin } from './cel.js';
import { annotationShown, annotationShownVariables, nameShown, newPool, oldPool, type PoolRefusal, type Write } from './variables.js';

const WHY_CATEGORY_IS_FIXED = literal<Write>(
  "a pool's category is fixed for its life: an IaaS pool's addresses are cloud sub-ENIs whose MAC and VLAN the IaaS " +
    "provider manages, a traditional pool's are not, and switching would leave allocated addresses managed by the wrong side",
);
const RECREATE = literal<Write>('delete the pool once no Pod uses it and create it again without the annotation');

const wasIaas: Condition<Write> = { ts: (w) => iaasProvider(w.old) !== undefined, cel: 'variables.oldIsIaas' };
const FIELD = annotationField(IAAS_PROVIDER_ANNOTATION);
const CREATE_NEW = literal<Write>('create a new pool with the annotation instead');
const providerBefore = annotationShown('old', IAAS_PROVIDER_ANNOTATION, oldPool);
const providerAfter = annotationShown('new', IAAS_PROVIDER_ANNOTATION, newPool);

const CAUSE: Cause<Write> = {
  type: 'FieldValueForbidden',
  field: literal(FIELD),
  detail: either(
    wasIaas,
    text`removing the annotation (was ${providerBefore}) would turn IaaS pool ${nameShown} into a traditional pool, but ${WHY_CATEGORY_IS_FIXED}; ${RECREATE}`,
    text`adding the annotation (${providerAfter}) would turn traditional pool ${nameShown} into an IaaS pool, but ${WHY_CATEGORY_IS_FIXED}; ${CREATE_NEW}`,
  ),
};

/** The refusal of adding or removing the provider annotation on UPDATE, if the write does. */
export function categoryChange(w: Write): PoolRefusal | undefined {
  return (iaasProvider(w.old) === undefined) === (iaasProvider(w.pool) === undefined) ? undefined : { rule: 'category-fixed', error: causeError(CAUSE, w) };
}

export const CATEGORY_FIXED: PolicyTwin = {
  rule: 'category-fixed',
  variable: 'categoryChanged',
  field: FIELD,
  variables: annotationShownVariables(IAAS_PROVIDER_ANNOTATION),
  broken: 'oldObject != null && variables.oldIsIaas != variables.newIsIaas',
  messageExpression: twinMessage('categoryChanged', CAUSE),
  message: causePlain(CAUSE),
};
