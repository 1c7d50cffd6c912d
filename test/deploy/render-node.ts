/**
 * A Node-only stand-in for `kubectl kustomize deploy/`, so unit tests need no kubectl.
 *
 * It implements just the kustomize features `deploy/` and its overlays use, the way
 * kustomize v5 applies them: `resources` (multi-document YAML files, and directories
 * holding a kustomization, rendered first), `components` (a `kind: Component` directory
 * holding `resources` only, added after the resources), `secretGenerator`
 * (`files:`, with a hash suffix that follows into Deployment secret volumes), `namespace`
 * (including webhooks' clientConfig.service.namespace and binding subjects naming a moved
 * ServiceAccount), `images`, `patches` (JSON 6902 `add`/`replace`/`remove` with a
 * `target`) and `replacements` (`[key.with.dots]`, `[field=value]` and `*` path segments,
 * `options.create`; source `options.delimiter`/`index`). Generated data is line-wrapped as kustomize does; the name suffix
 * is not kustomize's exact hash. Anything else in the
 * kustomization throws, so a new feature cannot be silently ignored here;
 * test/deploy/render.ts renders with the real kustomize for e2e tests.
 */
import { createHash } from 'node:crypto';
import { access, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { parseManifests, standInPem } from './render.js';

type Obj = Record<string, unknown>;

interface Selector {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
}

interface Replacement {
  /** `options.delimiter`/`index`: the value is that part of the field split at the delimiter (kustomize's source options). */
  source: Selector & { fieldPath?: string; options?: { delimiter?: string; index?: number } };
  targets: { select: Selector; fieldPaths: string[]; options?: { create?: boolean } }[];
}

/** A JSON 6902 operation, as kustomize's `patches` entries with a `target` take them. */
interface JsonPatchOperation {
  op: string;
  path: string;
  value?: unknown;
}

export interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  components?: string[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
  secretGenerator?: { name: string; type?: string; files?: string[]; namespace?: string }[];
  replacements?: Replacement[];
  patches?: { target: Selector; patch: string }[];
}

const SUPPORTED_FIELDS = new Set([
  'patches',
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'components',
  'images',
  'secretGenerator',
  'replacements',
]);

const CLUSTER_SCOPED_KINDS = new Set([
  'Namespace',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PriorityClass',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function metadata(o: Obj): Obj {
  if (!isObj(o['metadata'])) o['metadata'] = {};
  return o['metadata'] as Obj;
}

export async function loadKustomization(deployDir: string): Promise<Kustomization> {
  const k: unknown = parse(await readFile(path.join(deployDir, 'kustomization.yaml'), 'utf8'));
  if (!isObj(k)) throw new Error('kustomization.yaml is not a mapping');
  const unsupported = Object.keys(k).filter((f) => !SUPPORTED_FIELDS.has(f));
  if (unsupported.length > 0) {
    throw new Error(`render-node does not implement kustomization fields ${unsupported.join(', ')}`);
  }
  return k as Kustomization;
}

/** Reads a generator's file; a missing deploy/tls file becomes a stand-in, as in render.ts. */
async function readGeneratorFile(deployDir: string, file: string): Promise<Buffer> {
  const full = path.join(deployDir, file);
  const exists = await access(full).then(
    () => true,
    () => false,
  );
  if (exists) return readFile(full);
  if (path.dirname(file) === 'tls') return Buffer.from(standInPem(path.basename(file)));
  throw new Error(`secretGenerator file ${file} does not exist`);
}

/** Splits a kustomize fieldPath on dots outside brackets: `data.[ca.crt]` → data, [ca.crt]. */
export function splitFieldPath(fieldPath: string): string[] {
  const segments: string[] = [];
  let current = '';
  let depth = 0;
  for (const ch of fieldPath) {
    if (ch === '[') depth++;
    if (ch === ']') depth--;
    if (ch === '.' && depth === 0) {
      segments.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  segments.push(current);
  return segments;
}

type Segment = { key: string } | { match: [string, string] } | { all: true };

function parseSegment(segment: string): Segment {
  if (segment === '*') return { all: true };
  const bracket = /^\[(.*)\]$/.exec(segment);
  if (bracket === null) return { key: segment };
  const inner = bracket[1] ?? '';
  const eq = inner.indexOf('=');
  return eq < 0 ? { key: inner } : { match: [inner.slice(0, eq), inner.slice(eq + 1)] };
}

function children(node: unknown, segment: Segment): unknown[] {
  if ('all' in segment) return Array.isArray(node) ? node : [];
  if ('match' in segment) {
    const [k, v] = segment.match;
    return Array.isArray(node) ? node.filter((el) => isObj(el) && String(el[k]) === v) : [];
  }
  // A number indexes a list, as in kustomize's `matchExpressions.0.values.0`.
  if (Array.isArray(node) && /^[0-9]+$/.test(segment.key)) return Number(segment.key) < node.length ? [node[Number(segment.key)]] : [];
  return isObj(node) && segment.key in node ? [node[segment.key]] : [];
}

export function getField(root: unknown, fieldPath: string): unknown[] {
  let nodes: unknown[] = [root];
  for (const s of splitFieldPath(fieldPath).map(parseSegment)) nodes = nodes.flatMap((n) => children(n, s));
  return nodes;
}

/** Sets `value` at every node `fieldPath` reaches; returns how many were set. */
export function setField(root: unknown, fieldPath: string, value: unknown, create: boolean): number {
  const segments = splitFieldPath(fieldPath).map(parseSegment);
  const last = segments.pop();
  if (last === undefined || !('key' in last)) throw new Error(`fieldPath ${fieldPath} must end in a field name`);
  let nodes: unknown[] = [root];
  for (const s of segments) {
    if (create && 'key' in s) {
      for (const n of nodes) if (isObj(n) && n[s.key] === undefined) n[s.key] = {};
    }
    nodes = nodes.flatMap((n) => children(n, s));
  }
  let count = 0;
  for (const n of nodes) {
    if (isObj(n) && (create || last.key in n)) {
      n[last.key] = structuredClone(value);
      count++;
    }
  }
  return count;
}

function matches(o: Obj, sel: Selector, originalNames: WeakMap<Obj, string>): boolean {
  const apiVersion = typeof o['apiVersion'] === 'string' ? o['apiVersion'] : '';
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  const md = metadata(o);
  return (
    (sel.kind === undefined || o['kind'] === sel.kind) &&
    (sel.group === undefined || group === sel.group) &&
    (sel.name === undefined || md['name'] === sel.name || originalNames.get(o) === sel.name) &&
    (sel.namespace === undefined || md['namespace'] === sel.namespace)
  );
}

/** kustomize writes generated Secret data longer than 70 characters as 70-character lines. */
function wrapBase64(encoded: string): string {
  if (encoded.length <= 70) return encoded;
  return `${encoded.match(/.{1,70}/g)?.join('\n') ?? encoded}\n`;
}

function podSpecs(o: Obj): Obj[] {
  const spec = o['spec'];
  const template = isObj(spec) ? spec['template'] : undefined;
  const podSpec = isObj(template) ? template['spec'] : undefined;
  return isObj(podSpec) ? [podSpec] : [];
}

function setImage(image: string, rule: NonNullable<Kustomization['images']>[number]): string | undefined {
  const at = image.indexOf('@');
  const withoutDigest = at < 0 ? image : image.slice(0, at);
  const colon = withoutDigest.lastIndexOf(':');
  const name = colon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, colon) : withoutDigest;
  if (name !== rule.name) return undefined;
  const tag = colon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(colon + 1) : undefined;
  const newName = rule.newName ?? name;
  if (rule.digest !== undefined) return `${newName}@${rule.digest}`;
  const newTag = rule.newTag ?? tag;
  return newTag === undefined ? newName : `${newName}:${newTag}`;
}

/** JSON pointer segments (RFC 6901: `~1` is `/`, `~0` is `~`). */
function pointer(jsonPath: string): string[] {
  if (!jsonPath.startsWith('/')) throw new Error(`JSON patch path ${jsonPath} does not start with /`);
  return jsonPath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Applies one JSON 6902 operation (`add`, `replace`, `remove`, `test`) to `root`, in place.
 * `test` throws when the value there differs (an overlay's guard that the index it patches
 * still holds what it expects), as kustomize fails the build.
 */
export function applyJsonPatch(root: Obj, operation: JsonPatchOperation): void {
  const segments = pointer(operation.path);
  const last = segments.pop()!;
  let parent: unknown = root;
  for (const s of segments) {
    parent = Array.isArray(parent) ? parent[Number(s)] : isObj(parent) ? parent[s] : undefined;
    if (parent === undefined) throw new Error(`JSON patch path ${operation.path}: ${s} does not exist`);
  }
  const exists = Array.isArray(parent) ? Number(last) < parent.length : isObj(parent) && last in parent;
  if (operation.op !== 'add' && !exists) throw new Error(`JSON patch ${operation.op} ${operation.path}: nothing there`);
  if (operation.op === 'test') {
    const found = Array.isArray(parent) ? parent[Number(last)] : (parent as Obj)[last];
    if (JSON.stringify(found) !== JSON.stringify(operation.value)) {
      throw new Error(`JSON patch test ${operation.path}: is ${JSON.stringify(found)}, expected ${JSON.stringify(operation.value)}`);
    }
    return;
  }
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (operation.op === 'add') parent.splice(i, 0, structuredClone(operation.value));
    else if (operation.op === 'replace') parent[i] = structuredClone(operation.value);
    else if (operation.op === 'remove') parent.splice(i, 1);
    else throw new Error(`render-node does not implement JSON patch op ${operation.op}`);
  } else if (isObj(parent)) {
    if (operation.op === 'add' || operation.op === 'replace') parent[last] = structuredClone(operation.value);
    else if (operation.op === 'remove') delete parent[last];
    else throw new Error(`render-node does not implement JSON patch op ${operation.op}`);
  }
}

/** A generated object's name before its hash suffix, for selectors (kustomize matches either). */
const originalNames = new WeakMap<Obj, string>();

/** Renders `deployDir` like `kubectl kustomize`, for this project's kustomizations only. */
export async function renderWithNode(deployDir: string): Promise<Obj[]> {
  const k = await loadKustomization(deployDir);
  const objects: Obj[] = [];

  for (const entry of k.resources ?? []) {
    const resource = path.join(deployDir, entry);
    if ((await stat(resource)).isDirectory()) objects.push(...(await renderWithNode(resource)));
    else objects.push(...parseManifests(await readFile(resource, 'utf8')));
  }
  for (const entry of k.components ?? []) objects.push(...(await renderWithNode(path.join(deployDir, entry))));

  const renamedSecrets = new Map<string, string>();
  for (const gen of k.secretGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const entry of gen.files ?? []) {
      const eq = entry.indexOf('=');
      const [key, file] = eq < 0 ? [path.basename(entry), entry] : [entry.slice(0, eq), entry.slice(eq + 1)];
      data[key] = wrapBase64((await readGeneratorFile(deployDir, file)).toString('base64'));
    }
    const secret: Obj = { apiVersion: 'v1', kind: 'Secret', metadata: { name: gen.name }, data };
    if (gen.type !== undefined) secret['type'] = gen.type;
    const hash = createHash('sha256').update(JSON.stringify(secret)).digest('hex').slice(0, 10);
    const hashedName = `${gen.name}-${hash}`;
    metadata(secret)['name'] = hashedName;
    if (gen.namespace !== undefined) metadata(secret)['namespace'] = gen.namespace;
    originalNames.set(secret, gen.name);
    renamedSecrets.set(gen.name, hashedName);
    objects.push(secret);
  }

  if (k.namespace !== undefined) {
    const movedServices = new Set<string>();
    const movedServiceAccounts = new Set<string>();
    for (const o of objects) {
      if (o['kind'] === 'Namespace') metadata(o)['name'] = k.namespace;
      else if (typeof o['kind'] === 'string' && !CLUSTER_SCOPED_KINDS.has(o['kind'])) {
        const was = `${String(metadata(o)['namespace'] ?? '')}/${String(metadata(o)['name'])}`;
        if (o['kind'] === 'Service') movedServices.add(was);
        if (o['kind'] === 'ServiceAccount') movedServiceAccounts.add(was);
        metadata(o)['namespace'] = k.namespace;
      }
    }
    // A (Cluster)RoleBinding subject that names a moved ServiceAccount moves with it.
    for (const o of objects) {
      if (o['kind'] !== 'ClusterRoleBinding' && o['kind'] !== 'RoleBinding') continue;
      for (const subject of getField(o, 'subjects.*')) {
        if (isObj(subject) && subject['kind'] === 'ServiceAccount' && movedServiceAccounts.has(`${String(subject['namespace'])}/${String(subject['name'])}`)) {
          subject['namespace'] = k.namespace;
        }
      }
    }
    // kustomize also rewrites a webhook's clientConfig.service.namespace when it names a
    // Service that the transformer moved.
    for (const o of objects) {
      if (o['kind'] !== 'ValidatingWebhookConfiguration' && o['kind'] !== 'MutatingWebhookConfiguration') continue;
      for (const service of getField(o, 'webhooks.*.clientConfig.service')) {
        if (isObj(service) && movedServices.has(`${String(service['namespace'])}/${String(service['name'])}`)) {
          service['namespace'] = k.namespace;
        }
      }
    }
  }

  for (const o of objects) {
    for (const podSpec of podSpecs(o)) {
      for (const volume of Array.isArray(podSpec['volumes']) ? podSpec['volumes'] : []) {
        const secret = isObj(volume) ? volume['secret'] : undefined;
        const name = isObj(secret) ? secret['secretName'] : undefined;
        if (isObj(secret) && typeof name === 'string' && renamedSecrets.has(name)) {
          secret['secretName'] = renamedSecrets.get(name);
        }
      }
      for (const field of ['containers', 'initContainers']) {
        for (const c of Array.isArray(podSpec[field]) ? podSpec[field] : []) {
          if (!isObj(c)) continue;
          for (const rule of k.images ?? []) {
            const image = typeof c['image'] === 'string' ? setImage(c['image'], rule) : undefined;
            if (image !== undefined) c['image'] = image;
          }
        }
      }
    }
  }

  for (const { target, patch } of k.patches ?? []) {
    const operations: unknown = parse(patch);
    const targets = objects.filter((o) => matches(o, target, originalNames));
    if (targets.length === 0) throw new Error(`patch target ${JSON.stringify(target)} matched nothing`);
    // The one strategic-merge patch implemented: `$patch: delete`, which removes its targets.
    if (isObj(operations) && operations['$patch'] === 'delete') {
      for (const o of targets) objects.splice(objects.indexOf(o), 1);
      continue;
    }
    if (!Array.isArray(operations)) throw new Error('render-node implements only JSON 6902 patches (a list of operations) and $patch: delete');
    for (const o of targets) for (const operation of operations as JsonPatchOperation[]) applyJsonPatch(o, operation);
  }

  for (const r of k.replacements ?? []) {
    const sources = objects.filter((o) => matches(o, r.source, originalNames));
    if (sources.length !== 1) throw new Error(`replacement source ${JSON.stringify(r.source)} matched ${sources.length} objects`);
    const values = getField(sources[0], r.source.fieldPath ?? 'metadata.name');
    if (values.length !== 1) throw new Error(`replacement source field ${r.source.fieldPath} not found`);
    const { delimiter, index = 0 } = r.source.options ?? {};
    const value = delimiter === undefined ? values[0] : String(values[0]).split(delimiter)[index];
    if (value === undefined) throw new Error(`replacement source field ${r.source.fieldPath} has no part ${index} split at ${JSON.stringify(delimiter)}`);
    for (const t of r.targets) {
      const targets = objects.filter((o) => matches(o, t.select, originalNames));
      if (targets.length === 0) throw new Error(`replacement target ${JSON.stringify(t.select)} matched nothing`);
      for (const target of targets) {
        for (const fp of t.fieldPaths) setField(target, fp, value, t.options?.create === true);
      }
    }
  }

  return objects;
}
