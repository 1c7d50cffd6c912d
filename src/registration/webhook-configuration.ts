/**
 * The ValidatingWebhookConfiguration `register` sends. It starts from
 * `deploy/base/validatingwebhookconfiguration.yaml` (generated from `WEBHOOKS` by `npm run generate`):
 * `register` reads that manifest and fills in only what differs per installation, the
 * `caBundle` and where the API server reaches the webhook. Rules, match conditions,
 * failure policy and timeouts are never written a second time here.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { firstIssue } from '../kubernetes/field-issue.js';
import { syntaxReason } from '../kubernetes/yaml-error.js';

/**
 * The manifest shipped next to `src/` and `dist/` (both two levels below the package
 * root), so the same path works from the sources, the build and the container image.
 */
export const WEBHOOK_MANIFEST_PATH = fileURLToPath(new URL('../../deploy/base/validatingwebhookconfiguration.yaml', import.meta.url));

/** That manifest as an operator's checkout or the npm package names it. */
const SHIPPED_MANIFEST = 'deploy/base/validatingwebhookconfiguration.yaml';

const ServiceReferenceSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().min(1),
  path: z.string().startsWith('/'),
  port: z.number().int().optional(),
});

const WebhookSchema = z.looseObject({
  name: z.string().min(1),
  clientConfig: z.looseObject({ service: ServiceReferenceSchema }),
});

/**
 * The parts of `admissionregistration.k8s.io/v1` ValidatingWebhookConfiguration that
 * `register` reads or rewrites (k8s.io/api/admissionregistration/v1/types.go); every other
 * field passes through untouched. The manifest must reference a Service: that is where
 * each webhook's path comes from.
 */
export const WebhookManifestSchema = z.looseObject({
  apiVersion: z.literal('admissionregistration.k8s.io/v1'),
  kind: z.literal('ValidatingWebhookConfiguration'),
  metadata: z.looseObject({ name: z.string().min(1) }),
  webhooks: z.array(WebhookSchema).min(1),
});
export type WebhookManifest = z.infer<typeof WebhookManifestSchema>;
type Webhook = WebhookManifest['webhooks'][number];

/** `webhooks[].clientConfig` as sent: a Service reference or a URL, with the caBundle. */
type ClientConfig = ({ service: Webhook['clientConfig']['service'] } | { url: string }) & { caBundle: string };

/** The ValidatingWebhookConfiguration `register` applies (other fields as in the manifest). */
export type WebhookConfiguration = Pick<WebhookManifest, 'apiVersion' | 'kind' | 'metadata'> &
  Record<string, unknown> & {
    webhooks: Array<Pick<Webhook, 'name'> & Record<string, unknown> & { clientConfig: ClientConfig }>;
  };

/**
 * Where the API server calls the webhook: the in-cluster Service (as `deploy/` installs
 * it), or a URL (`clientConfig.url`, for a webhook outside the cluster such as the e2e
 * tests' process on 127.0.0.1). A Service name or namespace left undefined keeps the
 * manifest's (an overlay's `namespace:` or `namePrefix` is already in its rendered output).
 */
export type WebhookTarget = { service: { name?: string | undefined; namespace?: string | undefined } } | { url: string };

/**
 * Reads and checks the webhook manifest.
 *
 * @param path YAML file with the ValidatingWebhookConfiguration: the shipped one by default,
 *   or any multi-document file holding exactly one, such as a copy of the shipped one with
 *   its namespaceSelector or matchConditions changed. `kubectl kustomize` of `deploy/` holds
 *   none (the pods write it), so the error for none says where to find it.
 * @throws Error naming the file when it cannot be read, is not YAML, holds no or several
 *   ValidatingWebhookConfigurations, or that object does not have the shape of
 *   {@link WebhookManifestSchema}.
 */
