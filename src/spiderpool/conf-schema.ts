/**
 * Every key Spiderpool reads from `conf.yml`, with the Go type it decodes into: the one
 * statement of the file's shape (Spiderpool
 * `pkg/types/k8s.go` `SpiderpoolConfigmapConfig`; the provider's `service`/`tls` shape is
 * Spiderpool PR #5778). `conf-yml.ts` decodes a document by walking this table.
 *
 * Struct fields are matched by their yaml tag, case-sensitively, as both Go decoders do.
 * Kubernetes' `metav1.LabelSelector` has json tags only, so both decoders read its
 * fields by their lower-cased Go names (`matchlabels`, `matchexpressions`).
 */
import type { GoType, StructType } from '../yaml-go/go-types.js';

const BOOL: GoType = { go: 'bool' };
const INT: GoType = { go: 'int' };
const STRING: GoType = { go: 'string' };
const STRINGS: GoType = { go: 'slice', name: '[]string', of: STRING };

const struct = (name: string, fields: Record<string, GoType>): StructType => ({ go: 'struct', name, fields });

/** `metav1.LabelSelector`, read through its lower-cased Go field names. */
export const LABEL_SELECTOR: StructType = struct('v1.LabelSelector', {
  matchlabels: { go: 'map', name: 'map[string]string' },
  matchexpressions: {
    go: 'slice',
    name: '[]v1.LabelSelectorRequirement',
    of: struct('v1.LabelSelectorRequirement', {
      key: STRING,
      operator: { go: 'string', name: 'v1.LabelSelectorOperator' },
      values: STRINGS,
    }),
  },
});

const rules = (name: string, fields: Record<string, GoType>): GoType => ({ go: 'slice', name: `[]types.${name}`, of: struct(`types.${name}`, fields) });

/** `SpiderpoolConfigmapConfig`: the whole of `conf.yml`. */
export const CONF_YML: StructType = struct('types.SpiderpoolConfigmapConfig', {
  ipamUnixSocketPath: STRING,
  enableIPv4: BOOL,
  enableIPv6: BOOL,
  tuneSysctlConfig: BOOL,
  enableStatefulSet: BOOL,
  enableKubevirtStaticIP: BOOL,
  enableSpiderSubnet: BOOL,
  enableAutoPoolForApplication: BOOL,
  clusterSubnetAutoPoolDefaultRedundantIPNumber: INT,
  enableCleanOutdatedEndpoint: BOOL,
  enableIPConflictDetection: BOOL,
  enableGatewayDetection: BOOL,
  enableValidatingResourcesDeletedWebhook: BOOL,
  podResourceInject: struct('types.PodResourceInjectConfig', {
    enabled: BOOL,
    namespacesExclude: STRINGS,
    namespacesInclude: STRINGS,
  }),
  // A plain struct, not a pointer (`IaaSProviderConfig`): a `!!null` mapping still decodes into it.
  iaasNetworkProvider: struct('types.IaaSProviderConfig', {
    serverUrl: STRING,
    httpRequestTimeout: STRING,
    service: struct('types.IaaSNetworkProviderService', { name: STRING, namespace: STRING, port: INT }),
    tls: struct('types.IaaSNetworkProviderTLS', { caFile: STRING }),
    excludeReportNics: STRINGS,
  }),
  agent: struct('types.AgentConfig', {
    networkResourcePlugin: struct('types.NetworkResourcePluginConfig', {
      enabled: BOOL,
      kubeletRootDir: STRING,
      devicePluginAffinity: struct('types.DevicePluginAffinityConfig', { nodeSelector: LABEL_SELECTOR }),
      resourceAdvertisement: struct('types.ResourceAdvertisementConfig', {
        subENI: struct('types.SubENIAdvertisementConfig', {
          rules: rules('SubENIRuleConfig', { resourceName: STRING, defaultMaxCount: INT, nodeSelector: LABEL_SELECTOR }),
        }),
        masterNIC: struct('types.MasterNICAdvertisementConfig', {
          rules: rules('MasterNICRuleConfig', {
            nodeSelector: LABEL_SELECTOR,
            defaultMaxCount: INT,
            includeInterfaces: STRINGS,
            excludeInterfaces: STRINGS,
          }),
        }),
      }),
    }),
  }),
});
