import { isMap, parseAllDocuments } from 'yaml';
import { firstIssue } from '../kubernetes/field-issue.js';
import { escapeUnprintable, truncate } from '../go/strconv-quote.js';
import { nameOf } from '../kubernetes/metadata.js';
import { documentData, listItems } from '../kubernetes/manifests.js';
import { verdictFor } from '../admission/validator.js';
import { CONFIGMAP, ConfigMapSchema, validateSpiderpoolConfigMap } from '../rules/configmap.js';
import { renderWarnings } from './kubectl-output.js';
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
 *   or has no such ConfigMap.
 */
export function validateConfigText(text: string, configMapName: string): CommandResult {
  const documents = parseAllDocuments(text);
  if (documents.every((doc) => doc.contents === null && doc.errors.length === 0)) {
    return usageError(`the input is empty (no YAML document${text === '' ? '' : ', only blanks or comments'}); give conf.yml, or a manifest with Spiderpool's ConfigMap ${JSON.stringify(configMapName)}`);
  }
  if (!documents.some(isManifestDocument)) {
    return check({ metadata: { name: configMapName }, data: { 'conf.yml': text } }, configMapName, new Set());
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
    const found = allConfigMaps.length === 0 ? `found ${objects.length === 1 ? 'one object' : `${objects.length} objects`} and no ConfigMap` : `found ${allConfigMaps.map(described).join(', ')}`;
    return usageError(`the manifest has no ConfigMap named ${JSON.stringify(configMapName)} (${found}); pass --configmap-name to check one of another name`);
  }
  const seen = new Set<string>();
  const results = configMaps.map((configMap) => check(configMap, configMapName, seen, true));
  return {
    exitCode: results.reduce<number>((worst, r) => Math.max(worst, r.exitCode), 0) as CommandResult['exitCode'],
    stdout: results.map((r) => r.stdout).join(''),
    stderr: results.map((r) => r.stderr).join(''),
  };
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

/**
 * The webhook's decision on one ConfigMap, as the command prints it: on success exactly
 * what was checked; for a manifest's ConfigMap without conf.yml, the data keys it has.
 * Warnings print as kubectl prints them, once each across the run (`seen`).
 */
function check(configMap: unknown, configMapName: string, seen: Set<string>, fromManifest = false): CommandResult {
  const parsed = ConfigMapSchema.safeParse(configMap);
  if (!parsed.success) {
    return usageError(`not a ConfigMap: ${firstIssue(parsed.error)}`);
  }
  const verdict = verdictFor(CONFIGMAP, configMapName, validateSpiderpoolConfigMap(parsed.data));
  const warnings = renderWarnings(verdict.warnings, seen);
  const where = fromManifest ? `ConfigMap ${JSON.stringify(configMapName)}: ` : '';
  if (verdict.allowed) {
    return { exitCode: 0, stdout: `${where}Spiderpool's agent and controller would start with this conf.yml\n`, stderr: warnings };
  }
  const missing = fromManifest && parsed.data.data?.['conf.yml'] === undefined ? `(found ${described(configMap)})\n` : '';
  return { exitCode: 1, stdout: '', stderr: `${warnings}${verdict.status!.message}\n${missing}` };
}
