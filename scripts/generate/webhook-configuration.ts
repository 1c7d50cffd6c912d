/**
 * deploy/base/validatingwebhookconfiguration.yaml (the chart's copy follows through
 * chart-files.ts): each webhook's name, path, API groups and resources from `WEBHOOKS`
 * (src/defaults.ts), the annotations its match conditions test from src/spiderpool/, what
 * the API server needs beside them and why, from here.
 * Fields as k8s.io/api/admissionregistration/v1 ValidatingWebhook.
 */
import {
  DEFAULT_CONFIGMAP_NAME,
  DEFAULT_NAMESPACE,
  DEFAULT_SERVICE_NAME,
  DEFAULT_SPIDERPOOL_NAMESPACE,
  REFUSING_WEBHOOK_TIMEOUT_SECONDS,
  WEBHOOKS,
} from '../../src/defaults.js';
import { IPPOOL_ANNOTATION, IPPOOLS_ANNOTATION, NS_DEFAULT_IPV4_ANNOTATION, NS_DEFAULT_IPV6_ANNOTATION } from '../../src/spiderpool/candidate-annotations.js';
import { IAAS_PROVIDER_ANNOTATION } from '../../src/spiderpool/pool.js';
import type { GeneratedFile } from './index.js';
import { note, yamlText } from './lib/yaml-notes.js';

const WEBHOOK_CONFIGURATION_FILE = 'deploy/base/validatingwebhookconfiguration.yaml';

/** The Service port the API server calls (deploy/base/service.yaml maps it to the server's). */
const SERVICE_PORT = 443;

type Row = (typeof WEBHOOKS)[keyof typeof WEBHOOKS];

interface Rule {
  apiVersions: string[];
  operations: unknown;
  scope: 'Cluster' | 'Namespaced';
}

/** One webhook: the row's name, path, groups and resources; `fields` after its clientConfig, `rule` its one rule. */
function webhook(
  row: Row,
  policy: { failurePolicy: 'Fail' | 'Ignore'; timeoutSeconds: number },
  rule: Rule,
  ruleNote: string | undefined,
  fields: object,
): object {
  const { apiVersions, operations, scope } = rule;
  const ruleValue = { apiGroups: row.apiGroups, apiVersions, resources: row.resources, operations, scope };
  return {
    name: row.name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    ...policy,
    matchPolicy: 'Equivalent',
    clientConfig: { service: { name: DEFAULT_SERVICE_NAME, namespace: DEFAULT_NAMESPACE, path: row.path, port: SERVICE_PORT } },
    rules: [ruleNote === undefined ? ruleValue : note(ruleNote, ruleValue)],
    ...fields,
  };
}

const REFUSING = { failurePolicy: 'Fail', timeoutSeconds: REFUSING_WEBHOOK_TIMEOUT_SECONDS } as const;
const WARNING = { failurePolicy: 'Ignore', timeoutSeconds: 2 } as const;
const CREATE_UPDATE = ['CREATE', 'UPDATE'];
const POOL_ANNOTATIONS = [IPPOOLS_ANNOTATION, IPPOOL_ANNOTATION];

/** CEL: the metadata at `metadata` has one of `keys` among its annotations; each step below `known` (present) tested with has() first. */
function hasAnnotation(known: string, metadata: string, keys: readonly string[]): string {
  const below = `${metadata}.annotations`.slice(known.length + 1).split('.');
  const steps = below.map((_, i) => `has(${[known, ...below.slice(0, i + 1)].join('.')})`);
  return `${steps.join(' && ')} && (${keys.map((key) => `'${key}' in ${metadata}.annotations`).join(' || ')})`;
}

const OLD_IS_IAAS = `oldObject != null && has(oldObject.metadata.annotations) && '${IAAS_PROVIDER_ANNOTATION}' in oldObject.metadata.annotations`;
const NEW_IS_IAAS = `has(object.metadata.annotations) && '${IAAS_PROVIDER_ANNOTATION}' in object.metadata.annotations`;

