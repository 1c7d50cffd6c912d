/**
 * Spiderpool's reading of `conf.yml` (main @ a7fbd3b, `LoadConfigmap` of both daemons):
 * the agent decodes it with `gopkg.in/yaml.v3`, the controller with `gopkg.in/yaml.v2`
 * (conf-decode.ts), into `SpiderpoolConfigmapConfig` (conf-schema.ts); each exits when its decoder
 * refuses the file. Only the first document is read, an empty file starts with every
 * default, and a setting the two decoders read differently starts each component with
 * its own value (a warning).
 */
import type { FieldError, FieldWarning } from '../kubernetes/field-errors.js';
import { quoteShort } from '../go/strconv-quote.js';
import type { Stops } from './conf-components.js';
import { decodeGoYaml } from './conf-decode.js';
import { joinField, type GoStruct, type GoValue } from '../yaml-go/go-types.js';
import { largeTextWarning } from '../yaml-go/yaml-go-compat.js';
import { CONF_YML } from './conf-schema.js';

/** The provider settings as Spiderpool decodes them: "" (0 for the port) when absent or null. */
export interface ProviderSettings {
  serverUrl: string;
  httpRequestTimeout: string;
  /** PR #5778's shape; absent is the same as all empty. */
  service?: { name: string; namespace: string; port: bigint };
}

/**
 * The reading: `ok` when both decoders decode the document, then `provider` is what both
 * read; otherwise `errors` say why and `stops` which component fails. `agent` and
 * `controller` hold each decoder's whole reading, when it decodes.
 */
export type ConfYmlReading = {
  warnings: FieldWarning[];
  agent?: GoStruct;
  controller?: GoStruct;
} & ({ ok: true; provider: ProviderSettings } | { ok: false; errors: FieldError[]; stops: Stops });

const PROVIDER_KEY = 'iaasNetworkProvider';

/**
 * Reads `conf.yml` text as both components do. Field paths in errors and warnings are
 * relative to the document. Never throws for any input text.
 */
export function readConfYml(text: string): ConfYmlReading {
  const decoding = decodeGoYaml(text, CONF_YML);
  const { warnings, agent, controller } = decoding;
  const large = largeTextWarning(text.length);
  if (large !== undefined) warnings.set('#large', { field: '', message: large });
  if (decoding.more) {
    const line = decoding.dedentLine;
    warnings.set('#documents', {
      field: '',
      message:
        line === undefined
          ? 'holds more than one YAML document (---): Spiderpool reads only the first and ignores the rest; put every setting in the first'
          : decoding.flowRoot
            ? `line ${line}: Spiderpool ignores everything after the { } or [ ] ending on line ${line}: for Go's decoders it is the whole first YAML document; put every setting inside it`
            : `line ${line}: Spiderpool ignores everything from line ${line} on: the first top-level key or item is indented more than line ${line}, which ends the first YAML document for Go's decoders; indent all top-level keys alike`,
    });
  }
  if (decoding.empty) warnings.set('#empty', { field: '', message: 'is empty: Spiderpool starts with every setting at its default' });
  if (agent === undefined || controller === undefined) {
    const readings = { ...(agent ? { agent } : {}), ...(controller ? { controller } : {}) };
    return { ok: false, errors: decoding.errors, stops: decoding.stops, warnings: [...warnings.values()], ...readings };
  }
  return decoded(agent, controller, warnings);
}

/**
 * Both decoders' readings. Where they read a setting differently (the two apply merge keys
 * in different orders; yaml.v2 reads `! null` as "null", yaml.v3 as "") each component
 * starts with its own value, so the difference is a warning naming both; the checks after
 * decoding run on each reading (validate.ts).
 */
function decoded(agent: GoStruct, controller: GoStruct, warnings: Map<string, FieldWarning>): ConfYmlReading {
  for (const warning of readingDifferences(agent, controller, '', [])) warnings.set(`#differs ${warning.field}`, warning);
  return { ok: true, provider: providerSettings(agent), warnings: [...warnings.values()], agent, controller };
}

/** Differences named at most, one warning each. */
const MAX_DIFFERENCES_NAMED = 8;
/** Characters of each value a difference warning shows. */
const DIFFERENCE_VALUE_CHARS = 40;

/** One warning per field whose value the two readings differ in (a list or mapping as a whole). */
function readingDifferences(agent: GoValue, controller: GoValue, field: string, out: FieldWarning[]): FieldWarning[] {
  if (out.length >= MAX_DIFFERENCES_NAMED || sameValue(agent, controller)) return out;
  const struct = (v: GoValue): v is GoStruct => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (struct(agent) && struct(controller) && field.split('.').length < 8 && !field.endsWith(']')) {
    for (const key of new Set([...Object.keys(agent), ...Object.keys(controller)])) {
      readingDifferences(agent[key] ?? null, controller[key] ?? null, joinField(field, key), out);
    }
    return out;
  }
  const shown = (v: GoValue) => quoteShort(goValueText(v), DIFFERENCE_VALUE_CHARS);
  out.push({
    field,
    message:
      `the agent (gopkg.in/yaml.v3) reads ${shown(agent)}, the controller (gopkg.in/yaml.v2) ${shown(controller)}: ` +
      'both start, each with its own value; write it once, outside merge keys (<<), without the "!" tag',
  });
  return out;
}

function sameValue(a: GoValue, b: GoValue): boolean {
  return goValueText(a) === goValueText(b);
}

/** A decoded value as text: strings as they are, the rest as JSON (numbers from bigint). */
function goValueText(v: GoValue): string {
  return typeof v === 'string' ? v : (JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)) ?? 'null');
}

/** The provider settings of one decoder's reading. */
export function providerSettings(conf: GoStruct): ProviderSettings {
  const p = conf[PROVIDER_KEY] as GoStruct | null;
  const service = (p?.['service'] ?? null) as GoStruct | null;
  return {
    serverUrl: (p?.['serverUrl'] as string | undefined) ?? '',
    httpRequestTimeout: (p?.['httpRequestTimeout'] as string | undefined) ?? '',
    service: {
      name: (service?.['name'] as string | undefined) ?? '',
      namespace: (service?.['namespace'] as string | undefined) ?? '',
      port: (service?.['port'] as bigint | undefined) ?? 0n,
    },
  };
}
