/**
 * `review [FILE…] [-f PATH]… [--old OLD] [--operation OP] [--pools PATH… | --cluster] [-o json|yaml]`:
 * judges manifests as the API server would send them to the webhook, through the server's
 * own reviewer (`createReviewer`, wired in src/rules/registry.ts), and prints what kubectl
 * would print (kubectl-output.ts). An AdmissionReview (JSON) is answered as before: the
 * response AdmissionReview.
 */
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { buildAdmissionReview, type KubeObject } from '../kubernetes/build.js';
import { resourceOf, splitApiVersion } from '../kubernetes/resources.js';
import { allowed } from '../admission/response.js';
import { encodeAdmissionReview, InvalidAdmissionReviewError, type ReviewOutcome } from '../admission/review.js';
import { createReviewer, wireValidators, type ReviewOptions } from '../rules/registry.js';
import type { AdmissionRequest, AdmissionReviewResponse } from '../kubernetes/schema.js';
import { webhookMatches, WebhookMatchSchema, type MatchedRequest, type WebhookMatch } from '../kubernetes/webhook-match.js';
import { readWebhookManifest } from '../registration/webhook-configuration.js';
import { ClusterState } from '../store/state.js';
import { policyEnforcementLine } from '../rules/admission-policy.js';
import { SPIDERIPPOOL } from '../rules/spiderippool.js';
import { SPIDERIPPOOL_RULES, type SpiderIPPoolRule } from '../rules/rule-names.js';
import { firstIssue } from '../kubernetes/field-issue.js';
import { quoteGoString } from '../go/strconv-quote.js';
import { nameOf } from '../kubernetes/metadata.js';
import { ManifestError, manifestFiles, parseDocuments, parseManifests, readText, type ManifestObject } from '../kubernetes/manifests.js';
import { clusterFlags, loadState, UsageError } from './cluster-state.js';
import { printed, renderAccepted, renderRefusals, renderWarnings, type OutputFormat, type Refusal } from './kubectl-output.js';
import type { CommandResult } from './review-file.js';
import { reviewText } from './review-file.js';
import type { Operation } from './arguments.js';
import { enforcementNote, enforcementTable, warningsAsErrors } from './enforcement-notes.js';
import type { EnforcementTable } from '../rules/enforcement-table.js';

/** What `review` accepts, for errors about input it cannot use. */
const REVIEW_ACCEPTS =
  'review accepts Kubernetes manifests (YAML or JSON; several documents or a kind: List) or one admission.k8s.io/v1 AdmissionReview in JSON';

export interface ReviewCommand {
  /** FILE: each file's text and its name as kubectl gives it (`STDIN` for `-`); several for a folder. */
  inputs: { text: string; source: string }[];
  /** `--old`: the stored objects. */
  old?: { text: string; source: string };
  operation?: Operation;
  output?: OutputFormat;
  /** `--namespace`: for namespaced objects that name none (default `default`). */
  namespace?: string;
  /**
   * From `--pools` or the cluster; without it the objects of `inputs` are the whole cluster
   * state: judged in order as if applied to an empty cluster, so pair rules between them run.
   */
  state?: ClusterState;
  /**
   * The webhooks of the ValidatingWebhookConfiguration: a write none of them matches is
   * allowed without a review, as the API server never sends it. Absent: every write is reviewed.
   */
  webhooks?: WebhookMatch[];
  configMap: ReviewOptions['configMap'];
  /** `--enforcement`: each rule's action (every rule `Deny` when absent). */
  enforcement?: EnforcementTable;
  /** `--warnings-as-errors`: a warning exits 1, as kubectl's flag does. */
  warningsAsErrors?: boolean;
}

/** Said once on stderr when the files given are the whole cluster state. */
export const FILES_AS_STATE_NOTE =
  'note: no --pools or --cluster given: the objects of these files are the whole cluster state (applied in order to an empty cluster)\n';

const usage = (message: string): CommandResult => ({ exitCode: 2, stdout: '', stderr: `error: ${message}\n` });

