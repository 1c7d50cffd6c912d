/**
 * The candidate-pool annotations as Spiderpool reads them (pkg/ipam/pool_selections.go,
 * `getPoolFromPodAnnoPools`, `getPoolFromPodAnnoPool`, `validateAndMutateMultipleNICAnnotations`;
 * pkg/namespacemanager `GetNSDefaultPools`; types in pkg/types/k8s.go), decoded as Go's
 * `encoding/json` decodes into those types: keys matched without regard to ASCII case,
 * unknown keys ignored, `null` leaving the zero value (a `null` list element is `""`), and any
 * value of the wrong JSON type refusing the whole annotation.
 *
 * Each parser returns the NICs with their IPv4 and IPv6 candidate names (wildcards not yet
 * expanded), or the reason Spiderpool refuses the annotation when the Pod starts.
 */

/** Pod: candidate pools per NIC (`[{"interface","ipv4","ipv6","cleangateway"}]`). */
export const IPPOOLS_ANNOTATION = 'ipam.spidernet.io/ippools';
/** Pod: candidate pools for every NIC (`{"ipv4","ipv6"}`). */
export const IPPOOL_ANNOTATION = 'ipam.spidernet.io/ippool';
/** Namespace: default IPv4 pools for its Pods without their own (`["a","b"]`). */
export const NS_DEFAULT_IPV4_ANNOTATION = 'ipam.spidernet.io/default-ipv4-ippool';
/** Namespace: default IPv6 pools. */
export const NS_DEFAULT_IPV6_ANNOTATION = 'ipam.spidernet.io/default-ipv6-ippool';
/** SpiderSubnet annotations: when present (and the feature is on) they decide, with pools made for the Pod. */
export const SUBNET_ANNOTATIONS = ['ipam.spidernet.io/subnet', 'ipam.spidernet.io/subnets'] as const;

/** The annotations a Pod (or a Pod template) may carry that this module reads. */
export const POD_ANNOTATIONS = [IPPOOLS_ANNOTATION, IPPOOL_ANNOTATION, ...SUBNET_ANNOTATIONS] as const;
export const NAMESPACE_ANNOTATIONS = [NS_DEFAULT_IPV4_ANNOTATION, NS_DEFAULT_IPV6_ANNOTATION] as const;

/** One NIC's candidates as written; `nic` undefined means every NIC of the Pod. */
interface NicCandidates {
  nic: string | undefined;
  ipv4: string[];
  ipv6: string[];
}

/** `unchecked`: not read at all (too large to read within a review's bound), so not known to be refused by Spiderpool. */
export type Parsed = { ok: true; nics: NicCandidates[] } | { ok: false; reason: string; unchecked?: true };

/**
 * Kubernetes' limit on all annotations of an object together (`TotalAnnotationSizeLimitB`,
 * apimachinery's ValidateAnnotationsSize): the API server sends no longer value, and a
 * longer one (a hand-made review) is not parsed.
 */
export const MAX_ANNOTATION_BYTES = 256 * 1024;

/** A Go `encoding/json` type error, carried to the caller as the reason. */
class GoTypeError extends Error {}

/** A JSON type name as Go's decoder names it in its errors. */
function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'object' : typeof value;
}

/**
 * Deepest nesting read. Spiderpool's annotations nest 3 deep (a list of objects of lists);
 * 256 KiB of `[` took 20 ms to parse, for nothing this webhook reads.
 */
export const MAX_JSON_DEPTH = 16;

/** Most JSON objects and lists read: 80 000 empty NIC items took 85 ms to read; a Pod has a few NICs. */
export const MAX_JSON_CONTAINERS = 4096;

/** Why `text` is not parsed (its length, its nesting or its number of objects and lists), found in one pass before `JSON.parse`; undefined when it is. */
function tooLarge(text: string): string | undefined {
  // A UTF-16 unit is at least one UTF-8 byte: a text this long is over the limit in bytes too.
  if (text.length > MAX_ANNOTATION_BYTES)
    return `the value is longer than ${MAX_ANNOTATION_BYTES} bytes, the API server's limit for all annotations of an object`;
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return `the value nests JSON deeper than ${MAX_JSON_DEPTH} levels, more than this webhook reads`;
      if (++containers > MAX_JSON_CONTAINERS) return `the value holds more than ${MAX_JSON_CONTAINERS} JSON objects and lists, more than this webhook reads`;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string; unchecked?: true } {
  const large = tooLarge(text);
  if (large !== undefined) return { ok: false, reason: large, unchecked: true };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: text.trim() === '' ? 'is empty, not JSON' : 'is not valid JSON' };
  }
}

