/**
 * Checks that rendered `deploy/` manifests agree with `src/defaults.ts` and with each
 * other: the port the server listens on, the Service the webhooks call, the ConfigMap
 * they guard against the server's flags, the probes, the certificates, RBAC against what
 * the server calls, and the pod hardening. The webhooks' own rules are generated from
 * WEBHOOKS (scripts/generate/webhook-configuration.ts, test/generate/).
 *
 * Pure: takes the rendered objects (plain JS, as parsed from `kubectl kustomize`
 * output) and returns human-readable problems; an empty list means consistent.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { DEFAULT_CONFIGMAP_NAME, DEFAULT_NAMESPACE, DEFAULT_PORT, DEFAULT_SERVICE_NAME, WEBHOOKS } from '../../src/defaults.js';
import { forSpiderpoolConf, WEBHOOK_MANIFEST_PATH, WebhookManifestSchema, webhookConfigurationFor } from '../../src/registration/webhook-configuration.js';

export interface ConsistencyOptions {
  /** Namespace the webhook is installed in. */
  namespace?: string;
  /** Service the webhooks' clientConfig points at. */
  serviceName?: string;
  /** Spiderpool's ConfigMap: the matchCondition and `--configmap-name` must name it. */
  configMapName?: string;
  /** Spiderpool's namespace: the ConfigMap webhook's namespaceSelector must include it. */
  spiderpoolNamespace?: string;
  /**
   * Where the serving certificate comes from: `generated` (default), a TLS Secret among
   * the manifests whose ca.crt is every caBundle (deploy/); `cert-manager`, a Certificate
   * writing the mounted Secret (overlays/cert-manager).
   */
  certificates?: 'generated' | 'cert-manager';
  /**
   * The ValidatingWebhookConfiguration the pods write (`serve --manage-webhook-configuration`);
   * by default {@link webhookConfigurationOfPods} of the objects. Tests pass a changed one.
   */
  podsWrite?: Obj;
  /**
   * The CIDRs the NetworkPolicy admits the webhook port from (the network-policy-api-server
   * component with its CIDRs set); by default the port is admitted from anywhere.
   */
  apiServerCIDRs?: readonly string[];
}

/** The annotation by which cert-manager's cainjector would own caBundle: `<namespace>/<Certificate name>`. */
export const INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

/** The annotation that keeps AKS's admissions enforcer from rewriting a webhook's namespaceSelector (Azure/AKS#1771). */
export const AKS_ENFORCER_DISABLED = 'admissions.enforcer/disabled';

/** Service port the API server calls; the Service maps it to DEFAULT_PORT. */
export const WEBHOOK_SERVICE_PORT = 443;
export const SPIDERPOOL_GROUP = 'spiderpool.spidernet.io';
export const TLS_SECRET_KEYS = ['tls.crt', 'tls.key', 'ca.crt'] as const;

type Obj = Record<string, unknown>;

/** Every `--name=value` / `--name value` of an argument list, in order. */
function flagValues(args: readonly unknown[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === `--${name}`) values.push(String(args[i + 1]));
    else if (typeof a === 'string' && a.startsWith(`--${name}=`)) values.push(a.slice(name.length + 3));
  }
  return values;
}

/**
 * The configuration the pods write (src/cli/lifecycle.ts, the same functions): the shipped
 * manifest named by `--manage-webhook-configuration`, matching `--configmap-name` in
 * `--configmap-namespace`, calling `--service` in the Deployment's namespace, with the
 * `--webhook-configuration-annotation`s. Its caBundle is the pods' at run time (left empty).
 *
 * @returns `undefined` when the Deployment does not have the flag.
 */
export function webhookConfigurationOfPods(objects: readonly unknown[]): Obj | undefined {
  const deployment = objects.filter(isObj).find((o) => o['kind'] === 'Deployment');
  const args = arr(obj(arr(at(deployment, 'spec.template.spec.containers'))[0])?.['args']);
  const name = flagValue(args, 'manage-webhook-configuration');
  if (name === undefined) return undefined;
  const shipped = WebhookManifestSchema.parse(parse(readFileSync(WEBHOOK_MANIFEST_PATH, 'utf8')));
  const conf = { name: flagValue(args, 'configmap-name') ?? DEFAULT_CONFIGMAP_NAME, namespace: flagValue(args, 'configmap-namespace') ?? 'kube-system' };
  const moved = forSpiderpoolConf(shipped, WEBHOOKS.configMap.path, conf);
  const annotations = Object.fromEntries(
    flagValues(args, 'webhook-configuration-annotation').map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
  const target = { service: { name: flagValue(args, 'service') ?? DEFAULT_SERVICE_NAME, namespace: namespaceOf(deployment!) } };
  const written = webhookConfigurationFor(
    { ...moved, metadata: { ...moved.metadata, name, annotations: { ...(moved.metadata['annotations'] as object | undefined), ...annotations } } },
    target,
    '',
  );
  return structuredClone(written) as Obj;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown): Obj | undefined {
  return isObj(v) ? v : undefined;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `a.b.c` lookup through plain objects; undefined as soon as a step is missing. */
function at(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const key of path.split('.')) {
    const o = obj(cur);
    if (o === undefined) return undefined;
    cur = o[key];
  }
  return cur;
}

function nameOf(o: Obj): string {
  return str(at(o, 'metadata.name')) ?? '<unnamed>';
}

function namespaceOf(o: Obj): string | undefined {
  return str(at(o, 'metadata.namespace'));
}

function show(v: unknown): string {
  return v === undefined ? 'nothing' : JSON.stringify(v);
}

function sameSet(actual: unknown, expected: readonly string[]): boolean {
  const a = arr(actual);
  return a.length === expected.length && a.every((x) => typeof x === 'string' && expected.includes(x)) && new Set(a).size === a.length;
}

/** Every key/value of `selector` is present in `labels` (a non-empty selector). */
function selects(selector: unknown, labels: unknown): boolean {
  const sel = obj(selector);
  const lab = obj(labels) ?? {};
  if (sel === undefined || Object.keys(sel).length === 0) return false;
  return Object.entries(sel).every(([k, v]) => lab[k] === v);
}

/** `--name=value` or `--name value` from an argument list. */
function flagValue(args: readonly unknown[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === `--${name}`) return str(args[i + 1]);
    if (typeof a === 'string' && a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

/** A probe or Service targetPort (number or port name) as a number, via the container. */
function resolvePort(port: unknown, container: Obj): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string') {
    if (/^\d+$/.test(port)) return Number(port);
    for (const p of arr(container['ports'])) {
      if (obj(p)?.['name'] === port) {
        const n = obj(p)?.['containerPort'];
        return typeof n === 'number' ? n : undefined;
      }
    }
  }
  return undefined;
}

/**
 * kustomize's secretGenerator wraps base64 at 70 characters (a YAML literal block), and
 * the replacement copies that text into caBundle. The API server decodes both with Go's
 * encoding/base64, which ignores \r and \n, so line breaks are not a problem here.
 */
function unwrapBase64(s: string): string {
  return s.replace(/[\r\n]/g, '');
}

function decodeBase64(s: string): string | undefined {
  const flat = unwrapBase64(s);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(flat) || flat.length % 4 !== 0) return undefined;
  return Buffer.from(flat, 'base64').toString('utf8');
}

