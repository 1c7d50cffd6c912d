/**
 * Candidate-pool category warnings (design document, "候选池类别排他"), where the
 * candidates are written: a Pod not owned by a controller (CREATE), the Pod template of a
 * workload (CREATE, UPDATE), a Namespace's default pools (CREATE, UPDATE). Never a denial:
 * the object is fine to store, and what goes wrong happens at Pod start (candidates/).
 *
 * Sources follow Spiderpool's order (`getPoolCandidates`, pkg/ipam/pool_selections.go): a
 * SpiderSubnet annotation first (its pools are made for the application: skipped here), then
 * `ipam.spidernet.io/ippools`, which makes `ipam.spidernet.io/ippool` unread, then the Pod's
 * Namespace. A workload's Pods read their Namespace only without their own annotation, and
 * the Namespace is judged when it is written, so a template is judged on its own annotations.
 */
import { z } from 'zod';
import { firstIssue } from '../kubernetes/field-issue.js';
import { Path } from '../kubernetes/field-path.js';
import { listOf, stringEntries } from '../kubernetes/containers.js';
import { compiled } from '../kubernetes/fast-schema.js';
import type { GroupKind } from '../kubernetes/resources.js';
import {
  IPPOOLS_ANNOTATION,
  IPPOOL_ANNOTATION,
  NAMESPACE_ANNOTATIONS,
  NS_DEFAULT_IPV4_ANNOTATION,
  NS_DEFAULT_IPV6_ANNOTATION,
  POD_ANNOTATIONS,
  SUBNET_ANNOTATIONS,
  parseIPPool,
  parseIPPools,
  parseNamespaceDefault,
  type Parsed,
} from '../spiderpool/candidate-annotations.js';
import { stepBudget } from '../spiderpool/candidate-budget.js';
import type { DualStack, PoolCatalog } from '../spiderpool/candidate-categories.js';
import { candidateWarnings, type CandidateSource } from '../spiderpool/candidate-warnings.js';
import { annotationField } from '../spiderpool/pool.js';
import { someValidator, warningsOnly, type Findings, type SomeValidator, type Validator } from '../admission/contract.js';

/** What the warnings read at review time: the pools and whether dual-stack is on (memory only). */
export interface CandidateState {
  pools: PoolCatalog;
  dualStack(): DualStack;
}

type PodAnnotations = Partial<Record<(typeof POD_ANNOTATIONS)[number], string>>;

const podAnnotations = stringEntries(POD_ANNOTATIONS).nullish();
const objectMeta = z.object({ annotations: podAnnotations }).nullish();
const podTemplate = z.object({ metadata: objectMeta }).nullish();

/** Only a controller reference counts (`metav1.GetControllerOf`); other owners do not create the Pod. */
const PodSchema = z.object({
  metadata: z.object({
    annotations: podAnnotations,
    ownerReferences: listOf(z.object({ controller: z.boolean().nullish() })).nullish(),
  }),
});
type Pod = z.infer<typeof PodSchema>;

/** Deployment, StatefulSet, DaemonSet, ReplicaSet, Job: `spec.template`. */
const TemplateWorkloadSchema = z.object({ spec: z.object({ template: podTemplate }).nullish() });
/** CronJob: `spec.jobTemplate.spec.template`. */
const CronJobSchema = z.object({ spec: z.object({ jobTemplate: z.object({ spec: z.object({ template: podTemplate }).nullish() }).nullish() }).nullish() });

const NamespaceSchema = z.object({ metadata: z.object({ annotations: stringEntries(NAMESPACE_ANNOTATIONS).nullish() }) });
type Namespace = z.infer<typeof NamespaceSchema>;

const POD_REFUSAL = 'the Pod gets no IP address when it starts';
const TEMPLATE_REFUSAL = 'its Pods get no IP address when they start';
const NAMESPACE_REFUSAL = 'Pods here without their own pool annotation get no IP address when they start';

/** The warnings for a Pod's (or template's) annotations, the template at `template`. */
function podWarnings(annotations: PodAnnotations | null | undefined, template: Path, refusal: string, state: CandidateState): string[] {
  if (!annotations || SUBNET_ANNOTATIONS.some((key) => annotations[key] !== undefined)) return [];
  const field = (key: string) => annotationField(key, template);
  const source = (annotation: string, parsed: Parsed): CandidateSource => ({ annotation, field: field(annotation), refusal, parsed });
  const context = { pools: state.pools, dualStack: state.dualStack(), budget: stepBudget() };
  const pools = annotations[IPPOOLS_ANNOTATION];
  const pool = annotations[IPPOOL_ANNOTATION];
  if (pools !== undefined) {
    const found = candidateWarnings(source(IPPOOLS_ANNOTATION, parseIPPools(pools)), context);
    // A review that ran out of steps answers with that one warning.
    if (pool === undefined || context.budget.exceeded) return found;
    return [`spiderpool: ${field(IPPOOL_ANNOTATION)}: is not read: ${IPPOOLS_ANNOTATION} is set too and takes precedence`, ...found];
  }
  return pool === undefined ? [] : candidateWarnings(source(IPPOOL_ANNOTATION, parseIPPool(pool)), context);
}