/** `[]string`: `null` is no list, a `null` element is `""`. */
function stringList(value: unknown, where: string): string[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new GoTypeError(`${where} must be a list of pool names, not a JSON ${jsonType(value)}`);
  return value.map((item, i) => {
    if (item === null) return '';
    if (typeof item !== 'string') throw new GoTypeError(`${where}[${i}] must be a pool name (a string), not a JSON ${jsonType(item)}`);
    return item;
  });
}

/** ASCII case folding, as Go's decoder matches `IPv4` to the `ipv4` tag (no tag here holds a letter Unicode folds into ASCII). */
const fold = (key: string): string => key.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** The fields of a JSON object that Go would assign to the struct fields `tags`, in order; the last one wins. */
function fields(object: Record<string, unknown>, tags: readonly string[]): Map<string, unknown> {
  const found = new Map<string, unknown>();
  for (const [key, value] of Object.entries(object)) {
    const tag = fold(key);
    if (tags.includes(tag)) found.set(tag, value);
  }
  return found;
}

function asObject(value: unknown, where: string): Record<string, unknown> | undefined {
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new GoTypeError(`${where} must be a JSON object, not a JSON ${jsonType(value)}`);
  return value as Record<string, unknown>;
}

/**
 * `ipam.spidernet.io/ippools`: a non-empty list of items; `interface` on every item or on
 * none (then the NICs are named `"0"`, `"1"`, … by position); no NIC twice.
 */
export function parseIPPools(text: string): Parsed {
  const json = parseJson(text);
  if (!json.ok) return json;
  try {
    if (json.value !== null && !Array.isArray(json.value)) {
      throw new GoTypeError(`must be a JSON list of {"interface", "ipv4", "ipv6"} items, not a JSON ${jsonType(json.value)}`);
    }
    const items = (json.value ?? []) as unknown[];
    const nics = items.map((item, i): NicCandidates & { named: boolean } => {
      const object = asObject(item, `item ${i}`);
      const f = object === undefined ? new Map<string, unknown>() : fields(object, ['interface', 'ipv4', 'ipv6', 'cleangateway']);
      const nic = f.get('interface') ?? null;
      if (nic !== null && typeof nic !== 'string') throw new GoTypeError(`item ${i}: "interface" must be a string, not a JSON ${jsonType(nic)}`);
      const clean = f.get('cleangateway') ?? null;
      if (clean !== null && typeof clean !== 'boolean') throw new GoTypeError(`item ${i}: "cleangateway" must be true or false, not a JSON ${jsonType(clean)}`);
      return {
        nic: nic ?? '',
        named: (nic ?? '') !== '',
        ipv4: stringList(f.get('ipv4'), `item ${i}: "ipv4"`),
        ipv6: stringList(f.get('ipv6'), `item ${i}: "ipv6"`),
      };
    });
    if (nics.length === 0) return { ok: false, reason: 'must list at least one item' };
    const named = nics[0]!.named;
    if (nics.some((n) => n.named !== named)) return { ok: false, reason: 'must give "interface" on every item or on none' };
    const seen = new Set<string>();
    for (const [i, n] of nics.entries()) {
      const nic = named ? n.nic! : String(i);
      if (seen.has(nic)) return { ok: false, reason: `names interface ${JSON.stringify(nic)} twice` };
      seen.add(nic);
      n.nic = nic;
    }
    return { ok: true, nics: nics.map(({ nic, ipv4, ipv6 }) => ({ nic, ipv4, ipv6 })) };
  } catch (e) {
    if (e instanceof GoTypeError) return { ok: false, reason: e.message };
    throw e;
  }
}

/** `ipam.spidernet.io/ippool`: `{"ipv4": [...], "ipv6": [...]}` for every NIC; `null` names none. */
export function parseIPPool(text: string): Parsed {
  const json = parseJson(text);
  if (!json.ok) return json;
  try {
    const object = asObject(json.value, 'the value');
    const f = object === undefined ? new Map<string, unknown>() : fields(object, ['ipv4', 'ipv6']);
    return { ok: true, nics: [{ nic: undefined, ipv4: stringList(f.get('ipv4'), '"ipv4"'), ipv6: stringList(f.get('ipv6'), '"ipv6"') }] };
  } catch (e) {
    if (e instanceof GoTypeError) return { ok: false, reason: e.message };
    throw e;
  }
}

/** One of the Namespace annotations: a JSON list of pool names; `null` names none. */
export function parseNamespaceDefault(text: string): { ok: true; names: string[] } | { ok: false; reason: string } {
  const json = parseJson(text);
  if (!json.ok) return json;
  try {
    return { ok: true, names: stringList(json.value, 'the value') };
  } catch (e) {
    if (e instanceof GoTypeError) return { ok: false, reason: e.message };
    throw e;
  }
}
