/**
 * The checks Spiderpool runs on `agent.networkResourcePlugin` at start, after defaults
 * (Spiderpool `pkg/networkresourceplugin/config.go` `ApplyDefaultsAndValidate`, and
 * `cmd/spiderpool-agent/cmd/config.go`): each failure stops the component.
 * Spiderpool's messages name the Helm values path; these name the conf.yml path.
 */
import { Path } from '../kubernetes/field-path.js';
import { ADVICE_VALUE_CHARS, escapeShort } from '../go/strconv-quote.js';
import { BAD_PATTERN, goMatch } from '../go/filepath-match.js';
import type { GoStruct, GoValue } from '../yaml-go/go-types.js';

/** One failed check: the field (rendered, relative to conf.yml), the value as written, why, and what to write instead. */
export interface StartProblem {
  field: string;
  badValue?: string;
  why: string;
  advice: string;
}

const PLUGIN = Path.of('agent', 'networkResourcePlugin');
/** `constant.DefaultENISlotResourceName`. */
const DEFAULT_SUB_ENI_RESOURCE = 'spidernet.io/sub-eni';
const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

const get = (v: GoValue | undefined, key: string): GoValue | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v[key] : undefined);
const list = (v: GoValue | undefined): GoValue[] => (Array.isArray(v) ? v : []);

/** `constant.DefaultIPAMUnixSocketPath`: where the agent listens when `ipamUnixSocketPath` is empty. */
const DEFAULT_SOCKET = '/var/run/spidernet/spiderpool.sock';
/** Bytes of Linux's `sockaddr_un.sun_path`, the terminating NUL of a named socket included. */
const SUN_PATH_BYTES = 108;

/**
 * The agent's own start-time check (the controller does not listen on it): it binds its
 * IPAM API to `ipamUnixSocketPath`, and Go's `syscall.SockaddrUnix` refuses a path of more
 * than 108 bytes, or of 108 unless abstract (`@…`), with EINVAL: the agent exits.
 */
export function agentSocketProblems(conf: GoStruct): StartProblem[] {
  const written = (conf['ipamUnixSocketPath'] as string | undefined) ?? '';
  const path = written || DEFAULT_SOCKET;
  const bytes = Buffer.byteLength(path);
  const abstract = path.startsWith('@') || path.startsWith('\0');
  if (bytes < SUN_PATH_BYTES || (bytes === SUN_PATH_BYTES && abstract)) return [];
  return [
    {
      field: Path.of('ipamUnixSocketPath').toString(),
      badValue: written,
      why:
        `is ${bytes} bytes, but a unix socket path must be shorter than ${SUN_PATH_BYTES} bytes ` +
        `(Linux's sun_path holds ${SUN_PATH_BYTES} bytes with the terminating NUL), so the agent's bind fails`,
      advice: `use a path of at most ${SUN_PATH_BYTES - 1} bytes, or leave it empty for ${DEFAULT_SOCKET}`,
    },
  ];
}

/** Every start-time check of `agent.networkResourcePlugin` that one decoder's reading of conf.yml fails. */
export function startProblems(conf: GoStruct): StartProblem[] {
  const plugin = get(get(conf, 'agent'), 'networkResourcePlugin');
  const problems: StartProblem[] = [];
  const root = (get(plugin, 'kubeletRootDir') as string | undefined) ?? '';
  // filepath.Clean keeps a relative path relative: IsAbs after Clean is "starts with /".
  if (root !== '' && !root.startsWith('/')) {
    problems.push({
      field: PLUGIN.child('kubeletRootDir').toString(),
      badValue: root,
      why: 'must be an absolute path',
      advice: `write it from the root, such as /${escapeShort(root.replace(/^(\.\/)+/, ''), ADVICE_VALUE_CHARS)}, or leave it empty for /var/lib/kubelet`,
    });
  }
  selectorProblem(get(get(plugin, 'devicePluginAffinity'), 'nodeSelector'), PLUGIN.child('devicePluginAffinity', 'nodeSelector'), problems);
  const advertisement = get(plugin, 'resourceAdvertisement');
  list(get(get(advertisement, 'subENI'), 'rules')).forEach((rule, i) => {
    const at = PLUGIN.child('resourceAdvertisement', 'subENI', 'rules').index(i);
    const name = (get(rule, 'resourceName') as string | undefined) || DEFAULT_SUB_ENI_RESOURCE;
    const nameErrors = qualifiedNameErrors(name);
    if (nameErrors.length > 0) {
      problems.push({
        field: at.child('resourceName').toString(),
        badValue: name,
        why: `is not a qualified name: ${nameErrors.join('; ')}`,
        advice: `write a name such as ${DEFAULT_SUB_ENI_RESOURCE} (the default when empty)`,
      });
    }
    countProblem(rule, at, problems);
    selectorProblem(get(rule, 'nodeSelector'), at.child('nodeSelector'), problems);
  });
  list(get(get(advertisement, 'masterNIC'), 'rules')).forEach((rule, i) => {
    const at = PLUGIN.child('resourceAdvertisement', 'masterNIC', 'rules').index(i);
    countProblem(rule, at, problems);
    selectorProblem(get(rule, 'nodeSelector'), at.child('nodeSelector'), problems);
    for (const key of ['includeInterfaces', 'excludeInterfaces']) {
      list(get(rule, key)).forEach((pattern, j) => {
        if (goMatch(pattern as string, 'eth0') !== BAD_PATTERN) return;
        problems.push({
          field: at.child(key).index(j).toString(),
          badValue: pattern as string,
          why: 'is not a valid interface pattern (Go filepath.Match: syntax error in pattern)',
          advice: 'close every [ with ], escape a literal [ * ? or \\ with \\, such as eth* or ens[0-9]',
        });
      });
    }
  });
  return problems;
}

