/**
 * The shape of one IaaS pool on its own (rules 1-3 of the shape): the provider annotation
 * names a provider, a node pool is pinned to exactly one node and names the parent NIC
 * its sub-ENIs hang from. Spiderpool's IaaS-pool validating webhook has the same rules
 * (`pkg/ippoolmanager/ippool_validate.go`: `validateIaasSingleNode`,
 * `validateIaasParentNic`); the interface-name rule here is the kernel's, and a
 * parent NIC on a global pool is only a warning, as the issue asks. Each rule returns
 * {@link Violation}s so that UPDATEs can be ratcheted.
 */
import { invalid, required, type FieldError } from '../kubernetes/field-errors.js';
import { Path } from '../kubernetes/field-path.js';
import type { PoolRule } from './rule-names.js';
import type { Findings, Violation } from './ratchet.js';
import {
  IAAS_PROVIDER_ANNOTATION,
  PARENT_NIC_ANNOTATION,
  annotation,
  annotationField,
  iaasProvider,
  nodeNames,
  showNodes,
  type SpiderIPPool,
} from '../spiderpool/pool.js';

/** A rule of one pool alone: its name is its key, as the pool holds at most one such violation. */
const violation = (rule: PoolRule, measure: string | bigint, error: FieldError): Violation => ({ rule, key: rule, measure, error });

/** Rule 1: the provider annotation's value names the provider, so it may not be empty. */
function emptyProvider(pool: SpiderIPPool): Violation | undefined {
  if (iaasProvider(pool) !== '') return undefined;
  return violation(
    'provider-empty',
    '',
    required(
      annotationField(IAAS_PROVIDER_ANNOTATION),
      'the annotation marks an IaaS pool and its value names the IaaS provider that manages the pool\'s sub-ENIs; ' +
        'an empty name matches no provider, so Pods would fail at start; set it to the provider\'s name',
    ),
  );
}

/**
 * Rule 2: a node pool is pinned to exactly one node, its addresses being sub-ENIs
 * pre-warmed on that node. More entries are refused (their count is the measure, so an
 * existing over-long list may shrink but not grow), and so are empty entries.
 */
function nodeList(pool: SpiderIPPool): Violation[] {
  const nodes = nodeNames(pool);
  const found: Violation[] = [];
  if (nodes.length > 1) {
    found.push(
      violation(
        'nodes-count',
        BigInt(nodes.length),
        invalid(
          'spec.nodeName',
          undefined,
          `lists ${nodes.length} nodes (${showNodes(nodes)}), but an IaaS node pool is pinned to exactly one node: its addresses ` +
            'are sub-ENIs pre-warmed on that node and cannot serve Pods elsewhere; keep one node here and create one pool per node',
        ),
      ),
    );
  }
  const empty = nodes.indexOf('');
  if (empty >= 0) {
    // One cause for all empty entries, at the first: a list of many "" must not become as
    // many causes. Their count is the measure, so an existing one may not multiply.
    const count = nodes.filter((node) => node === '').length;
    const others = count > 1 ? ` (${count - 1} more entries are empty too)` : '';
    found.push(
      violation(
        'node-empty',
        BigInt(count),
        invalid(
          Path.of('spec', 'nodeName').index(empty).toString(),
          '',
          `names no node${others}, so the pool's sub-ENIs would be pre-warmed nowhere; write the name of the node the pool is pinned to`,
        ),
      ),
    );
  }
  return found;
}

/** The kernel's limit for an interface name, `IFNAMSIZ` minus the terminating NUL. */
const MAX_IFNAME_BYTES = 15;

/**
 * Why `name` is not a Linux interface name, or `undefined` when it is one. The rules are
 * the kernel's `dev_valid_name` (net/core/dev.c): 1-15 bytes, not `.` or `..`, and no
 * `/`, `:` or whitespace (`isspace`); a NUL byte cannot be part of a C string either.
 */
