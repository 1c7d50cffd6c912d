/**
 * `enableIPv6` of Spiderpool's conf.yml, which decides whether a paired IaaS pool is the
 * highest candidate category (categories.ts). Both Go decoders (yaml.v3 in the agent, yaml.v2
 * in the controller, `/work/shared/spiderpool/conf-yml-schema.md`) read a bool field from a
 * plain YAML 1.1 bool word (`true`, `yes`, `on`, `y`, … in any of their cases), and an absent,
 * `null`, `~` or empty value as false; a quoted string or a number is a decode error.
 *
 * Kept to this one key until the whole-file reading of src/config/conf-yml.ts (issue #10)
 * exposes it; then this function is to read it from there.
 */
import { isMap, isScalar, parseAllDocuments } from 'yaml';

/** `enableIPv6`, or why conf.yml gives no value for it (Spiderpool would not start either). */
export type EnableIPv6 = { ok: true; enableIPv6: boolean } | { ok: false; reason: string };

/**
 * Reads `enableIPv6` from the text of conf.yml as both Go decoders do (first document only).
 */
export function enableIPv6Of(confYml: string): EnableIPv6 {
  const documents = parseAllDocuments(confYml, { version: '1.1', uniqueKeys: true });
  const first = Array.isArray(documents) ? documents[0] : undefined;
  if (first === undefined || first.contents === null) return { ok: true, enableIPv6: false };
  if (first.errors.length > 0) return { ok: false, reason: 'conf.yml is not valid YAML' };
  if (!isMap(first.contents)) return { ok: false, reason: 'conf.yml is not a YAML mapping' };
  const node = first.contents.get('enableIPv6', true);
  if (node === undefined) return { ok: true, enableIPv6: false };
  if (!isScalar(node)) return { ok: false, reason: 'enableIPv6 in conf.yml is not true or false' };
  if (node.value === null) return { ok: true, enableIPv6: false };
  if (typeof node.value === 'boolean' && node.type !== 'QUOTE_DOUBLE' && node.type !== 'QUOTE_SINGLE') return { ok: true, enableIPv6: node.value };
  return { ok: false, reason: 'enableIPv6 in conf.yml is not true or false' };
}
