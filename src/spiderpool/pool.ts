/**
 * The SpiderIPPool as the rules read it (spidernet-io/spiderpool
 * `pkg/k8s/apis/spiderpool.spidernet.io/v2beta1`, `IPPoolSpec`), and the annotations of
 * Spiderpool's IaaS pool work. The schema lists only the fields the rules read; any other
 * field, present or future, is ignored.
 */
import { z } from 'zod';
import { listOf, stringEntries } from '../kubernetes/containers.js';
import type { GroupKind } from '../kubernetes/resources.js';
import { Path } from '../kubernetes/field-path.js';
import { quoteShown } from '../go/strconv-quote.js';
import type { IPVersion } from './ip-ranges.js';

/** Spiderpool's IP pool kind (cluster-scoped, served as `v2beta1`). */
export const SPIDERIPPOOL: GroupKind = { group: 'spiderpool.spidernet.io', kind: 'SpiderIPPool' };

/** Its presence marks an IaaS pool, whose addresses are cloud sub-ENIs the provider manages; its value names the provider. */
export const IAAS_PROVIDER_ANNOTATION = 'ipam.spidernet.io/iaas-provider';
/** On a node pool: the node's interface its sub-ENIs hang from. */
export const PARENT_NIC_ANNOTATION = 'ipam.spidernet.io/parent-nic';
/** Names the other pool of a dual-stack pair (one IPv4, one IPv6). */
export const PAIR_POOL_ANNOTATION = 'ipam.spidernet.io/pair-pool';

/** The annotations the rules read; the schema reads no others. */
const POOL_ANNOTATIONS = [IAAS_PROVIDER_ANNOTATION, PARENT_NIC_ANNOTATION, PAIR_POOL_ANNOTATION] as const;
export type PoolAnnotation = (typeof POOL_ANNOTATIONS)[number];

/** `metadata.annotations[<key>]` under `under` (the object, or a Pod template), the field path Kubernetes writes for an annotation. */
export const annotationField = (key: string, under: Path = Path.ROOT): string => under.child('metadata', 'annotations').key(key).toString();

/** The fields the rules read, with their Go types (`[]string`, `*int64`); unknown fields pass. */
export const SpiderIPPoolSchema = z.object({
  metadata: z.object({
    name: z.string().optional(),
    annotations: stringEntries(POOL_ANNOTATIONS).nullish(),
  }),
  spec: z
    .object({
      /** `[]string` with `omitempty`: absent, `null` and `[]` all mean "no node". */
      nodeName: listOf(z.string()).nullish(),
      /** `*int64`; Spiderpool's mutating webhook sets it from `subnet` when absent. */
      ipVersion: z.number().nullish(),
      subnet: z.string().nullish(),
      ips: listOf(z.string()).nullish(),
      excludeIPs: listOf(z.string()).nullish(),
      /** A cluster default pool: a candidate for every Pod NIC no other source gives pools to. */
      default: z.boolean().nullish(),
      /** A `metav1.LabelSelector`; only compared between the pools of a pair. */
      podAffinity: z.unknown().optional(),
    })
    .nullish(),
  /** Written by Spiderpool's IPAM; read only as {@link allocations} does, whatever its shape. */
  status: z.unknown().optional(),
});
export type SpiderIPPool = z.infer<typeof SpiderIPPoolSchema>;

/** The value of annotation `key`, or `undefined` when the pool does not carry it. */
export function annotation(pool: SpiderIPPool, key: PoolAnnotation): string | undefined {
  return pool.metadata.annotations?.[key];
}

/** The provider annotation's value, or `undefined` for a traditional pool. */
export function iaasProvider(pool: SpiderIPPool): string | undefined {
  return annotation(pool, IAAS_PROVIDER_ANNOTATION);
}

/** `spec.nodeName` as a list; absent and `null` are `[]` (a global pool). */
export function nodeNames(pool: SpiderIPPool): string[] {
  return pool.spec?.nodeName ?? [];
}