export function interfaceNameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0) return 'is empty';
  if (bytes > MAX_IFNAME_BYTES) return `is ${bytes} bytes long, more than Linux allows for an interface name (${MAX_IFNAME_BYTES})`;
  if (name === '.' || name === '..') return 'is not allowed as an interface name by Linux';
  if (/[/:\0 \t\n\v\f\r]/.test(name)) return 'contains "/", ":", a NUL or whitespace, which Linux does not allow in an interface name';
  return undefined;
}

/**
 * Go's `unicode.IsSpace` (what `strings.TrimSpace` and `strings.Fields` use): JavaScript's
 * `\s` differs, adding U+FEFF and lacking U+0085.
 */
const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
/** Nothing but Go whitespace (or nothing at all): what `strings.TrimSpace` empties. */
const ONLY_GO_SPACE = new RegExp(`^${GO_SPACE.source}*$`, 'u');

/**
 * Why `nic` does not name exactly one NIC, or `undefined` when it does (Spiderpool's
 * IaaS-pool webhook, `validateIaasParentNic`, on any IaaS pool): empty after Go's
 * `strings.TrimSpace`, a `,` (a comma is legal in a Linux interface name, so the kernel's
 * rule alone lets `eth0,eth1` through), or whitespace.
 */
export function oneNicProblem(nic: string): string | undefined {
  if (ONLY_GO_SPACE.test(nic)) return 'is empty after trimming whitespace';
  if (nic.includes(',')) return 'holds a ","';
  if (GO_SPACE.test(nic)) return 'contains whitespace';
  return undefined;
}

/** The end of every parent-NIC message: what to write. Short, as a ratcheted one becomes a warning. */
const ONE_NIC = 'write the one interface the sub-ENIs hang from (1-15 bytes; no "/", ":", "," or whitespace; not "." or ".."), e.g. eth0';

/**
 * Rule 3: the parent NIC names one interface on any IaaS pool; a node pool must name it,
 * as a valid Linux interface name. On a global pool the annotation has no meaning (its
 * sub-ENIs go to whichever node a Pod runs on), which is a warning only.
 */
function parentNic(pool: SpiderIPPool): Findings {
  const field = annotationField(PARENT_NIC_ANNOTATION);
  const nic = annotation(pool, PARENT_NIC_ANNOTATION);
  const nodePool = nodeNames(pool).length > 0;
  const warnings =
    !nodePool && nic !== undefined
      ? [`${field}: has no meaning on a global pool (no spec.nodeName), whose sub-ENIs are attached on whichever node a Pod runs; it is ignored, remove it`]
      : [];
  if (nic === undefined) {
    if (!nodePool) return { violations: [], warnings };
    const detail =
      'an IaaS node pool must name the interface on its node that its sub-ENIs hang from, or the provider cannot attach them ' +
      'and Pods fail at start; add the annotation with the node\'s parent interface, e.g. eth0';
    return { violations: [violation('parent-nic-missing', '', required(field, detail))], warnings };
  }
  const oneNic = oneNicProblem(nic);
  if (oneNic !== undefined) return { violations: [violation('parent-nic-one', nic, invalid(field, nic, `${oneNic}; ${ONE_NIC}`))], warnings };
  const problem = nodePool ? interfaceNameProblem(nic) : undefined;
  if (problem === undefined) return { violations: [], warnings };
  return { violations: [violation('parent-nic-invalid', nic, invalid(field, nic, `${problem}; ${ONE_NIC}`))], warnings };
}

/**
 * Rules 1-3 for an IaaS pool (the caller checks that it is one).
 *
 * @returns the violations (field paths such as `spec.nodeName[1]` or
 *   `metadata.annotations[ipam.spidernet.io/parent-nic]`) and warnings as `<field>: <text>`.
 */
export function shapeFindings(pool: SpiderIPPool): Findings {
  const nic = parentNic(pool);
  const violations = [emptyProvider(pool), ...nodeList(pool), ...nic.violations].filter((v): v is Violation => v !== undefined);
  return { violations, warnings: nic.warnings };
}

