/**
 * Spiderpool's ConfigMap (default `spiderpool-conf`): its `conf.yml` must let Spiderpool's
 * agent and controller start (design document, "校验规则" / validation rules: a bad
 * `iaasNetworkProvider.httpRequestTimeout` is fatal). Other ConfigMaps are allowed untouched.
 */
import { z } from 'zod';
import { validateConfYml } from '../spiderpool/conf-validate.js';
import { CONF_YML_KEY, DEFAULT_CONFIGMAP_NAME } from '../defaults.js';
import { fieldWarningString, required, underField, type FieldError } from '../kubernetes/field-errors.js';
import { Path } from '../kubernetes/field-path.js';
import { stringEntries } from '../kubernetes/containers.js';
import type { GroupKind } from '../kubernetes/resources.js';
import type { AdmissionRequest } from '../kubernetes/schema.js';
import { CONFIGMAP_RULES } from './rule-names.js';
import { warningsOnly, type Findings, type Validator } from '../admission/contract.js';

/** The core-group ConfigMap kind. */
export const CONFIGMAP: GroupKind = { group: '', kind: 'ConfigMap' };

/** The ConfigMap fields the rule reads: name, namespace and string `data`. */
export const ConfigMapSchema = z.object({
  metadata: z.object({
    name: z.string().optional(),
    namespace: z.string().optional(),
  }),
  data: stringEntries([CONF_YML_KEY]).nullish(),
});
export type ConfigMap = z.infer<typeof ConfigMapSchema>;

/** Which ConfigMap is Spiderpool's: its name, and its namespace when one is given. */
export interface SpiderpoolConfigMapRef {
  name: string;
  /** Any namespace when absent. */
  namespace?: string;
}

const CONF_YML_FIELD = Path.of('data').key(CONF_YML_KEY).toString();

/** The ConfigMap's one rule (src/rules/rule-names.ts). */
const CONF_YML_RULE = 'conf-yml' satisfies (typeof CONFIGMAP_RULES)[number];

/**
 * Validates a ConfigMap as Spiderpool would read it at start-up.
 *
 * @returns allowed (with warnings for settings that are ignored now but would fail once the
 *   IaaS provider is enabled), or denied with a 422 `Invalid` status whose causes name
 *   fields such as `data[conf.yml].iaasNetworkProvider.httpRequestTimeout`.
 */
export function validateSpiderpoolConfigMap(configMap: ConfigMap): Findings {
  const confYml = configMap.data?.[CONF_YML_KEY];
  if (confYml === undefined) {
    const missing = required(CONF_YML_FIELD, "Spiderpool's agent and controller read their configuration from this key and refuse to start without it");
    return { errors: [missing], warnings: [], errorRules: [CONF_YML_RULE] };
  }
  const findings = validateConfYml(confYml);
  const errors: FieldError[] = underField(CONF_YML_FIELD, findings.errors);
  const warnings = underField(CONF_YML_FIELD, findings.warnings).map(fieldWarningString);
  return { errors, warnings, errorRules: errors.map(() => CONF_YML_RULE) };
}

/** The ConfigMap validator for the Spiderpool ConfigMap `ref` names (CREATE and UPDATE). */
export function configMapValidator(ref: SpiderpoolConfigMapRef = { name: DEFAULT_CONFIGMAP_NAME }): Validator<ConfigMap> {
  const check = (configMap: ConfigMap, request: AdmissionRequest): Findings => {
    const name = configMap.metadata.name ?? request.name ?? '';
    const namespace = configMap.metadata.namespace ?? request.namespace;
    if (name !== ref.name || (ref.namespace !== undefined && namespace !== ref.namespace)) return warningsOnly();
    return validateSpiderpoolConfigMap(configMap);
  };
  return {
    groupKind: CONFIGMAP,
    schema: ConfigMapSchema,
    rules: CONFIGMAP_RULES,
    validateCreate: check,
    validateUpdate: (_oldConfigMap, configMap, request) => check(configMap, request),
  };
}
