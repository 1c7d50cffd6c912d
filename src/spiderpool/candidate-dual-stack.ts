/**
 * `enableIPv6` of Spiderpool's conf.yml, which decides whether a paired IaaS pool is the
 * highest candidate category (categories.ts). Read through the one reading of conf.yml
 * (src/spiderpool/conf-yml.ts) as the agent reads it: the agent (gopkg.in/yaml.v3) is the one
 * that allocates a Pod's addresses. A bool field takes a plain YAML 1.1 bool word; an
 * absent, `null`, `~` or empty value is false; a quoted string or a number is a decode
 * error, and then the agent does not start at all.
 */
import { readConfYml } from './conf-yml.js';

/** `enableIPv6`, or why conf.yml gives no value for it (Spiderpool would not start either). */
export type EnableIPv6 = { ok: true; enableIPv6: boolean } | { ok: false; reason: string };

/** Reads `enableIPv6` from the text of conf.yml (first document only) as Spiderpool's agent does. */
export function enableIPv6Of(confYml: string): EnableIPv6 {
  const reading = readConfYml(confYml);
  if (reading.agent !== undefined) return { ok: true, enableIPv6: reading.agent['enableIPv6'] === true };
  const own = !reading.ok && reading.errors.some((error) => error.field === 'enableIPv6');
  return { ok: false, reason: own ? 'enableIPv6 in conf.yml is not true or false' : "conf.yml would stop Spiderpool's agent" };
}