/** An object decoded with `schema`, or what kept it from decoding. */
type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * `schema` that never fails: a warn-only webhook must not answer `allowed: false`, which
 * the generic dispatch does for an object it cannot decode (only a hand-made review can
 * hold one: the API server checks built-in kinds' field types before admission).
 */
function lenient<T>(schema: z.ZodType<T>): z.ZodType<Decoded<T>> {
  const fast = compiled(schema);
  return z.unknown().transform((value): Decoded<T> => {
    const result = fast.safeParse(value);
    if (result.success) return { ok: true, value: result.data };
    return { ok: false, reason: firstIssue(result.error) };
  });
}

/** Warnings for a decoded object, or the one saying it could not be checked. */
function warnOn<T>(decoded: Decoded<T>, warnings: (value: T) => string[]): Findings {
  return warningsOnly(decoded.ok ? warnings(decoded.value) : [`spiderpool: candidate pools were not checked: cannot decode the object (${decoded.reason})`]);
}

/** A Pod: judged on CREATE unless a controller owns it (the person wrote its template). */
function podValidator(state: CandidateState): Validator<Decoded<Pod>> {
  return {
    groupKind: { group: '', kind: 'Pod' },
    schema: lenient(PodSchema),
    validateCreate: (decoded) =>
      warnOn(decoded, (pod) =>
        pod.metadata.ownerReferences?.some((ref) => ref.controller === true) ? [] : podWarnings(pod.metadata.annotations, Path.ROOT, POD_REFUSAL, state),
      ),
  };
}

/** A workload kind whose Pod template sits at `templatePath`, judged on CREATE and UPDATE. */
function workloadValidator<T>(
  groupKind: GroupKind,
  schema: z.ZodType<T>,
  template: (object: T) => z.infer<typeof podTemplate>,
  templatePath: Path,
  state: CandidateState,
): Validator<Decoded<T>> {
  const check = (decoded: Decoded<T>): Findings =>
    warnOn(decoded, (object) => podWarnings(template(object)?.metadata?.annotations, templatePath, TEMPLATE_REFUSAL, state));
  return { groupKind, schema: lenient(schema), validateCreate: check, validateUpdate: (_old, object) => check(object) };
}

function namespaceWarnings(namespace: Namespace, state: CandidateState): string[] {
  const annotations = namespace.metadata.annotations;
  if (!annotations) return [];
  const context = { pools: state.pools, dualStack: state.dualStack(), budget: stepBudget() };
  const sources = (
    [
      [NS_DEFAULT_IPV4_ANNOTATION, 4],
      [NS_DEFAULT_IPV6_ANNOTATION, 6],
    ] as const
  ).flatMap(([key, version]): CandidateSource[] => {
    const text = annotations[key];
    if (text === undefined) return [];
    const names = parseNamespaceDefault(text);
    const parsed: Parsed = names.ok
      ? { ok: true, nics: [{ nic: undefined, ipv4: version === 4 ? names.names : [], ipv6: version === 6 ? names.names : [] }] }
      : names;
    return [{ annotation: key, field: annotationField(key), refusal: NAMESPACE_REFUSAL, parsed }];
  });
  const warnings: string[] = [];
  for (const source of sources) {
    const found = candidateWarnings(source, context);
    // A review that ran out of steps answers with that one warning.
    if (context.budget.exceeded) return found;
    warnings.push(...found);
  }
  return warnings;
}

/**
 * The candidate-pool validators for the reviewer's list: Pod, the six workload kinds and
 * Namespace, all answering allowed, with warnings.
 */
export function candidatePoolValidators(state: CandidateState): SomeValidator[] {
  const templated = (group: string, kind: string) =>
    workloadValidator({ group, kind }, TemplateWorkloadSchema, (o) => o.spec?.template, Path.of('spec', 'template'), state);
  return [
    someValidator(podValidator(state)),
    someValidator(templated('apps', 'Deployment')),
    someValidator(templated('apps', 'StatefulSet')),
    someValidator(templated('apps', 'DaemonSet')),
    someValidator(templated('apps', 'ReplicaSet')),
    someValidator(templated('batch', 'Job')),
    someValidator(
      workloadValidator(
        { group: 'batch', kind: 'CronJob' },
        CronJobSchema,
        (o) => o.spec?.jobTemplate?.spec?.template,
        Path.of('spec', 'jobTemplate', 'spec', 'template'),
        state,
      ),
    ),
    someValidator<Decoded<Namespace>>({
      groupKind: { group: '', kind: 'Namespace' },
      schema: lenient(NamespaceSchema),
      validateCreate: (ns) => warnOn(ns, (value) => namespaceWarnings(value, state)),
      validateUpdate: (_old, ns) => warnOn(ns, (value) => namespaceWarnings(value, state)),
    }),
  ];
}