function countProblem(rule: GoValue, at: Path, problems: StartProblem[]): void {
  const count = (get(rule, 'defaultMaxCount') as bigint | undefined) ?? 0n;
  if (count < 0n) {
    problems.push({
      field: at.child('defaultMaxCount').toString(),
      badValue: String(count),
      why: 'must be greater than or equal to 0',
      advice: 'write 0 or more (0 means the default)',
    });
  }
}

/**
 * `metav1.LabelSelectorAsSelector` (apimachinery pkg/apis/meta/v1/helpers.go) and the
 * `labels.NewRequirement` checks it runs: label keys and values, the four operators,
 * values present for In/NotIn and absent for Exists/DoesNotExist.
 */
function selectorProblem(selector: GoValue | undefined, field: Path, problems: StartProblem[]): void {
  const found: string[] = [];
  const labels = get(selector, 'matchlabels');
  if (labels !== null && typeof labels === 'object' && !Array.isArray(labels)) {
    for (const [key, value] of Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))) {
      found.push(...requirementErrors(`matchlabels[${key}]`, key, 'In', [value as string]));
    }
  }
  list(get(selector, 'matchexpressions')).forEach((expression, i) => {
    const operator = (get(expression, 'operator') as string | undefined) ?? '';
    const key = (get(expression, 'key') as string | undefined) ?? '';
    const values = list(get(expression, 'values')) as string[];
    if (!OPERATORS.has(operator)) found.push(`matchexpressions[${i}].operator: ${JSON.stringify(operator)} is not a valid label selector operator`);
    else found.push(...requirementErrors(`matchexpressions[${i}]`, key, operator, values));
  });
  if (found.length === 0) return;
  problems.push({
    field: field.toString(),
    why: `is not a valid label selector: ${found.join('; ')}`,
    advice: 'use label keys and values Kubernetes accepts and one of the operators In, NotIn (with values), Exists, DoesNotExist (without values)',
  });
}

/** `labels.NewRequirement`'s errors for one requirement (matchlabels entries are `In [value]`). */
function requirementErrors(at: string, key: string, operator: string, values: string[]): string[] {
  const errors = qualifiedNameErrors(key).map((e) => `${at} key ${JSON.stringify(key)}: ${e}`);
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) errors.push(`${at}: for 'in', 'notin' operators, values set can't be empty`);
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) errors.push(`${at}: values set must be empty for exists and does not exist`);
  for (const value of values) {
    if (!isLabelValue(value))
      errors.push(`${at} value ${JSON.stringify(value)}: not a valid label value (at most 63 of A-Z a-z 0-9 - _ ., alphanumeric at both ends, or empty)`);
  }
  return errors;
}

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `validation.IsQualifiedName` (apimachinery pkg/api/validate/content/kube.go `IsLabelKey`), in short words. */
function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) return ["a qualified name is a name with an optional DNS subdomain prefix and one '/' (e.g. 'example.com/MyName')"];
  const errors: string[] = [];
  const name = parts[parts.length - 1]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') errors.push('prefix part must be non-empty');
    else {
      if (Buffer.byteLength(prefix) > 253) errors.push('prefix part must be no more than 253 bytes');
      if (!DNS1123_SUBDOMAIN.test(prefix)) errors.push('prefix part must be a lowercase RFC 1123 subdomain (e.g. example.com)');
    }
  }
  if (name === '') errors.push('name part must be non-empty');
  else if (Buffer.byteLength(name) > 63) errors.push('name part must be no more than 63 bytes');
  if (!LABEL_NAME.test(name)) {
    errors.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errors;
}

function isLabelValue(value: string): boolean {
  return value === '' || (Buffer.byteLength(value) <= 63 && LABEL_NAME.test(value));
}