const spiderIPPool = webhook(
  WEBHOOKS.spiderIPPool,
  REFUSING,
  {
    apiVersions: ['v2beta1'],
    operations: note(
      'CREATE: the shape of a new IaaS pool (provider, one node, parent NIC, dual-stack\npair); UPDATE: the same, ratcheted, plus its fixed mode and category. DELETE is\nnot restricted.',
      CREATE_UPDATE,
    ),
    scope: 'Cluster',
  },
  '"spiderippools" matches the main resource only, not "spiderippools/status":\nSpiderpool\'s IPAM writes every allocation and release to the status\nsubresource, and the pool mode lives in spec, which a status write cannot\nchange. Matching status would put every Pod\'s IP allocation behind this webhook.',
  {
    matchConditions: note(
      'Only writes where the old or the new object is an IaaS pool: a mode change\nneeds an IaaS pool on both sides, a category change (annotation added or\nremoved) an IaaS pool on one, a CREATE an IaaS pool as object. Writes of\ntraditional pools, such as Spiderpool removing its finalizer, never reach the\nwebhook and never depend on it being up. oldObject is null on CREATE: reading a\nfield of it would be an evaluation error, which failurePolicy Fail turns into a\nrefusal, hence the null test first.',
      [{ name: 'old-or-new-object-is-iaas-pool', expression: `(${OLD_IS_IAAS}) || (${NEW_IS_IAAS})` }],
    ),
  },
);

const configMap = webhook(WEBHOOKS.configMap, REFUSING, { apiVersions: ['v1'], operations: CREATE_UPDATE, scope: 'Namespaced' }, undefined, {
  namespaceSelector: note(
    'Spiderpool\'s namespace. If Spiderpool runs elsewhere (e.g. installed by Helm into\n"spiderpool"), change the value here or patch it from an overlay; the label\nkubernetes.io/metadata.name is set by the API server on every namespace.',
    { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [DEFAULT_SPIDERPOOL_NAMESPACE] }] },
  ),
  matchConditions: note(
    "Only Spiderpool's ConfigMap reaches the webhook; no other ConfigMap write in the\nnamespace depends on it. Keep the name equal to the Deployment's\n--configmap-name. (matchConditions: GA in Kubernetes 1.30.)",
    [{ name: 'is-spiderpool-conf', expression: `object.metadata.name == '${DEFAULT_CONFIGMAP_NAME}'` }],
  ),
});

const pod = webhook(
  WEBHOOKS.pod,
  WARNING,
  { apiVersions: ['v1'], operations: note('Spiderpool reads the annotations when the Pod starts; they are set at CREATE.', ['CREATE']), scope: 'Namespaced' },
  undefined,
  {
    matchConditions: [
      {
        name: 'not-controller-owned',
        expression: '!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller)',
      },
      { name: 'has-pool-annotation', expression: hasAnnotation('object.metadata', 'object.metadata', POOL_ANNOTATIONS) },
    ],
  },
);

const workload = webhook(WEBHOOKS.workload, WARNING, { apiVersions: ['v1'], operations: CREATE_UPDATE, scope: 'Namespaced' }, undefined, {
  matchConditions: note("The template's annotations: spec.template for five kinds, spec.jobTemplate.spec.template for CronJobs.", [
    {
      name: 'template-has-pool-annotation',
      expression: `has(object.spec) && ((${hasAnnotation('object.spec', 'object.spec.template.metadata', POOL_ANNOTATIONS)}) || (${hasAnnotation('object.spec', 'object.spec.jobTemplate.spec.template.metadata', POOL_ANNOTATIONS)}))`,
    },
  ]),
});

const namespace = webhook(WEBHOOKS.namespace, WARNING, { apiVersions: ['v1'], operations: CREATE_UPDATE, scope: 'Cluster' }, undefined, {
  matchConditions: [
    {
      name: 'has-default-pool-annotation',
      expression: hasAnnotation('object.metadata', 'object.metadata', [NS_DEFAULT_IPV4_ANNOTATION, NS_DEFAULT_IPV6_ANNOTATION]),
    },
  ],
});

const defaultPools = webhook(WEBHOOKS.defaultPools, WARNING, { apiVersions: ['v2beta1'], operations: CREATE_UPDATE, scope: 'Cluster' }, undefined, {
  matchConditions: [
    {
      name: 'traditional-default-pool',
      expression: `has(object.spec) && has(object.spec.default) && object.spec.default == true && !(${NEW_IS_IAAS}) && !(${OLD_IS_IAAS})`,
    },
  ],
});

