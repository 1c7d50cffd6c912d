import { isMap, isNode, parseAllDocuments, parseDocument } from 'yaml';
import { firstIssue } from '../kubernetes/field-issue.js';
import { escapeUnprintable, truncate } from '../go/strconv-quote.js';
import { nameOf } from '../kubernetes/metadata.js';
import { documentData, listItems } from '../kubernetes/manifests.js';
import { verdictFor } from '../admission/validator.js';
import { auditAnnotationsOf, DENY_ALL, enforce, type ActionOf } from '../admission/enforcement.js';
import { enforcementNote } from './enforcement-notes.js';
import { CONFIGMAP, ConfigMapSchema, validateSpiderpoolConfigMap } from '../rules/configmap.js';
import { printed, renderRefusals, renderWarnings, type OutputFormat } from './kubectl-output.js';
import type { StatusCause } from '../kubernetes/schema.js';
import type { CommandResult } from './review-file.js';

type ParsedDocument = ReturnType<typeof parseAllDocuments>[number];

/**
 * `validate-config`: checks a `conf.yml`, or a manifest holding Spiderpool's ConfigMap, with
 * the same rule and the same message as the webhook (as if the ConfigMap were applied).
 *
 * A text with a document that has top-level `apiVersion` and `kind` is a manifest (as
 * `kubectl apply -f` reads it): every ConfigMap named `configMapName`, also inside a
 * `kind: List` (what `kubectl get -o yaml` prints for several objects), is checked. Any
 * other text is taken as `conf.yml` itself.
 *
 * @returns exit code 0 when Spiderpool would start (warnings on stderr as kubectl prints
 *   them), 1 with the webhook's message on stderr when it would not, 2 when the text is
 *   empty (nothing but blanks and comments: a failed `kubectl get … > file` must not pass a
 *   CI gate), or a manifest is not valid YAML (kubectl would refuse it before any webhook)
 *   or has no such ConfigMap. With `output`, the verdicts ({@link ConfigVerdict}) on stdout
 *   instead of the lines for people (a `List` for several ConfigMaps).
 */
export function validateConfigText(text: string, configMapName: string, actionOf: ActionOf = DENY_ALL, output?: OutputFormat): CommandResult {
  const documents = parseAllDocuments(text);
  if (documents.every((doc) => doc.contents === null && doc.errors.length === 0)) {
    return usageError(
      `the input is empty (no YAML document${text === '' ? '' : ', only blanks or comments'}); give conf.yml, or a manifest with Spiderpool's ConfigMap ${JSON.stringify(configMapName)}`,
    );
  }
  if (!documents.some(isManifestDocument)) {
    return combined([check({ metadata: { name: configMapName }, data: { 'conf.yml': text } }, configMapName, new Set(), actionOf)], output);
  }
  const objects: unknown[] = [];
  for (const doc of documents) {
    const data = documentData(doc);
    if (!data.ok) return usageError(`the manifest is not valid YAML: ${data.reason}`);
    if (data.value === null || data.value === undefined) continue; // an empty document, as kubectl skips it
    const items = listItems(data.value);
    if (items === 'not a list') return usageError(`the manifest has a ${kindOf(data.value)} whose items is not a list`);
    // One by one: spreading a List of some 130 000 items overflows the call stack.
    for (const item of items ?? [data.value]) objects.push(item);
  }
  const allConfigMaps = objects.filter((o) => kindOf(o) === 'ConfigMap');
  const configMaps = allConfigMaps.filter((o) => nameOf(o) === configMapName);
  if (configMaps.length === 0) {
    const found =
      allConfigMaps.length === 0
        ? `found ${objects.length === 1 ? 'one object' : `${objects.length} objects`} and no ConfigMap`
        : `found ${allConfigMaps.map(described).join(', ')}`;
    return usageError(`the manifest has no ConfigMap named ${JSON.stringify(configMapName)} (${found}); pass --configmap-name to check one of another name`);
  }
  const seen = new Set<string>();
  return combined(
    configMaps.map((configMap) => check(configMap, configMapName, seen, actionOf, true)),
    output,
  );
}

/** The results of the ConfigMaps checked, as one command's output: the worst exit code; with `output`, the verdicts. */
function combined(results: readonly (CommandResult & { verdict?: ConfigVerdict })[], output: OutputFormat | undefined): CommandResult {
  const exitCode = results.reduce<number>((worst, r) => Math.max(worst, r.exitCode), 0) as CommandResult['exitCode'];
  const verdicts = results.flatMap((r) => (r.verdict !== undefined ? [r.verdict] : []));
  if (output === undefined || verdicts.length < results.length) {
    return { exitCode, stdout: results.map((r) => r.stdout).join(''), stderr: results.map((r) => r.stderr).join('') };
  }
  return { exitCode, stdout: printed(verdicts.length === 1 ? verdicts[0] : { apiVersion: 'v1', kind: 'List', items: verdicts }, output), stderr: '' };
}