/** Whether `value` is an AdmissionReview, or an object meant as one (a `request` and no manifest kind). */
function isAdmissionReview(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { kind, request } = value as Record<string, unknown>;
  return kind === 'AdmissionReview' || (kind === undefined && request !== undefined);
}

/** FILE read as JSON first (an AdmissionReview is JSON, as the API server sends it). */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Runs `review`.
 *
 * @returns exit 0 when everything is allowed, 1 when anything is refused, 2 for unusable
 *   input (the message names the file and says what `review` accepts).
 */
export function runReview(command: ReviewCommand): CommandResult {
  const [first] = command.inputs;
  if (command.inputs.length === 1 && isAdmissionReview(parsedJson(first!.text))) return answerReview(command, first!);
  const filesAsState = command.state === undefined;
  const state = command.state ?? ClusterState.of([]).state;
  let writes: Write[];
  try {
    writes = writesOf(command);
  } catch (e) {
    if (e instanceof ManifestError) return usage(e.message);
    throw e;
  }
  const result = judge(writes, { ...command, state }, createReviewer(reviewOptions(command, state)));
  return filesAsState && result.exitCode !== 2 ? { ...result, stderr: FILES_AS_STATE_NOTE + result.stderr } : result;
}

/** What the reviewer reads besides the request: the state's pools and objects, the ConfigMap's name, the rules' actions. */
function reviewOptions(command: ReviewCommand, state: ClusterState | undefined): ReviewOptions {
  return {
    configMap: command.configMap,
    ...(state ? { pools: state.pools, cluster: state } : {}),
    ...(command.enforcement ? { enforcement: command.enforcement } : {}),
  };
}

/** An AdmissionReview given as input, answered with the webhook's own response. */
function answerReview(command: ReviewCommand, input: ReviewCommand['inputs'][number]): CommandResult {
  if (command.old !== undefined || command.operation !== undefined) {
    return usage(`${input.source} is an AdmissionReview already; --old and --operation build one from manifests`);
  }
  const answered = reviewText(input.text, reviewOptions(command, command.state), command.output);
  // JSON is YAML: one reader for either output.
  const warned = answered.exitCode === 0 && (parseYaml(answered.stdout) as AdmissionReviewResponse).response.warnings !== undefined;
  return warningsAsErrors(answered, warned, command.warningsAsErrors);
}

/**
 * The writes the input files make, each with its operation and stored object.
 *
 * @throws ManifestError for input `review` cannot use, its message naming the file.
 */
function writesOf(command: ReviewCommand): Write[] {
  const objects = command.inputs.flatMap((input) => manifestsOf(input.text, input.source));
  const oldObjects = command.old === undefined ? [] : manifestsOf(command.old.text, command.old.source);
  if (objects.length === 0) throw new ManifestError(`${command.inputs.map((i) => i.source).join(', ')} holds no object; ${REVIEW_ACCEPTS}`);
  return objects.map(({ object, source }) => writeOf(command, object, source, oldObjects));
}

/**
 * One object's write: kubectl apply updates an object the cluster has, so without
 * `--operation` or `--old` one the state holds is an UPDATE from it.
 *
 * @throws ManifestError when the API server would refuse it first, or its stored object is missing.
 */