const CANDIDATE_POOLS = `Candidate-pool category warnings (design document, "候选池类别排他"): a
Pod NIC whose candidate pools mix categories gets only the highest category, with no
fallback. These webhooks never deny, they only warn the person who writes the object.

failurePolicy: Ignore on all four: a warning is worth nothing next to a write it would
block, so an unreachable webhook, a timeout or a matchCondition evaluation error lets
the write through untouched.

timeoutSeconds: 2. The decision reads memory only and takes microseconds (bench/); the
API server waits this long in the write path of every matched Pod and workload before
giving up and admitting (Ignore), so the bound is kept to what a TLS handshake and a
busy event loop need, well under the ${REFUSING_WEBHOOK_TIMEOUT_SECONDS} s of the refusing webhooks above.

matchConditions send only objects that carry one of Spiderpool's pool annotations (on
the Pod, or on the workload's Pod template), so an ordinary Pod or Deployment never
reaches the webhook and never waits for it. Every step is tested with has() first: a
missing field is then false, not an evaluation error.`;

const WEBHOOKS_NOTE = `clientConfig.caBundle is absent on purpose: the pods write this configuration themselves
(serve --manage-webhook-configuration, src/registration/manage.ts) with the ca.crt they
serve with, and keep it equal to it (with a mounted CA, as in overlays/cert-manager, also
for a bounded time a CA another replica may still serve: docs/install.md, "certmanager").
The Service's name and namespace are the pods' --service and POD_NAMESPACE then,
whatever this file says.

failurePolicy: Fail on the first two (the candidate-pool webhooks at the end only warn,
see there). Each check exists to stop a write whose damage shows up later: a pool
switching between node and global mode under running pods, or a httpRequestTimeout that
makes Spiderpool's agent and controller refuse to start. Ignore would admit exactly
those writes whenever the webhook is unreachable. The scope is kept small (CREATE and
UPDATE of IaaS pools; one ConfigMap) so that an outage blocks little, and two replicas
with a PDB keep outages rare.

timeoutSeconds: ${REFUSING_WEBHOOK_TIMEOUT_SECONDS} on the first two (the default is 10, the maximum 30). The checks are
pure and in memory, answered in milliseconds; ${REFUSING_WEBHOOK_TIMEOUT_SECONDS} s only covers a slow TLS handshake or a
busy event loop. A shorter wait bounds how long a \`kubectl apply\`, a Helm upgrade of
Spiderpool or the Spiderpool controller's pool updates hang when a pod is unreachable,
before failing with a clear "failed calling webhook" error.`;

const AKS_NOTE = `AKS's admissions enforcer rewrites the namespaceSelector of every webhook that can
reach kube-system unless this is set (Azure/AKS#1771); the ConfigMap webhook must
reach Spiderpool's namespace, kube-system by default (docs/install.md, "Why the webhooks
are configured this way").`;

const named = (row: Row) => `The API server names it in its message: admission webhook "${row.name}" denied the request: ...`;

/** The manifest as data with its notes. */
const CONFIGURATION = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: {
    name: DEFAULT_SERVICE_NAME,
    labels: { 'app.kubernetes.io/name': DEFAULT_SERVICE_NAME, 'app.kubernetes.io/component': 'webhook-configuration' },
    annotations: { 'admissions.enforcer/disabled': note(AKS_NOTE, 'true') },
  },
  webhooks: note(WEBHOOKS_NOTE, [
    note(named(WEBHOOKS.spiderIPPool), spiderIPPool),
    note(named(WEBHOOKS.configMap), configMap),
    note(`${CANDIDATE_POOLS}\n\nPods a person writes; a Pod a controller creates was judged in its template.`, pod),
    note('The Pod templates of workloads (main resource only: not scale or status).', workload),
    note('Namespace default pools, used by its Pods without their own pool annotation.', namespace),
    note(
      "Traditional cluster default pools (spec.default: true): their category against the\nother default pools'. IaaS pools reach the refusing webhook above, which warns the\nsame; these never refuse anything, hence Ignore and a webhook of their own.",
      defaultPools,
    ),
  ]),
};

const HEADER = `Generated by scripts/generate/webhook-configuration.ts from WEBHOOKS (src/defaults.ts):
edit those and run \`npm run generate\`. The pods apply it (serve --manage-webhook-configuration).`;

export default function generate(): GeneratedFile[] {
  return [{ path: WEBHOOK_CONFIGURATION_FILE, text: yamlText(CONFIGURATION, HEADER) }];
}
