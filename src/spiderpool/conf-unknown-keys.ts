/**
 * Warnings for keys Spiderpool's decoders skip without a word (both decode with plain,
 * non-strict `yaml.Unmarshal`): the setting the writer meant does not apply.
 */
import { closestName } from '../kubernetes/closest-name.js';
import type { FieldWarning } from '../kubernetes/field-errors.js';
import { escapeShort } from '../go/strconv-quote.js';
import { trimBlanksEnd } from '../yaml-go/libyaml-chars.js';
import type { GoStruct, StructType } from '../yaml-go/go-types.js';
import { LABEL_SELECTOR } from './conf-schema.js';

/** What Spiderpool's Helm chart writes into conf.yml although no struct field reads it. */
export const CHART_ONLY_KEY = 'clusterSubnetDefaultFlexibleIPNumber';
/** The key Spiderpool reads for what the chart meant (`pkg/types/k8s.go`, `SpiderpoolConfigmapConfig`). */
const READ_KEY = 'clusterSubnetAutoPoolDefaultRedundantIPNumber';

/**
 * Whether the chart-only key is worth a warning in `conf` (one decoder's reading): only
 * when something is to change: the SpiderSubnet feature, which sizes auto-created pools
 * with {@link READ_KEY}, is on and that key is unset (0). A chart-rendered file with the
 * feature off, or with the read key set, has nothing to change.
 */
export function chartOnlyKeyMatters(conf: GoStruct): boolean {
  return conf['enableSpiderSubnet'] === true && (conf[READ_KEY] === undefined || conf[READ_KEY] === 0n);
}
/** Longest key shown in a warning; a warning stays one line under 256 characters. */
const MAX_KEY_CHARS = 48;

/**
 * The warning for `key`, which `type` (the struct at `parent`) does not have.
 *
 * @returns a warning naming the field: "did you mean" a field that differs only in case or
 *   by at most two edits; for a field name followed by ":" (`{httpRequestTimeout:}`, a key
 *   "httpRequestTimeout:" for libyaml), that the ":" needs a space after it; for a camel-case label selector field, that Spiderpool reads the
 *   lower-case name and the selector then selects every node.
 */
export function unknownKeyWarning(key: string, parent: string, type: StructType): FieldWarning {
  // Controls in a key would break the one-line warning (or drive the terminal): escaped as Go quotes them.
  const shown = key === '' ? '""' : escapeShort(key, MAX_KEY_CHARS);
  const field = parent === '' ? shown : `${parent}.${shown}`;
  if (parent === '' && key === CHART_ONLY_KEY) {
    return {
      field,
      message: `is written by Spiderpool's Helm chart but read by neither the agent nor the controller: auto-created pools get ${READ_KEY} spare IPs (0 here); set that key`,
    };
  }
  const known = Object.keys(type.fields);
  const sameLetters = known.find((k) => k.toLowerCase() === key.toLowerCase());
  if (type === LABEL_SELECTOR && sameLetters !== undefined) {
    return {
      field,
      message: `is dropped: Spiderpool reads label selector fields in lower case (${sameLetters}), so this selector selects every node; write ${sameLetters}`,
    };
  }
  // Not a regular expression: `^(.*?)[ \t]*:$` backtracks quadratically over a long run of blanks.
  // Only libyaml's blanks: a NBSP before the ":" is part of the key.
  const meant = key.endsWith(':') ? trimBlanksEnd(key.slice(0, -1)) : undefined;
  if (meant !== undefined && known.includes(meant)) {
    return {
      field,
      message: `is not ${meant} for Go: a ":" right before "," "}" or "]" is part of the key, so the value is ignored; put a space after ":"`,
    };
  }
  const close = closestName(key, known);
  const hint = close !== undefined ? `; did you mean ${close}?` : '';
  return { field, message: `is not a key Spiderpool reads (keys are case-sensitive): it is ignored${hint}` };
}
