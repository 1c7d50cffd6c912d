import { parseAllDocuments } from 'yaml';
import { ConfigMapSchema, validateSpiderpoolConfigMap } from '../rules/configmap.js';
import type { CommandResult } from './review-file.js';

/**
 * `validate-config`: checks a `conf.yml`, or a manifest holding Spiderpool's ConfigMap, with
 * the same rule and the same message as the webhook (as if the ConfigMap were applied).
 *
 * A text with a document of `kind: ConfigMap` is a manifest: the ConfigMap named
 * `configMapName` is checked. Any other text is taken as `conf.yml` itself.
 *
 * @returns exit code 0 when Spiderpool would start (warnings on stderr as kubectl prints
 *   them), 1 with the webhook's message on stderr when it would not, 2 when a manifest has
 *   no such ConfigMap.
 */
export function validateConfigText(text: string, configMapName: string): CommandResult {
  const configMaps = parseAllDocuments(text)
    .map(toPlainObject)
    .filter((obj) => (obj as { kind?: unknown } | null)?.kind === 'ConfigMap');
  let configMap: unknown;
  if (configMaps.length === 0) {
    configMap = { metadata: { name: configMapName }, data: { 'conf.yml': text } };
  } else {
    configMap = configMaps.find((cm) => (cm as { metadata?: { name?: unknown } }).metadata?.name === configMapName);
    if (configMap === undefined) {
      return { exitCode: 2, stdout: '', stderr: `error: the manifest has no ConfigMap named ${JSON.stringify(configMapName)}\n` };
    }
  }
  const parsed = ConfigMapSchema.safeParse(configMap);
  if (!parsed.success) {
    return { exitCode: 2, stdout: '', stderr: `error: not a ConfigMap: ${parsed.error.issues[0]!.message}\n` };
  }
  const verdict = validateSpiderpoolConfigMap(parsed.data, configMapName);
  const warnings = (verdict.warnings ?? []).map((w) => `Warning: ${w}\n`).join('');
  return verdict.allowed
    ? { exitCode: 0, stdout: `ConfigMap ${JSON.stringify(configMapName)}: conf.yml is valid\n`, stderr: warnings }
    : { exitCode: 1, stdout: '', stderr: `${warnings}${verdict.status!.message}\n` };
}

/** A manifest document as plain data; `undefined` for one that does not parse or resolve. */
function toPlainObject(doc: ReturnType<typeof parseAllDocuments>[number]): unknown {
  if (doc.errors.length > 0) return undefined;
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch {
    return undefined; // e.g. an unresolved alias: then it is no usable ConfigMap either
  }
}