/** Returns problems, each naming the object and field; `[]` when all agree. */
export function checkManifests(objects: readonly unknown[], options: ConsistencyOptions = {}): string[] {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const serviceName = options.serviceName ?? DEFAULT_SERVICE_NAME;
  const configMapName = options.configMapName ?? DEFAULT_CONFIGMAP_NAME;
  const spiderpoolNamespace = options.spiderpoolNamespace ?? 'kube-system';

  const problems: string[] = [];
  const all = objects.filter(isObj);
  const ofKind = (kind: string): Obj[] => all.filter((o) => o['kind'] === kind);

  // --- Namespace ---------------------------------------------------------------------
  const ownNamespace = ofKind('Namespace').find((n) => nameOf(n) === namespace);
  if (ownNamespace === undefined) {
    problems.push(`Namespace "${namespace}" is missing`);
  } else if (obj(at(ownNamespace, 'metadata.labels'))?.['pod-security.kubernetes.io/enforce'] !== 'restricted') {
    problems.push(`Namespace "${namespace}": pod-security.kubernetes.io/enforce is not "restricted", though the pods meet it`);
  }
  // As the chart refuses them (templates/base.yaml): the Secret it keeps and its pods' Pod Security level need a namespace of their own.
  if (namespace === 'kube-system' || namespace === spiderpoolNamespace) {
    problems.push(`installs into namespace "${namespace}", which is kube-system or Spiderpool's: install into a namespace of its own`);
  }

  // --- Deployment and its container ----------------------------------------------------
  const deployments = ofKind('Deployment');
  const deployment = deployments[0];
  if (deployments.length !== 1 || deployment === undefined) {
    problems.push(`expected exactly one Deployment, found ${deployments.length}`);
  }
  const podSpec = obj(at(deployment, 'spec.template.spec'));
  const podLabels = at(deployment, 'spec.template.metadata.labels');
  const containers = arr(podSpec?.['containers']).filter(isObj);
  const container = containers[0];
  const dep = deployment === undefined ? 'Deployment' : `Deployment "${nameOf(deployment)}"`;

  if (deployment !== undefined) {
    if (namespaceOf(deployment) !== namespace) {
      problems.push(`${dep}: namespace is ${show(namespaceOf(deployment))}, expected "${namespace}"`);
    }
    const replicas = at(deployment, 'spec.replicas');
    if (typeof replicas !== 'number' || replicas < 2) {
      problems.push(`${dep}: spec.replicas is ${show(replicas)}; failurePolicy Fail needs at least 2`);
    }
    if (!selects(at(deployment, 'spec.selector.matchLabels'), podLabels)) {
      problems.push(`${dep}: spec.selector.matchLabels does not select the pod template's labels`);
    }
    if (containers.length !== 1 || container === undefined) {
      problems.push(`${dep}: expected exactly one container, found ${containers.length}`);
    }
  }

  let tlsSecret: Obj | undefined;
  /** With cert-manager: the Certificate that writes the mounted Secret. */
  let certificate: Obj | undefined;
  const certManager = options.certificates === 'cert-manager';
  if (container !== undefined && podSpec !== undefined) {
    const c = `${dep} container "${str(container['name']) ?? '?'}"`;
    const args = arr(container['args']);
    const envPort = arr(container['env'])
      .map(obj)
      .find((e) => e?.['name'] === 'PORT')?.['value'];
    // The port the server listens on: --port, else env PORT, else DEFAULT_PORT.
    const portText = flagValue(args, 'port') ?? str(envPort);
    const listenPort = portText === undefined ? DEFAULT_PORT : Number(portText);
    if (listenPort !== DEFAULT_PORT) {
      problems.push(`${c}: the server listens on ${show(portText)} (--port/PORT), expected ${DEFAULT_PORT} (DEFAULT_PORT)`);
    }
    if (args[0] !== 'serve') {
      problems.push(`${c}: args must start with the "serve" command, got ${show(args[0])}`);
    }
    if (!args.includes('--no-generate-certs') && flagValue(args, 'tls-secret') === undefined) {
      problems.push(`${c}: args lack --tls-secret or --no-generate-certs; in the cluster the certificates come from a Secret`);
    }
    const cmNamespace = flagValue(args, 'configmap-namespace') ?? 'kube-system';
    if (cmNamespace !== spiderpoolNamespace) {
      problems.push(
        `${c}: --configmap-namespace is "${cmNamespace}", expected "${spiderpoolNamespace}" (where the ConfigMap webhook and the conf-reader Role are)`,
      );
    }
    const cmName = flagValue(args, 'configmap-name') ?? DEFAULT_CONFIGMAP_NAME;
    if (cmName !== configMapName) {
      problems.push(`${c}: --configmap-name is "${cmName}", expected "${configMapName}"`);
    }

    const containerPorts = arr(container['ports']).map((p) => obj(p)?.['containerPort']);
    if (!containerPorts.includes(DEFAULT_PORT)) {
      problems.push(`${c}: no containerPort ${DEFAULT_PORT}; ports are ${show(containerPorts)}`);
    }

    for (const [probeName, path] of [
      ['readinessProbe', '/readyz'],
      ['livenessProbe', '/healthz'],
    ] as const) {
      const get = obj(at(container, `${probeName}.httpGet`));
      if (get === undefined) {
        problems.push(`${c}: ${probeName}.httpGet is missing`);
        continue;
      }
      if (get['scheme'] !== 'HTTPS') {
        problems.push(`${c}: ${probeName} scheme is ${show(get['scheme'])}, expected "HTTPS" (the server serves HTTPS only)`);
      }
      if (get['path'] !== path) {
        problems.push(`${c}: ${probeName} path is ${show(get['path'])}, expected "${path}"`);
      }
      const port = resolvePort(get['port'], container);
      if (port !== DEFAULT_PORT) {
        problems.push(`${c}: ${probeName} port is ${show(get['port'])}, expected ${DEFAULT_PORT}`);
      }
    }

    // Hardening: a container field overrides the pod's.
    const podSc = obj(podSpec['securityContext']) ?? {};
    const sc = obj(container['securityContext']) ?? {};
    const effective = (key: string): unknown => (sc[key] !== undefined ? sc[key] : podSc[key]);
    if (effective('runAsNonRoot') !== true) problems.push(`${c}: runAsNonRoot is not true`);
    const uid = effective('runAsUser');
    if (typeof uid !== 'number' || uid <= 0) {
      problems.push(`${c}: runAsUser is ${show(uid)}, expected a fixed non-zero uid matching the image's USER`);
    }
    if (sc['readOnlyRootFilesystem'] !== true) problems.push(`${c}: readOnlyRootFilesystem is not true`);
    if (sc['allowPrivilegeEscalation'] !== false) problems.push(`${c}: allowPrivilegeEscalation is not false`);
    if (sc['privileged'] === true) problems.push(`${c}: privileged is true`);
    if (!arr(at(sc, 'capabilities.drop')).includes('ALL')) problems.push(`${c}: capabilities.drop lacks "ALL"`);
    if (at(effective('seccompProfile'), 'type') !== 'RuntimeDefault') {
      problems.push(`${c}: seccompProfile.type is not "RuntimeDefault"`);
    }
    for (const r of ['requests.cpu', 'requests.memory', 'limits.memory']) {
      if (at(container, `resources.${r}`) === undefined) problems.push(`${c}: resources.${r} is not set`);
    }

    const spreadByNode =
      arr(podSpec['topologySpreadConstraints']).some((t) => obj(t)?.['topologyKey'] === 'kubernetes.io/hostname') ||
      [
        ...arr(at(podSpec, 'affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution')),
        ...arr(at(podSpec, 'affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution')).map((p) => obj(p)?.['podAffinityTerm']),
      ].some((t) => obj(t)?.['topologyKey'] === 'kubernetes.io/hostname');
    if (!spreadByNode) {
      problems.push(`${dep}: replicas are not spread across nodes (no topologySpreadConstraints or podAntiAffinity on kubernetes.io/hostname)`);
    }
    problems.push(...checkNodeSpread(podSpec, dep));

    // ServiceAccount: exists, the pod gets its token (the pool cache lists and watches
    // SpiderIPPools), and the account may read SpiderIPPools and nothing else.
    const saName = str(podSpec['serviceAccountName']) ?? 'default';
    const sa = ofKind('ServiceAccount').find((s) => nameOf(s) === saName);
    if (sa === undefined) {
      problems.push(`ServiceAccount "${saName}" used by ${dep} is missing`);
    }
    const automount = podSpec['automountServiceAccountToken'] !== undefined ? podSpec['automountServiceAccountToken'] : sa?.['automountServiceAccountToken'];
    if (automount === false) {
      problems.push(`${dep}: automountServiceAccountToken is false, but the pool cache needs the token to watch SpiderIPPools`);
    }
    problems.push(...checkPoolReadAccess(all, saName, namespaceOf(deployment!) ?? namespace));
    problems.push(...checkConfReadAccess(all, saName, namespaceOf(deployment!) ?? namespace, spiderpoolNamespace, configMapName));

    // Certificates: with --tls-secret the server writes --cert-dir (a writable emptyDir)
    // from the Secret it keeps; otherwise --cert-dir is a read-only mount of a TLS Secret.
    const certDir = flagValue(args, 'cert-dir');
    const mount = arr(container['volumeMounts'])
      .map(obj)
      .find((m) => m?.['mountPath'] === certDir);
    const keptSecret = flagValue(args, 'tls-secret');
    if (certDir === undefined) {
      problems.push(`${c}: args lack --cert-dir`);
    } else if (mount === undefined) {
      problems.push(`${c}: nothing is mounted at --cert-dir ${certDir}`);
    } else if (keptSecret !== undefined) {
      if (certManager) problems.push(`${c}: --tls-secret is set although cert-manager writes the certificates`);
      if (mount['readOnly'] === true) problems.push(`${c}: the mount at ${certDir} is readOnly; with --tls-secret the server writes the certificates there`);
      const volume = arr(podSpec['volumes'])
        .map(obj)
        .find((v) => v?.['name'] === mount['name']);
      if (obj(volume?.['emptyDir']) === undefined)
        problems.push(`${dep}: volume ${show(mount['name'])} mounted at ${certDir} is not an emptyDir; with --tls-secret the server writes it`);
      problems.push(...checkPodNamespace(args, container, c));
      problems.push(...checkSecretAccess(all, saName, namespaceOf(deployment!) ?? namespace, keptSecret));
      problems.push(
        ...checkKeptSecret(
          ofKind('Secret').find((o) => nameOf(o) === keptSecret),
          keptSecret,
          namespaceOf(deployment!) ?? namespace,
        ),
      );
    } else {
      if (mount['readOnly'] !== true) problems.push(`${c}: the mount at ${certDir} is not readOnly`);
      problems.push(...checkNoSecretAccess(all, saName, namespaceOf(deployment!) ?? namespace));
      const volume = arr(podSpec['volumes'])
        .map(obj)
        .find((v) => v?.['name'] === mount['name']);
      const secretName = str(at(volume, 'secret.secretName'));
      const secret = ofKind('Secret').find((s) => nameOf(s) === secretName);
      if (secretName === undefined) {
        problems.push(`${dep}: volume "${show(mount['name'])}" mounted at ${certDir} is not a Secret volume`);
      } else if (certManager) {
        certificate = ofKind('Certificate').find((cert) => at(cert, 'spec.secretName') === secretName);
        if (secret !== undefined) problems.push(`Secret "${secretName}" is among the manifests; with cert-manager the Certificate writes it`);
        if (certificate === undefined) problems.push(`${dep}: no Certificate writes the Secret "${secretName}" mounted at ${certDir}`);
        else problems.push(...checkServingCertificate(all, certificate, namespace, serviceName));
      } else if (secret === undefined) {
        problems.push(`${dep}: volume "${show(mount['name'])}" refers to Secret "${secretName}", which is not among the manifests`);
      } else {
        tlsSecret = secret;
        problems.push(...checkTlsSecret(secret, namespace));
      }
    }
  }

  // --- Service -----------------------------------------------------------------------
  const service = ofKind('Service').find((s) => nameOf(s) === serviceName);
  if (service === undefined) {
    problems.push(`Service "${serviceName}" is missing`);
  } else {
    const svc = `Service "${serviceName}"`;
    if (namespaceOf(service) !== namespace) {
      problems.push(`${svc}: namespace is ${show(namespaceOf(service))}, expected "${namespace}"`);
    }
    if (deployment !== undefined && !selects(at(service, 'spec.selector'), podLabels)) {
      problems.push(`${svc}: spec.selector does not select the Deployment's pods`);
    }
    const port = arr(at(service, 'spec.ports'))
      .map(obj)
      .find((p) => p?.['port'] === WEBHOOK_SERVICE_PORT);
    if (port === undefined) {
      problems.push(`${svc}: no port ${WEBHOOK_SERVICE_PORT}`);
    } else {
      if (port['name'] !== 'https') problems.push(`${svc}: port ${WEBHOOK_SERVICE_PORT} is named ${show(port['name'])}, expected "https"`);
      const target = container === undefined ? port['targetPort'] : resolvePort(port['targetPort'], container);
      if (target !== DEFAULT_PORT) {
        problems.push(`${svc}: targetPort is ${show(port['targetPort'])}, expected ${DEFAULT_PORT} (the container's port)`);
      }
    }
  }

  // --- NetworkPolicy -------------------------------------------------------------------
  problems.push(...checkNetworkPolicy(ofKind('NetworkPolicy'), namespace, at(deployment, 'spec.template.metadata.labels'), options.apiServerCIDRs));

  // --- PodDisruptionBudget -------------------------------------------------------------
  const pdb = ofKind('PodDisruptionBudget').find((p) => selects(at(p, 'spec.selector.matchLabels'), podLabels));
  if (pdb === undefined) {
    problems.push(`no PodDisruptionBudget selects the Deployment's pods`);
  } else {
    if (at(pdb, 'spec.maxUnavailable') !== 1 || at(pdb, 'spec.minAvailable') !== undefined) {
      problems.push(
        `PodDisruptionBudget "${nameOf(pdb)}": maxUnavailable is ${show(at(pdb, 'spec.maxUnavailable'))} and minAvailable ${show(at(pdb, 'spec.minAvailable'))}, expected maxUnavailable 1 alone (one replica at a time, whatever the count)`,
      );
    }
    if (namespaceOf(pdb) !== namespace) {
      problems.push(`PodDisruptionBudget "${nameOf(pdb)}": namespace is ${show(namespaceOf(pdb))}, expected "${namespace}"`);
    }
  }

  // --- ValidatingWebhookConfiguration: the parts that need the Service ------------------
  // Written by the pods once they serve (--manage-webhook-configuration): then it must not
  // be among the manifests, which would put a failurePolicy: Fail webhook in place before
  // any pod can answer it.
  const podsWrite = options.podsWrite ?? webhookConfigurationOfPods(all);
  const listed = ofKind('ValidatingWebhookConfiguration');
  if (podsWrite !== undefined) {
    for (const vwc of listed) {
      problems.push(
        `ValidatingWebhookConfiguration "${nameOf(vwc)}" is among the manifests, but the pods write it once they serve (--manage-webhook-configuration): applied with the Deployment, it refuses every guarded write until a pod is Ready`,
      );
    }
    const args = arr(container?.['args']);
    const saName = str(podSpec?.['serviceAccountName']) ?? 'default';
    problems.push(...checkPodNamespace(args, container ?? {}, dep));
    problems.push(...checkReplicaFlags(all, args, container ?? {}, saName, namespaceOf(deployment ?? {}) ?? namespace, dep));
    problems.push(...checkConfigurationAccess(all, saName, namespaceOf(deployment ?? {}) ?? namespace, nameOf(podsWrite), args));
  }
  const vwcs = podsWrite !== undefined ? [podsWrite] : listed;
  for (const vwc of vwcs) {
    for (const webhook of arr(vwc['webhooks']).filter(isObj)) {
      const w = `webhook "${str(webhook['name']) ?? '?'}"`;
      const target = obj(at(webhook, 'clientConfig.service'));
      if (at(webhook, 'clientConfig.url') !== undefined) {
        problems.push(`${w}: clientConfig.url is set; the webhook must be called through its Service`);
      }
      if (target === undefined) {
        problems.push(`${w}: clientConfig.service is missing`);
        continue;
      }
      if (target['name'] !== serviceName || target['namespace'] !== namespace) {
        problems.push(
          `${w}: clientConfig.service is ${show(target['namespace'])}/${show(target['name'])}, expected "${namespace}"/"${serviceName}" (the Service)`,
        );
      }
      if (target['port'] !== WEBHOOK_SERVICE_PORT) {
        problems.push(`${w}: clientConfig.service.port is ${show(target['port'])}, expected ${WEBHOOK_SERVICE_PORT} (the Service's https port)`);
      }
    }
  }
  if (vwcs.length !== 1) {
    problems.push(`expected exactly one ValidatingWebhookConfiguration, found ${vwcs.length}`);
  }
  // The pods fill caBundle with the bundle they serve with (tested in test/registration).
  problems.push(...checkCaBundles(vwcs, certManager || podsWrite !== undefined ? 'injected' : tlsSecret));
  for (const vwc of vwcs) {
    // AKS rewrites the namespaceSelector of a webhook reaching kube-system without it (Azure/AKS#1771).
    const got = obj(at(vwc, 'metadata.annotations'))?.[AKS_ENFORCER_DISABLED];
    if (got !== 'true') problems.push(`ValidatingWebhookConfiguration "${nameOf(vwc)}": annotation ${AKS_ENFORCER_DISABLED} is ${show(got)}, expected "true"`);
  }
  // cainjector writes a Certificate's ca.crt alone, the new CA only during a CA change: the
  // pods, which keep the old CA beside it, must be caBundle's only writer.
  for (const vwc of vwcs) {
    if (obj(at(vwc, 'metadata.annotations'))?.[INJECT_CA_FROM] !== undefined) {
      problems.push(
        `ValidatingWebhookConfiguration "${nameOf(vwc)}": annotation ${INJECT_CA_FROM} lets cainjector write caBundle, which during a CA change drops the old CA that replicas still serve; leave caBundle to the pods`,
      );
    }
  }

  // --- The ConfigMap webhook's scope ----------------------------------------------------
  for (const webhook of webhooksFor(vwcs, 'configmaps')) {
    const w = `webhook "${str(webhook['name']) ?? '?'}"`;
    const names = arr(webhook['matchConditions'])
      .map((m) => str(obj(m)?.['expression']) ?? '')
      .map((e) => /(?<![\w.])object\.metadata\.name\s*==\s*(['"])(.*?)\1/.exec(e)?.[2])
      .filter((n): n is string => n !== undefined);
    if (names.length === 0) {
      problems.push(
        `${w}: no matchCondition limits it to ConfigMap "${configMapName}" (object.metadata.name == '${configMapName}'); every ConfigMap write in the namespace would reach the webhook`,
      );
    } else if (!names.includes(configMapName)) {
      problems.push(`${w}: matchConditions name ConfigMap ${show(names)}, expected "${configMapName}"`);
    }
    const expressions = arr(at(webhook, 'namespaceSelector.matchExpressions')).map(obj);
    const byName = expressions.find((e) => e?.['key'] === 'kubernetes.io/metadata.name' && e['operator'] === 'In');
    const labelled = at(webhook, 'namespaceSelector.matchLabels');
    const namespaces = byName !== undefined ? arr(byName['values']) : [str(obj(labelled)?.['kubernetes.io/metadata.name'])];
    if (!namespaces.includes(spiderpoolNamespace)) {
      problems.push(`${w}: namespaceSelector does not select Spiderpool's namespace "${spiderpoolNamespace}" by kubernetes.io/metadata.name`);
    }
  }

  return problems;
}

/**
 * The cert-manager Certificate behind the mounted Secret: in the install namespace, for
 * the Service's name the API server dials, not a CA, issued by an Issuer among the
 * manifests (a CA issuer: its CA is what the pods put into the caBundle).
 */
function checkServingCertificate(all: readonly Obj[], certificate: Obj, namespace: string, serviceName: string): string[] {
  const problems: string[] = [];
  const c = `Certificate "${nameOf(certificate)}"`;
  if (namespaceOf(certificate) !== namespace) problems.push(`${c}: namespace is ${show(namespaceOf(certificate))}, expected "${namespace}"`);
  const dnsName = `${serviceName}.${namespace}.svc`;
  if (!arr(at(certificate, 'spec.dnsNames')).includes(dnsName)) {
    problems.push(`${c}: spec.dnsNames lack "${dnsName}", the name the API server dials`);
  }
  if (at(certificate, 'spec.isCA') === true) problems.push(`${c}: spec.isCA is true for the serving certificate`);
  const issuerName = at(certificate, 'spec.issuerRef.name');
  const issuer = all.find((o) => o['kind'] === 'Issuer' && nameOf(o) === issuerName && namespaceOf(o) === namespace);
  if (at(certificate, 'spec.issuerRef.kind') !== 'Issuer' || issuer === undefined) {
    problems.push(`${c}: spec.issuerRef names no Issuer among the manifests in "${namespace}" (${show(at(certificate, 'spec.issuerRef'))})`);
  } else if (at(issuer, 'spec.ca.secretName') === undefined) {
    problems.push(`Issuer "${nameOf(issuer)}": not a CA issuer (spec.ca.secretName); the injected caBundle would not be a CA`);
  }
  return problems;
}

/**
 * A NetworkPolicy in the namespace selects the webhook's pods and admits TCP to
 * DEFAULT_PORT from any source (the API server's calls do not come from a Pod), or, when
 * `cidrs` is given, from an `ipBlock` of each of those CIDRs.
 */
function checkNetworkPolicy(policies: readonly Obj[], namespace: string, podLabels: unknown, cidrs?: readonly string[]): string[] {
  const admits = (from: unknown): boolean => {
    if (cidrs === undefined) return from === undefined || arr(from).length === 0;
    const blocks = new Set(arr(from).map((peer) => obj(obj(peer)?.['ipBlock'])?.['cidr']));
    return cidrs.every((cidr) => blocks.has(cidr));
  };
  const admitting = policies.filter(
    (p) =>
      namespaceOf(p) === namespace &&
      selects(at(p, 'spec.podSelector.matchLabels'), podLabels) &&
      arr(at(p, 'spec.ingress')).some(
        (rule) =>
          admits(obj(rule)?.['from']) &&
          arr(obj(rule)?.['ports']).some((port) => obj(port)?.['port'] === DEFAULT_PORT && (obj(port)?.['protocol'] ?? 'TCP') === 'TCP'),
      ),
  );
  const source = cidrs === undefined ? 'from anywhere' : `from ${cidrs.join(', ')}`;
  return admitting.length > 0
    ? []
    : [
        `no NetworkPolicy in "${namespace}" selects the webhook's pods and admits TCP ${DEFAULT_PORT} ${source}; the API server's calls would be dropped where ingress is denied by default`,
      ];
}

function checkTlsSecret(secret: Obj, namespace: string): string[] {
  const problems: string[] = [];
  const s = `Secret "${nameOf(secret)}"`;
  if (namespaceOf(secret) !== namespace) {
    problems.push(`${s}: namespace is ${show(namespaceOf(secret))}, expected "${namespace}"`);
  }
  if (secret['type'] !== 'kubernetes.io/tls') {
    problems.push(`${s}: type is ${show(secret['type'])}, expected "kubernetes.io/tls"`);
  }
  const data = obj(secret['data']) ?? {};
  for (const key of TLS_SECRET_KEYS) {
    if (typeof data[key] !== 'string' || data[key] === '') problems.push(`${s}: data["${key}"] is missing`);
  }
  if ('ca.key' in data) problems.push(`${s}: contains ca.key; the server does not need the CA's private key`);
  return problems;
}

/** The pod's namespace reaches the server: `--namespace`, or POD_NAMESPACE from the downward API. */
function checkPodNamespace(args: readonly unknown[], container: Obj, c: string): string[] {
  if (flagValue(args, 'namespace') !== undefined) return [];
  const env = arr(container['env'])
    .map(obj)
    .find((e) => e?.['name'] === 'POD_NAMESPACE');
  return at(env, 'valueFrom.fieldRef.fieldPath') === 'metadata.namespace'
    ? []
    : [`${c}: neither --namespace nor POD_NAMESPACE from the downward API (fieldRef metadata.namespace); the server would not know its namespace`];
}

/**
 * The hostname spread refuses to put two replicas on one node (DoNotSchedule) and counts
 * only nodes whose taints the pod tolerates (Honor), so a cordoned or dead node never holds
 * a replica Pending.
 */
function checkNodeSpread(podSpec: Obj, dep: string): string[] {
  const spread = arr(podSpec['topologySpreadConstraints'])
    .map(obj)
    .find((t) => t?.['topologyKey'] === 'kubernetes.io/hostname');
  if (spread === undefined) return [];
  return [
    ...(spread['whenUnsatisfiable'] === 'DoNotSchedule'
      ? []
      : [
          `${dep}: the kubernetes.io/hostname spread is ${show(spread['whenUnsatisfiable'])}, expected DoNotSchedule (one node's death must not take two replicas)`,
        ]),
    ...(spread['nodeTaintsPolicy'] === 'Honor'
      ? []
      : [
          `${dep}: the kubernetes.io/hostname spread's nodeTaintsPolicy is ${show(spread['nodeTaintsPolicy'])}, expected Honor (a cordoned or dead node would hold a replica Pending)`,
        ]),
  ];
}

/** --peer-readiness and --rebalance: POD_NAME from the downward API, and the RBAC their rounds use (namespaced but the node list). */
function checkReplicaFlags(all: readonly Obj[], args: readonly unknown[], container: Obj, saName: string, saNamespace: string, dep: string): string[] {
  const flags = ['--peer-readiness', '--rebalance'].filter((f) => args.includes(f));
  if (flags.length === 0) return [];
  const env = arr(container['env'])
    .map(obj)
    .find((e) => e?.['name'] === 'POD_NAME');
  const subject = { name: saName, namespace: saNamespace };
  type Need = { resource: string; verb: string; group?: string; clusterWide?: true };
  const needed: Need[] = [
    { resource: 'pods', verb: 'get' },
    { resource: 'pods', verb: 'list' },
    ...(flags.includes('--peer-readiness')
      ? [
          { resource: 'pods/status', verb: 'patch' },
          ...['get', 'list', 'create', 'update'].map((verb) => ({ resource: 'leases', verb, group: 'coordination.k8s.io' })),
        ]
      : []),
    ...(flags.includes('--rebalance')
      ? [
          { resource: 'pods/eviction', verb: 'create' },
          { resource: 'nodes', verb: 'list', clusterWide: true as const },
        ]
      : []),
  ];
  const granted = (n: Need) =>
    grants(all, subject, n.clusterWide ? { kind: 'ClusterRole' } : { kind: 'Role', namespace: saNamespace }, n.group ?? '', n.resource, n.verb);
  return [
    ...(at(env, 'valueFrom.fieldRef.fieldPath') === 'metadata.name'
      ? []
      : [`${dep}: ${flags.join(' and ')} without POD_NAME from the downward API (fieldRef metadata.name)`]),
    ...needed
      .filter((n) => !granted(n))
      .map(
        (n) =>
          `ServiceAccount "${saNamespace}/${saName}" may not ${n.verb} ${n.resource}${n.clusterWide ? '' : ` in "${saNamespace}"`} (${flags.join(' and ')} needs it)`,
      ),
  ];
}

/** For {@link grants}: a rule naming any resourceNames counts too. */
const ANY_NAME = Symbol('any name');

/** RBAC rules (of Roles or ClusterRoles bound to the ServiceAccount) that grant `verb` on `resource`, for `name` when given (for any name with {@link ANY_NAME}). */
function grants(
  all: readonly Obj[],
  subject: { name: string; namespace: string },
  where: { kind: 'Role' | 'ClusterRole'; namespace?: string },
  group: string,
  resource: string,
  verb: string,
  name?: string | typeof ANY_NAME,
): boolean {
  const bindingKind = where.kind === 'Role' ? 'RoleBinding' : 'ClusterRoleBinding';
  const bindings = all.filter(
    (o) =>
      o['kind'] === bindingKind &&
      (where.namespace === undefined || namespaceOf(o) === where.namespace) &&
      at(o, 'roleRef.kind') === where.kind &&
      arr(o['subjects']).some((s) => obj(s)?.['kind'] === 'ServiceAccount' && obj(s)?.['name'] === subject.name && obj(s)?.['namespace'] === subject.namespace),
  );
  return bindings.some((b) => {
    const role = all.find(
      (o) => o['kind'] === where.kind && nameOf(o) === at(b, 'roleRef.name') && (where.namespace === undefined || namespaceOf(o) === where.namespace),
    );
    return arr(role?.['rules'])
      .map(obj)
      .some((r) => {
        if (r === undefined || !arr(r['apiGroups']).includes(group) || !arr(r['resources']).includes(resource) || !arr(r['verbs']).includes(verb)) return false;
        const names = arr(r['resourceNames']);
        return names.length === 0 || name === ANY_NAME || (name !== undefined && names.includes(name));
      });
  });
}

/**
 * --tls-secret: get and update on that Secret, by name, in the pod's namespace, and no other
 * verb on Secrets (no create: the install makes it; a create would let a compromised pod
 * mint service-account tokens there).
 */
function checkSecretAccess(all: readonly Obj[], saName: string, saNamespace: string, secret: string): string[] {
  const subject = { name: saName, namespace: saNamespace };
  const where = { kind: 'Role' as const, namespace: saNamespace };
  const missing = (['get', 'update'] as const)
    .filter((verb) => !grants(all, subject, where, '', 'secrets', verb, secret))
    .map((verb) => `ServiceAccount "${saNamespace}/${saName}" may not ${verb} Secret "${secret}" in "${saNamespace}" (--tls-secret needs get and update)`);
  const extra = SECRET_VERBS.filter(
    (verb) =>
      (verb !== 'get' && verb !== 'update' && grants(all, subject, where, '', 'secrets', verb, secret)) ||
      // `undefined`: a rule without resourceNames, on every Secret.
      grants(all, subject, where, '', 'secrets', verb, undefined) ||
      grants(all, subject, { kind: 'ClusterRole' }, '', 'secrets', verb, ANY_NAME),
  );
  return extra.length === 0
    ? missing
    : [...missing, `ServiceAccount "${saNamespace}/${saName}" may ${extra.join(', ')} Secrets beyond get and update of "${secret}"`];
}

/**
 * --tls-secret: the Secret is among the manifests (the pods never create it), without data
 * (so an apply never changes what the pods wrote) and of a type an empty Secret may have.
 */
function checkKeptSecret(secret: Obj | undefined, name: string, namespace: string): string[] {
  const s = `Secret "${name}"`;
  if (secret === undefined) return [`${s} (--tls-secret) is not among the manifests; the pods do not create it`];
  return [
    ...(namespaceOf(secret) === namespace ? [] : [`${s}: namespace is ${show(namespaceOf(secret))}, expected "${namespace}"`]),
    ...(secret['type'] === undefined || secret['type'] === 'Opaque'
      ? []
      : [`${s}: type is ${show(secret['type'])}; the empty Secret the pods fill has none (Opaque)`]),
    ...('data' in secret || 'stringData' in secret ? [`${s}: has data; an apply would overwrite what the pods wrote`] : []),
  ];
}

/** RBAC verbs on Secrets. */
const SECRET_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', '*'] as const;

/**
 * Without --tls-secret the pods keep no Secret (the kubelet mounts theirs): no verb on any
 * Secret of their namespace, least of all on cert-manager's, which holds the serving key.
 */
function checkNoSecretAccess(all: readonly Obj[], saName: string, saNamespace: string): string[] {
  const subject = { name: saName, namespace: saNamespace };
  const granted = SECRET_VERBS.filter(
    (verb) =>
      grants(all, subject, { kind: 'Role', namespace: saNamespace }, '', 'secrets', verb, ANY_NAME) ||
      grants(all, subject, { kind: 'ClusterRole' }, '', 'secrets', verb, ANY_NAME),
  );
  return granted.length === 0
    ? []
    : [`ServiceAccount "${saNamespace}/${saName}" may ${granted.join(', ')} Secrets, although without --tls-secret the pods keep none`];
}

/** --manage-webhook-configuration: get, patch and create (an apply) of that one configuration; --owner-cluster-role and --reports-owner-cluster-role: get of their ClusterRole. */
function checkConfigurationAccess(all: readonly Obj[], saName: string, saNamespace: string, configuration: string, args: readonly unknown[]): string[] {
  const subject = { name: saName, namespace: saNamespace };
  const where = { kind: 'ClusterRole' as const };
  const problems = (['get', 'patch', 'create'] as const)
    .filter((verb) => !grants(all, subject, where, 'admissionregistration.k8s.io', 'validatingwebhookconfigurations', verb, configuration))
    .map(
      (verb) =>
        `ServiceAccount "${saNamespace}/${saName}" may not ${verb} ValidatingWebhookConfiguration "${configuration}" (--manage-webhook-configuration applies it)`,
    );
  for (const flag of ['owner-cluster-role', 'reports-owner-cluster-role']) {
    const owner = flagValue(args, flag);
    if (owner === undefined) continue;
    if (!all.some((o) => o['kind'] === 'ClusterRole' && nameOf(o) === owner))
      problems.push(`--${flag} names ClusterRole "${owner}", which is not among the manifests`);
    if (!grants(all, subject, where, 'rbac.authorization.k8s.io', 'clusterroles', 'get', owner)) {
      problems.push(`ServiceAccount "${saNamespace}/${saName}" may not get ClusterRole "${owner}" (--${flag} reads its uid)`);
    }
  }
  return problems;
}

/** Webhooks whose rules name `resource` (or one of its subresources). */
function webhooksFor(vwcs: readonly Obj[], resource: string): Obj[] {
  return vwcs.flatMap((vwc) =>
    arr(vwc['webhooks'])
      .filter(isObj)
      .filter((w) => arr(w['rules']).some((r) => arr(obj(r)?.['resources']).some((x) => typeof x === 'string' && x.split('/')[0] === resource))),
  );
}

/** Verbs the pool cache needs on spiderippools: read only. */
const POOL_CACHE_VERBS = ['get', 'list', 'watch'] as const;

/**
 * A ClusterRole granting exactly get/list/watch on spiderippools (no write verbs, no
 * wildcards), bound by a ClusterRoleBinding to ServiceAccount `saName` in `saNamespace`.
 */
function checkPoolReadAccess(all: readonly Obj[], saName: string, saNamespace: string): string[] {
  const grants = (role: Obj) =>
    arr(role['rules'])
      .filter(isObj)
      .filter((r) => arr(r['apiGroups']).includes(SPIDERPOOL_GROUP) && arr(r['resources']).includes('spiderippools'));
  const bindings = all.filter(
    (o) =>
      o['kind'] === 'ClusterRoleBinding' &&
      at(o, 'roleRef.kind') === 'ClusterRole' &&
      arr(o['subjects']).some((s) => obj(s)?.['kind'] === 'ServiceAccount' && obj(s)?.['name'] === saName && obj(s)?.['namespace'] === saNamespace),
  );
  const roles = bindings
    .map((b) => all.find((o) => o['kind'] === 'ClusterRole' && nameOf(o) === at(b, 'roleRef.name')))
    .filter((r): r is Obj => r !== undefined && grants(r).length > 0);
  if (roles.length === 0) {
    return [
      `no ClusterRole granting spiderippools (${SPIDERPOOL_GROUP}) is bound to ServiceAccount "${saNamespace}/${saName}"; the pool cache cannot list and watch SpiderIPPools`,
    ];
  }
  const problems: string[] = [];
  for (const role of roles) {
    const verbs = grants(role).flatMap((r) => arr(r['verbs']));
    if (!sameSet([...new Set(verbs)], POOL_CACHE_VERBS)) {
      problems.push(`ClusterRole "${nameOf(role)}": verbs on spiderippools are ${show(verbs)}, expected ${show(POOL_CACHE_VERBS)} (read only)`);
    }
  }
  return problems;
}

/**
 * A Role in Spiderpool's namespace granting exactly get/list/watch on ConfigMap
 * `configMapName` (resourceNames; the server's list and watch carry a metadata.name field
 * selector, which the API server authorizes as that name), bound to the ServiceAccount.
 */
function checkConfReadAccess(all: readonly Obj[], saName: string, saNamespace: string, spiderpoolNamespace: string, configMapName: string): string[] {
  const bindings = all.filter(
    (o) =>
      o['kind'] === 'RoleBinding' &&
      namespaceOf(o) === spiderpoolNamespace &&
      at(o, 'roleRef.kind') === 'Role' &&
      arr(o['subjects']).some((s) => obj(s)?.['kind'] === 'ServiceAccount' && obj(s)?.['name'] === saName && obj(s)?.['namespace'] === saNamespace),
  );
  const roles = bindings
    .map((b) => all.find((o) => o['kind'] === 'Role' && namespaceOf(o) === spiderpoolNamespace && nameOf(o) === at(b, 'roleRef.name')))
    .filter((r): r is Obj => r !== undefined);
  const rules = roles.flatMap((r) => arr(r['rules']).filter(isObj)).filter((r) => arr(r['resources']).includes('configmaps'));
  if (rules.length === 0) {
    return [
      `no Role in "${spiderpoolNamespace}" granting configmaps is bound to ServiceAccount "${saNamespace}/${saName}"; the server cannot watch ConfigMap "${configMapName}"`,
    ];
  }
  const problems: string[] = [];
  for (const rule of rules) {
    if (!sameSet(rule['resourceNames'], [configMapName]))
      problems.push(`Role rule on configmaps: resourceNames is ${show(rule['resourceNames'])}, expected ["${configMapName}"] (that one ConfigMap only)`);
    if (!sameSet(rule['verbs'], POOL_CACHE_VERBS))
      problems.push(`Role rule on configmaps: verbs are ${show(rule['verbs'])}, expected ${show(POOL_CACHE_VERBS)} (read only)`);
  }
  return problems;
}

/**
 * `tls` is the Secret the Deployment mounts, when found: each caBundle of a listed
 * configuration must be its CA. `injected`: the pods fill caBundle (test/registration).
 */
function checkCaBundles(vwcs: readonly Obj[], tls: Obj | 'injected' | undefined): string[] {
  if (tls === 'injected') return [];
  const caCrt = str(obj(tls?.['data'])?.['ca.crt']);
  return vwcs
    .flatMap((vwc) => arr(vwc['webhooks']).filter(isObj))
    .flatMap((webhook) => {
      const w = `webhook "${str(webhook['name']) ?? '?'}"`;
      const caBundle = str(at(webhook, 'clientConfig.caBundle'));
      if (caBundle === undefined || caBundle === '') return [`${w}: clientConfig.caBundle is empty; the API server could not verify the webhook's certificate`];
      return [
        ...(decodeBase64(caBundle)?.includes('-----BEGIN ') ? [] : [`${w}: clientConfig.caBundle is not base64 of a PEM certificate`]),
        ...(caCrt !== undefined && unwrapBase64(caBundle) !== unwrapBase64(caCrt) ? [`${w}: clientConfig.caBundle differs from the TLS Secret's ca.crt`] : []),
      ];
    });
}