/**
 * `spec.ipVersion`, or, when it is not set yet, the version of `spec.subnet` (as
 * Spiderpool's mutating webhook derives it); `undefined` when neither tells.
 */
export function ipVersionOf(pool: SpiderIPPool): IPVersion | undefined {
  const version = pool.spec?.ipVersion;
  if (version === 4 || version === 6) return version;
  if (version !== undefined && version !== null) return undefined;
  const subnet = pool.spec?.subnet;
  if (!subnet) return undefined;
  return subnet.includes(':') ? 6 : 4;
}

/** How many node names a message lists before summarising the rest. */
const NODES_SHOWN = 3;

/** `none` or `["worker-1", "worker-2"]`, bounded so a hostile list cannot flood the message. */
export function showNodes(nodes: readonly string[]): string {
  if (nodes.length === 0) return 'none';
  const shown = nodes.slice(0, NODES_SHOWN).map(quoteShown);
  if (nodes.length > NODES_SHOWN) shown.push(`… ${nodes.length - NODES_SHOWN} more`);
  return `[${shown.join(', ')}]`;
}

/** What the reduced status says of addresses in use: {@link allocationStatus}. */
export interface AllocationStatus {
  /** A positive `status.allocatedIPCount`, as a number. */
  allocatedIPCount?: number;
  /** Present when `status.allocatedIPs` is not empty (without the allocations themselves). */
  allocatedIPs?: typeof ALLOCATED_IPS_NOT_KEPT;
}

/** What {@link allocationStatus} keeps of a non-empty `status.allocatedIPs`: a non-empty JSON map, the allocations left out. */
export const ALLOCATED_IPS_NOT_KEPT = '{"(allocations not kept)":""}';

/**
 * The pool's status reduced to what {@link allocations} reads, `undefined` when no address
 * is in use: what a cache keeps of a status whose `allocatedIPs` holds ~140 bytes per
 * address. `allocations` says the same of the reduced status as of the whole one.
 * Spiderpool's IPAM keeps `allocatedIPCount` (`*int64`) and `allocatedIPs` (`*string`, a
 * JSON map of address to Pod) in the status subresource. Any other shape is read on the
 * safe side: a count that is a positive number or numeric text, and an `allocatedIPs`
 * that is a non-empty map or list, or text that is not JSON for an empty one (`""`,
 * `{}`, `[]`, `null`), all mean in use.
 */
export function allocationStatus(pool: SpiderIPPool): AllocationStatus | undefined {
  const status = pool.status;
  if (status === null || typeof status !== 'object' || Array.isArray(status)) return undefined;
  const { allocatedIPCount: count, allocatedIPs: ips } = status as Record<string, unknown>;
  const counted = typeof count === 'number' ? count : typeof count === 'string' && /^\s*[0-9]+\s*$/.test(count) ? Number(count) : 0;
  if (counted > 0) return { allocatedIPCount: counted };
  return nonEmpty(ips) ? { allocatedIPs: ALLOCATED_IPS_NOT_KEPT } : undefined;
}

/**
 * What shows that a stored pool has addresses in use, for a message: `status.allocatedIPCount 3`,
 * or `undefined` when it has none ({@link allocationStatus}).
 */
export function allocations(pool: SpiderIPPool): string | undefined {
  const inUse = allocationStatus(pool);
  if (inUse === undefined) return undefined;
  return inUse.allocatedIPCount !== undefined ? `status.allocatedIPCount ${inUse.allocatedIPCount}` : 'status.allocatedIPs not empty';
}

function nonEmpty(value: unknown): boolean {
  if (typeof value === 'string') {
    if (value.trim() === '') return false;
    try {
      return nonEmpty(JSON.parse(value) ?? {});
    } catch {
      return true; // not JSON: it cannot be shown empty, so it counts as in use
    }
  }
  if (Array.isArray(value)) return value.length > 0;
  return value !== null && typeof value === 'object' && Object.keys(value).length > 0;
}