/** Whether `doc`'s top level is a mapping with `apiVersion` and `kind`, even if it has errors. */
function isManifestDocument(doc: ParsedDocument): boolean {
  return isMap(doc.contents) && doc.contents.has('apiVersion') && doc.contents.has('kind');
}

/** `ConfigMap "x" (data keys: a, b)`, as the command names what it found. */
function described(configMap: unknown): string {
  const name = nameOf(configMap);
  return `ConfigMap ${name !== '' ? JSON.stringify(name) : 'without a name'} (${dataKeys(configMap)})`;
}

function dataKeys(configMap: unknown): string {
  const data = (configMap as { data?: unknown }).data;
  const keys = data !== null && typeof data === 'object' ? Object.keys(data).map((k) => escapeUnprintable(truncate(k))) : [];
  return keys.length === 0 ? 'no data keys' : `data keys: ${keys.join(', ')}`;
}

function kindOf(value: unknown): string | undefined {
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' ? kind : undefined;
}

function usageError(message: string): CommandResult {
  return { exitCode: 2, stdout: '', stderr: `error: ${message}\n` };
}

/** One ConfigMap's verdict, as `-o json|yaml` prints it: the object named, the causes in file order. */
interface ConfigVerdict {
  kind: 'ConfigMap';
  namespace?: string;
  name: string;
  allowed: boolean;
  warnings: string[];
  causes: StatusCause[];
  /** The webhook's `decision` and `rules` when the rule fired, whatever its action (`--enforcement`). */
  auditAnnotations?: Record<string, string>;
}

/**
 * The webhook's decision on one ConfigMap, as the command prints it: on success exactly
 * what was checked; a refusal as kubectl prints an `Invalid` status, one cause a line, in
 * the order of conf.yml; for a manifest's ConfigMap without conf.yml, the data keys it has.
 * Warnings print as kubectl prints them, once each across the run (`seen`).
 */
function check(
  configMap: unknown,
  configMapName: string,
  seen: Set<string>,
  actionOf: ActionOf,
  fromManifest = false,
): CommandResult & { verdict?: ConfigVerdict } {
  const parsed = ConfigMapSchema.safeParse(configMap);
  if (!parsed.success) {
    return usageError(`not a ConfigMap: ${firstIssue(parsed.error)}`);
  }
  const { errors, warnings: warned, causes: fired } = enforce(validateSpiderpoolConfigMap(parsed.data), actionOf);
  const verdict = verdictFor(CONFIGMAP, configMapName, errors, warned);
  const causes = inFileOrder(verdict.status?.details?.causes ?? [], parsed.data.data?.['conf.yml']);
  const namespace = parsed.data.metadata.namespace;
  const annotations = auditAnnotationsOf(fired);
  const named: ConfigVerdict = {
    kind: 'ConfigMap',
    ...(namespace !== undefined ? { namespace } : {}),
    name: configMapName,
    allowed: verdict.allowed,
    warnings: verdict.warnings ?? [],
    causes,
    ...(annotations !== undefined ? { auditAnnotations: annotations } : {}),
  };
  const warnings = renderWarnings(verdict.warnings, seen);
  const where = fromManifest ? `ConfigMap ${JSON.stringify(configMapName)}: ` : '';
  if (verdict.allowed && fired.length > 0) {
    return { exitCode: 0, stdout: '', stderr: `${warnings}${enforcementNote(`ConfigMap ${JSON.stringify(configMapName)}`, fired)}`, verdict: named };
  }
  if (verdict.allowed) {
    return { exitCode: 0, stdout: `${where}Spiderpool's agent and controller would start with this conf.yml\n`, stderr: warnings, verdict: named };
  }
  const missing = fromManifest && parsed.data.data?.['conf.yml'] === undefined ? `(found ${described(configMap)})\n` : '';
  const refusal = renderRefusals([
    { status: { ...verdict.status!, details: { ...verdict.status!.details!, causes } }, webhook: '', verb: 'creating', source: '' },
  ]);
  return { exitCode: 1, stdout: '', stderr: `${warnings}${refusal}${missing}`, verdict: named };
}

/**
 * `causes` sorted by where their field is in `confYml` (`data[conf.yml].a.b` is key `b` of
 * `a`), so they read in the order of the file; a cause whose field is not found keeps its place after them.
 */
function inFileOrder(causes: readonly StatusCause[], confYml: string | undefined): StatusCause[] {
  if (confYml === undefined || causes.length < 2) return [...causes];
  const document = parseDocument(confYml);
  const offset = (cause: StatusCause): number => {
    const keys = cause.field.startsWith(CONF_YML_PREFIX) ? cause.field.slice(CONF_YML_PREFIX.length).split('.') : [];
    const node = keys.length === 0 ? undefined : document.getIn(keys, true);
    return isNode(node) && node.range ? node.range[0] : Number.MAX_SAFE_INTEGER;
  };
  return causes
    .map((cause) => ({ cause, at: offset(cause) }))
    .sort((a, b) => a.at - b.at)
    .map(({ cause }) => cause);
}

const CONF_YML_PREFIX = 'data[conf.yml].';