function writeOf(command: ReviewCommand, object: KubeObject, source: string, oldObjects: readonly ManifestObject[]): Write {
  const given: Operation = command.operation ?? (command.old !== undefined ? 'UPDATE' : 'CREATE');
  const operation: Operation = command.operation === undefined && command.old === undefined && command.state?.stored(object) !== undefined ? 'UPDATE' : given;
  // The API server refuses a write without a name before any webhook sees it (a CREATE may ask for one with generateName).
  if (nameOf(object) === '' && !(operation === 'CREATE' && typeof object.metadata?.['generateName'] === 'string' && object.metadata['generateName'] !== '')) {
    throw new ManifestError(`${source}: ${object.kind} has no metadata.name (the API server refuses it: resource name may not be empty)`);
  }
  const stored = oldObjects.find((old) => sameObject(old.object, object, command.namespace))?.object;
  if (command.old !== undefined && stored === undefined && operation !== 'CREATE') {
    throw new ManifestError(
      `${command.old.source} has no ${describe(object)} to ${operation === 'UPDATE' ? 'update' : 'delete'}; give the stored object of the same kind and name`,
    );
  }
  // The stored object: from --old, else from the state (a DELETE without either deletes the object as given).
  const fromState = stored ?? (operation !== 'CREATE' ? command.state?.stored(object) : undefined);
  if (operation === 'UPDATE' && fromState === undefined) {
    throw new ManifestError(`UPDATE of ${describe(object)} needs the stored object: give it with --old, in --pools, or from the cluster (--cluster)`);
  }
  return { operation, object, ...(fromState !== undefined ? { oldObject: fromState } : {}), source };
}

/** The objects of one input, with `review`'s own message for what it cannot use. */
function manifestsOf(text: string, source: string): ManifestObject[] {
  const values = parseDocuments(text, source);
  if (values.some(isAdmissionReview)) {
    throw new ManifestError(
      `${source} holds an AdmissionReview in YAML or among other documents; an AdmissionReview must be the only document, in JSON, as the API server sends it; ${REVIEW_ACCEPTS}`,
    );
  }
  try {
    return parseManifests(text, source);
  } catch (e) {
    if (e instanceof ManifestError) throw new ManifestError(`${e.message}; ${REVIEW_ACCEPTS}`);
    throw e;
  }
}

function describe(object: KubeObject): string {
  return `${object.kind} ${quoteGoString(nameOf(object))}`;
}

/** Same kind (any version of its group), namespace and name: old and new of one object. */
function sameObject(a: KubeObject, b: KubeObject, defaultNamespace: string | undefined): boolean {
  const group = (o: KubeObject) => splitApiVersion(o.apiVersion).group;
  const namespace = (o: KubeObject) => {
    const ns = o.metadata?.['namespace'];
    return typeof ns === 'string' && ns !== '' ? ns : resourceOf({ group: group(o), kind: o.kind }, false).namespaced ? (defaultNamespace ?? 'default') : '';
  };
  return group(a) === group(b) && a.kind === b.kind && nameOf(a) === nameOf(b) && namespace(a) === namespace(b);
}

/** The labels of a manifest object (`{}` when it has none). */
function labelsOf(object: unknown): Record<string, string> {
  const labels = (object as KubeObject | null | undefined)?.metadata?.['labels'];
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels)) return {};
  return Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** What the webhook matching reads of a built request; a namespace's labels come from the state. */
function matchedRequest(request: AdmissionRequest, state: ClusterState | undefined): MatchedRequest {
  const namespace = request.namespace ?? '';
  const isNamespace = request.kind.group === '' && request.kind.kind === 'Namespace';
  const namespaceObject = isNamespace
    ? (request.object ?? request.oldObject)
    : namespace === ''
      ? undefined
      : state?.get({ group: '', kind: 'Namespace' }, namespace);
  const name = isNamespace ? (request.name ?? '') : namespace;
  return {
    operation: request.operation,
    group: request.resource.group,
    version: request.resource.version,
    resource: request.resource.resource,
    namespace,
    // The API server labels every namespace with its name.
    namespaceLabels: { ...labelsOf(namespaceObject), 'kubernetes.io/metadata.name': name },
    objectLabels: request.object ? labelsOf(request.object) : undefined,
    oldObjectLabels: request.oldObject ? labelsOf(request.oldObject) : undefined,
    isNamespace,
  };
}

/**
 * The webhooks of a ValidatingWebhookConfiguration manifest (default: the one in deploy/).
 *
 * @throws UsageError when it cannot be read.
 */
