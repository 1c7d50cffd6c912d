/**
 * Whether the API server would send a request to a webhook of a
 * ValidatingWebhookConfiguration at all, so that `review` decides as the cluster does for
 * writes the webhook never sees (a ConfigMap outside Spiderpool's namespace, a DELETE).
 * After k8s.io/apiserver/pkg/admission/plugin/webhook/predicates: `rules` (operations,
 * groups, resources, scope; with `matchPolicy: Equivalent`, the default, any version),
 * `namespaceSelector` (against the request namespace's labels; cluster-scoped objects
 * other than Namespaces always match) and `objectSelector` (the new or the old object's
 * labels). `matchConditions` are CEL and not evaluated here: the validators check what
 * ours test (`src/rules/registry.ts`).
 */
import { z } from 'zod';

const LabelSelectorSchema = z.looseObject({
  matchLabels: z.record(z.string(), z.string()).nullish(),
  matchExpressions: z
    .array(z.looseObject({ key: z.string(), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']), values: z.array(z.string()).nullish() }))
    .nullish(),
});
type LabelSelector = z.infer<typeof LabelSelectorSchema>;

const RuleSchema = z.looseObject({
  operations: z.array(z.string()).nullish(),
  apiGroups: z.array(z.string()).nullish(),
  apiVersions: z.array(z.string()).nullish(),
  resources: z.array(z.string()).nullish(),
  scope: z.enum(['Cluster', 'Namespaced', '*']).nullish(),
});

/** The matching fields of one webhook of a ValidatingWebhookConfiguration. */
export const WebhookMatchSchema = z.looseObject({
  name: z.string(),
  rules: z.array(RuleSchema).nullish(),
  matchPolicy: z.enum(['Exact', 'Equivalent']).nullish(),
  namespaceSelector: LabelSelectorSchema.nullish(),
  objectSelector: LabelSelectorSchema.nullish(),
});
export type WebhookMatch = z.infer<typeof WebhookMatchSchema>;

/** What of a request the matching reads. */
export interface MatchedRequest {
  operation: string;
  group: string;
  version: string;
  resource: string;
  /** `""` for cluster-scoped objects. */
  namespace: string;
  /** Labels of the request's namespace (for a Namespace itself: its own). */
  namespaceLabels: Readonly<Record<string, string>>;
  objectLabels: Readonly<Record<string, string>> | undefined;
  oldObjectLabels: Readonly<Record<string, string>> | undefined;
  /** A write of a Namespace object: its namespaceSelector is matched against its own labels. */
  isNamespace: boolean;
}

/** apimachinery's `LabelSelectorAsSelector`: an absent or empty selector selects everything. */
export function selects(selector: LabelSelector | null | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const inValues = has && (values ?? []).includes(labels[key]!);
    if (operator === 'In' && !inValues) return false;
    if (operator === 'NotIn' && inValues) return false;
    if (operator === 'Exists' && !has) return false;
    if (operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const listed = (values: readonly string[] | null | undefined, value: string): boolean => (values ?? []).some((v) => v === '*' || v === value);

function ruleMatches(rule: z.infer<typeof RuleSchema>, request: MatchedRequest, anyVersion: boolean): boolean {
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && request.namespace !== '') return false;
  if (scope === 'Namespaced' && request.namespace === '') return false;
  const resourceListed = (rule.resources ?? []).some((r) => r === request.resource || r === '*' || r === '*/*');
  return (
    listed(rule.operations, request.operation) &&
    listed(rule.apiGroups, request.group) &&
    (anyVersion || listed(rule.apiVersions, request.version)) &&
    resourceListed
  );
}

/** Whether `webhook` would be called for `request`. */
export function webhookMatches(webhook: WebhookMatch, request: MatchedRequest): boolean {
  const anyVersion = (webhook.matchPolicy ?? 'Equivalent') === 'Equivalent';
  if (!(webhook.rules ?? []).some((rule) => ruleMatches(rule, request, anyVersion))) return false;
  if ((request.namespace !== '' || request.isNamespace) && !selects(webhook.namespaceSelector, request.namespaceLabels)) return false;
  const objects = [request.objectLabels, request.oldObjectLabels].filter((l): l is Readonly<Record<string, string>> => l !== undefined);
  return objects.some((labels) => selects(webhook.objectSelector, labels));
}