export async function readWebhookManifest(path: string = WEBHOOK_MANIFEST_PATH): Promise<WebhookManifest> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the webhook manifest ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const documents = parseAllDocuments(text);
  const broken = documents.find((doc) => doc.errors.length > 0);
  if (broken) throw new Error(`the webhook manifest ${path} is not YAML: ${syntaxReason(broken.errors[0]!.message)}`);
  const candidates = documents.map((doc) => doc.toJS() as unknown).filter((o) => (o as { kind?: unknown } | null)?.kind === 'ValidatingWebhookConfiguration');
  if (candidates.length !== 1) {
    // deploy/ and its overlays leave the configuration to the pods, so their output has none.
    const hint = candidates.length === 0 ? ` (deploy/ and its overlays hold none: start from ${SHIPPED_MANIFEST})` : '';
    throw new Error(`the webhook manifest ${path} holds ${candidates.length} ValidatingWebhookConfigurations; it must hold exactly one${hint}`);
  }
  const result = WebhookManifestSchema.safeParse(candidates[0]);
  if (!result.success) {
    throw new Error(`the webhook manifest ${path} is not a usable ValidatingWebhookConfiguration: ${firstIssue(result.error)}`);
  }
  return result.data;
}

/**
 * The API server only calls webhook URLs over HTTPS, with no query or fragment
 * (admissionregistration validation, `ValidateWebhookURL`); the path comes from the manifest.
 */
function webhookBaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url ${JSON.stringify(url)} is not a URL; use https://HOST:PORT`);
  }
  if (parsed.protocol !== 'https:' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    throw new Error(`--url ${JSON.stringify(url)} must be https://HOST[:PORT][/PREFIX] without user, query or fragment`);
  }
  return parsed.href.replace(/\/+$/, '');
}

/** `fields` without its undefined entries, so spreading it never erases a value. */
function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/**
 * The object to apply: `manifest` with each webhook's `clientConfig` set to `target` and
 * `caBundle` (base64 of the CA's PEM). For a URL target the webhook's path from the
 * manifest is appended (`https://127.0.0.1:8443` → `https://127.0.0.1:8443/validate-configmap`);
 * for a Service only the name and namespace given in `target` change. Pure.
 *
 * @throws Error when a URL target is not an `https://` URL without user, query or fragment.
 */
export function webhookConfigurationFor(manifest: WebhookManifest, target: WebhookTarget, caBundle: string): WebhookConfiguration {
  const base = 'url' in target ? webhookBaseUrl(target.url) : undefined;
  return {
    ...manifest,
    webhooks: manifest.webhooks.map((webhook) => {
      const { service } = webhook.clientConfig;
      const clientConfig: ClientConfig =
        'service' in target ? { service: { ...service, ...definedOnly(target.service) }, caBundle } : { url: `${base}${service.path}`, caBundle };
      return { ...webhook, clientConfig };
    }),
  };
}

/** Spiderpool's ConfigMap the ConfigMap webhook matches: its name and namespace. */
export interface SpiderpoolConfRef {
  name: string;
  namespace: string;
}

/** The matchCondition of the shipped manifest that names the ConfigMap. */
const CONF_MATCH_CONDITION = 'is-spiderpool-conf';

/**
 * `manifest` with the ConfigMap webhook (the one whose Service path is `configMapPath`)
 * matching `conf`: its namespaceSelector selects `conf.namespace` by the
 * `kubernetes.io/metadata.name` label the API server sets on every namespace, and its
 * `is-spiderpool-conf` matchCondition compares with `conf.name`, so `serve`'s
 * `--configmap-name`/`--configmap-namespace` and the configuration cannot disagree. Pure.
 *
 * @throws Error when no webhook has that path, or it lacks the matchCondition.
 */
export function forSpiderpoolConf(manifest: WebhookManifest, configMapPath: string, conf: SpiderpoolConfRef): WebhookManifest {
  const index = manifest.webhooks.findIndex((webhook) => webhook.clientConfig.service.path === configMapPath);
  const webhook = manifest.webhooks[index];
  const conditions = (webhook?.['matchConditions'] ?? []) as { name: string; expression: string }[];
  if (webhook === undefined || !conditions.some((c) => c.name === CONF_MATCH_CONDITION)) {
    throw new Error(`the webhook manifest has no webhook for ${configMapPath} with the matchCondition ${CONF_MATCH_CONDITION}`);
  }
  // A DNS-1123 subdomain, checked by the CLI: it cannot end the CEL string literal.
  const matchConditions = conditions.map((c) => (c.name === CONF_MATCH_CONDITION ? { ...c, expression: `object.metadata.name == '${conf.name}'` } : c));
  const namespaceSelector = { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [conf.namespace] }] };
  const webhooks = manifest.webhooks.map((w, i) => (i === index ? { ...w, namespaceSelector, matchConditions } : w));
  return { ...manifest, webhooks };
}