export async function readWebhooks(manifest?: string): Promise<WebhookMatch[]> {
  let read: Awaited<ReturnType<typeof readWebhookManifest>>;
  try {
    read = await readWebhookManifest(manifest);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return read.webhooks.map((webhook) => {
    const parsed = WebhookMatchSchema.safeParse(webhook);
    if (parsed.success) return parsed.data;
    throw new UsageError(`the webhook manifest ${manifest ?? 'in deploy/'}: webhook ${JSON.stringify(webhook.name)}: ${firstIssue(parsed.error)}`);
  });
}

const VERB = { CREATE: 'creating', UPDATE: 'replacing', DELETE: 'deleting' } as const;

/** One object to judge: the operation the API server would send, with the stored object for an UPDATE or DELETE. */
interface Write {
  operation: Operation;
  object: KubeObject;
  oldObject?: KubeObject;
  source: string;
}

/** Reviews each write in order, the accepted ones recorded in the state as the server's cache would see them. */
function judge(writes: readonly Write[], command: ReviewCommand, review: (body: unknown) => ReviewOutcome): CommandResult {
  const printedSoFar: Judged = { responses: [], refusals: [], notes: '', seenWarnings: new Set(), stdout: '', stderr: '', warned: false };
  for (const write of writes) {
    const body = requestOf(write, command.namespace);
    let outcome: ReviewOutcome;
    try {
      outcome = reviewed(write, body, command, review, printedSoFar);
    } catch (e) {
      if (e instanceof InvalidAdmissionReviewError) return usage(`${write.source}: ${describe(write.object)}: ${e.message}`);
      throw e;
    }
    recordOutcome(printedSoFar, write, body.request, outcome, command.state);
  }
  const { responses, refusals, notes, stdout, stderr, warned } = printedSoFar;
  const exitCode = refusals.length > 0 ? 1 : 0;
  if (command.output !== undefined) {
    const items = responses.length === 1 ? responses[0] : { apiVersion: 'v1', kind: 'List', items: responses };
    return warningsAsErrors({ exitCode, stdout: printed(items, command.output), stderr: '' }, warned, command.warningsAsErrors);
  }
  return warningsAsErrors({ exitCode, stdout, stderr: stderr + renderRefusals(refusals) + notes }, warned, command.warningsAsErrors);
}

/** What `judge` has gathered so far, in the order kubectl would print it. */
interface Judged {
  responses: unknown[];
  refusals: Refusal[];
  notes: string;
  seenWarnings: Set<string>;
  stdout: string;
  stderr: string;
  warned: boolean;
}

/** The AdmissionReview the API server would send for `write`. */
function requestOf(write: Write, defaultNamespace: string | undefined): ReturnType<typeof buildAdmissionReview> {
  const { operation } = write;
  return buildAdmissionReview({
    operation,
    ...(operation === 'DELETE'
      ? { oldObject: write.oldObject ?? write.object }
      : { object: write.object, ...(write.oldObject ? { oldObject: write.oldObject } : {}) }),
    ...(defaultNamespace !== undefined ? { defaultNamespace } : {}),
  });
}

/**
 * `write` reviewed, or allowed unreviewed when no webhook of the configuration matches it
 * (as in the cluster; a guarded kind is named on stderr).
 *
 * @throws InvalidAdmissionReviewError from the reviewer.
 */
function reviewed(
  write: Write,
  body: ReturnType<typeof buildAdmissionReview>,
  command: ReviewCommand,
  review: (body: unknown) => ReviewOutcome,
  judged: Judged,
): ReviewOutcome {
  const matched = matchedRequest(body.request, command.state);
  if (command.webhooks === undefined || command.webhooks.some((w) => webhookMatches(w, matched))) return review(body);
  if (guarded(body.request))
    judged.stderr += `${shortName(write.object)}: not reviewed: no webhook of the configuration matches (${unmatched(command.webhooks, matched)})\n`;
  return { request: body.request, review: encodeAdmissionReview(body.request.uid, allowed()), refusedBy: [], causes: [] };
}

/** Adds one write's outcome to what `judge` prints; an allowed write becomes part of the state for the writes after it. */
function recordOutcome(judged: Judged, write: Write, request: AdmissionRequest, outcome: ReviewOutcome, state: ReviewCommand['state']): void {
  const { response } = outcome.review;
  const { operation } = write;
  judged.responses.push(namedReview(outcome.review, request));
  judged.stderr += renderWarnings(response.warnings, judged.seenWarnings);
  judged.warned ||= (response.warnings?.length ?? 0) > 0;
  judged.notes += enforcementNote(describe(write.object), outcome.causes);
  if (response.allowed) {
    const { group } = splitApiVersion(write.object.apiVersion);
    judged.stdout += renderAccepted(write.object.kind, group, nameOf(write.object), operation);
    state?.record(operation, operation === 'DELETE' ? (write.oldObject ?? write.object) : (request.object as KubeObject));
    return;
  }
  judged.refusals.push({
    status: response.status ?? { status: 'Failure', code: 400, message: '' },
    webhook: outcome.webhook ?? '',
    verb: VERB[operation],
    source: write.source,
  });
  judged.notes += policyNote(request, outcome.refusedBy);
}

/**
 * The response AdmissionReview with its request's identity (`uid`, `kind`, `resource`,
 * `namespace`, `name`, `operation`: fields of the real request), so that each item of `-o`
 * names its object, allowed ones included.
 */
function namedReview(review: ReviewOutcome['review'], request: AdmissionRequest): unknown {
  const { uid, kind, resource, namespace, name, operation } = request;
  return {
    apiVersion: review.apiVersion,
    kind: review.kind,
    request: { uid, kind, resource, ...(namespace ? { namespace } : {}), name: name ?? '', operation },
    response: review.response,
  };
}

/**
 * For a refused SpiderIPPool write, a `note:` line saying whether the
 * ValidatingAdmissionPolicy (deploy/components/validating-admission-policy/) refuses it
 * too, from the rules that refused it (`refusedBy` of the review's outcome: the one
 * judgement) and the table of their twins; '' for other writes and for a refusal no rule
 * names (an object that cannot be decoded).
 */
function policyNote(request: AdmissionRequest, refusedBy: readonly string[]): string {
  if (request.kind.group !== SPIDERIPPOOL.group || request.kind.kind !== SPIDERIPPOOL.kind) return '';
  const rules = refusedBy.filter(isSpiderIPPoolRule);
  if (rules.length === 0) return '';
  return `note: SpiderIPPool ${quoteGoString(nameOf(request.object) || (request.name ?? ''))}: ${policyEnforcementLine(rules)}\n`;
}

const isSpiderIPPoolRule = (rule: string): rule is SpiderIPPoolRule => (SPIDERIPPOOL_RULES as readonly string[]).includes(rule);

/** Whether a validator guards the request's kind (else "not reviewed" would tell nothing: no rule reads it). */
function guarded(request: AdmissionRequest): boolean {
  return GUARDED.has(`${request.kind.group}/${request.kind.kind}`);
}
const GUARDED = new Set(wireValidators({}).map(({ validator: { groupKind } }) => `${groupKind.group}/${groupKind.kind}`));

/** `configmap/spiderpool-conf`, as kubectl names an object in its one-line messages. */
function shortName(object: KubeObject): string {
  return `${object.kind.toLowerCase()}/${nameOf(object)}`;
}

/**
 * Why no webhook matches `request`: its operation when a CREATE of it would match, else
 * its namespace (a namespaced object: the namespaceSelector or a rule's scope), else its
 * labels or kind.
 */
function unmatched(webhooks: readonly WebhookMatch[], request: MatchedRequest): string {
  if (request.operation !== 'CREATE' && webhooks.some((w) => webhookMatches(w, { ...request, operation: 'CREATE' }))) return `operation ${request.operation}`;
  if (request.namespace !== '') return `namespace ${quoteGoString(request.namespace)}`;
  return `${request.resource} of these labels`;
}

/** Refuses `--old` naming the same file as FILE: old and new must be two objects (kyverno#9188). */
function sameFile(a: string, b: string): boolean {
  return a === '-' ? b === '-' : path.resolve(a) === path.resolve(b);
}

/** `review`'s arguments as the command line gives them. */
export interface ReviewArguments {
  old?: string;
  operation?: Operation;
  output?: OutputFormat;
  namespace?: string;
  pools: string[];
  /** `--cluster`, `--kubeconfig`, `--context`: add the live cluster's objects (kubectl's lookup). */
  cluster?: boolean;
  kubeconfig?: string;
  context?: string;
  /** `--manifest`: the ValidatingWebhookConfiguration whose matching applies (default: deploy/'s). */
  manifest?: string;
  configmapName: string;
  configmapNamespace?: string;
  /** `--enforcement` values (checked as parsed). */
  enforcement?: string[];
  warningsAsErrors?: boolean;
}

/** Reads `file` (`-`: standard input, named `STDIN` as kubectl names it). */
async function readSource(file: string, stdin: () => Promise<string>): Promise<{ text: string; source: string }> {
  return file === '-' ? { text: await stdin(), source: 'STDIN' } : { text: await readText(file), source: file };
}

/** Each of `files` (a folder: its manifests, as kubectl apply -f reads one), in order. */
async function readInputs(files: readonly string[], stdin: () => Promise<string>): Promise<{ text: string; source: string }[]> {
  const inputs: { text: string; source: string }[] = [];
  for (const file of files) {
    if (file === '-') inputs.push(await readSource(file, stdin));
    else for (const f of await manifestFiles(file)) inputs.push(await readSource(f, stdin));
  }
  return inputs;
}

/** `--old OLD`: read as FILE is, its errors naming the flag (`--old x.yaml: cannot be read: …`). */
async function readOld(file: string, stdin: () => Promise<string>): Promise<{ text: string; source: string }> {
  try {
    const read = await readSource(file, stdin);
    return { text: read.text, source: `--old ${read.source}` };
  } catch (e) {
    if (e instanceof ManifestError || e instanceof UsageError) throw new UsageError(`--old ${(e as Error).message}`);
    throw e;
  }
}

/**
 * `review` from its command-line arguments: reads the files, loads the state, runs
 * {@link runReview}. File, state and usage errors are exit 2 with one line naming the file.
 */
export async function reviewFromArguments(files: readonly string[], args: ReviewArguments, stdin: () => Promise<string>): Promise<CommandResult> {
  try {
    if (args.old !== undefined && files.some((file) => sameFile(file, args.old!))) {
      throw new UsageError(`--old ${args.old}: OLD is FILE itself; give the stored objects in a file of their own, so that old and new are two objects`);
    }
    const cluster = clusterFlags(args);
    const loaded = await loadState({ pools: args.pools, configMapName: args.configmapName, ...(cluster !== undefined ? { cluster } : {}) });
    const result = runReview({
      inputs: await readInputs(files, stdin),
      ...(args.old !== undefined ? { old: await readOld(args.old, stdin) } : {}),
      ...(args.operation !== undefined ? { operation: args.operation } : {}),
      ...(args.output !== undefined ? { output: args.output } : {}),
      ...(args.namespace !== undefined ? { namespace: args.namespace } : {}),
      ...(loaded !== undefined ? { state: loaded.state } : {}),
      webhooks: await readWebhooks(args.manifest),
      configMap: { name: args.configmapName, ...(args.configmapNamespace !== undefined ? { namespace: args.configmapNamespace } : {}) },
      ...enforcementOf(args),
    });
    const warnings = (loaded?.warnings ?? []).map((w) => `warning: ${w}\n`).join('');
    return { ...result, stderr: warnings + result.stderr };
  } catch (e) {
    if (e instanceof UsageError || e instanceof ManifestError) return usage(e.message);
    throw e;
  }
}

/** `--enforcement` and `--warnings-as-errors` as {@link ReviewCommand} takes them. */
function enforcementOf(args: ReviewArguments): Pick<ReviewCommand, 'enforcement' | 'warningsAsErrors'> {
  const enforcement = enforcementTable(args.enforcement);
  return { ...(enforcement ? { enforcement } : {}), ...(args.warningsAsErrors ? { warningsAsErrors: true } : {}) };
}
