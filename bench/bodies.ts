/**
 * The request bodies the benchmark sends: AdmissionReviews shaped as the kube-apiserver
 * sends them (compact JSON, `managedFields`, labels, Spiderpool's
 * `status.allocatedIPs` JSON string), built from the shapes in `test/fixtures/reviews/`.
 */
import { readFileSync } from 'node:fs';

/** One body the servers are driven with. */
export interface BenchBody {
  /** Short key used in results and the table: `a`, `b`, `c`, `d`. */
  id: string;
  title: string;
  /** Webhook path it is posted to. */
  path: string;
  /** The compact JSON, as sent. */
  json: string;
  uid: string;
  /** What this webhook and the Go reference answer; the Node ceiling always allows. */
  expectAllowed: boolean;
}

type Json = Record<string, any>;

function fixture(name: string): Json {
  return JSON.parse(readFileSync(new URL(`../../test/fixtures/reviews/${name}.json`, import.meta.url), 'utf8'));
}

/** A Spiderpool allocation record, as `status.allocatedIPs` maps IP → record. */
function allocation(i: number): Json {
  return {
    interface: 'eth0',
    pod: `default/web-7d9c5b8f4-${(i * 7919).toString(36).padStart(5, 'x')}`,
    podUid: `9c1f${i.toString(16).padStart(4, '0')}-2b7e-4d1a-8f3c-5e6d7a8b9c0d`,
    node: `worker-${i % 50}`,
    vlan: 0,
  };
}

/** `count` allocations as Spiderpool stores them: one JSON string inside the object. */
function allocatedIPs(count: number): string {
  const records: Json = {};
  for (let i = 0; i < count; i++) records[`10.6.${Math.floor(i / 250)}.${(i % 250) + 2}`] = allocation(i);
  return JSON.stringify(records);
}

/**
 * An IaaS node pool as the API server stores it, with `allocations` entries in
 * `status.allocatedIPs` (the part that grows with a busy pool).
 */
function iaasPool(base: Json, allocations: number): Json {
  const pool = structuredClone(base);
  const spec = { ...pool.spec, ips: ['10.6.0.2-10.6.127.250'], subnet: '10.6.0.0/16', routes: [{ dst: '10.7.0.0/16', gw: '10.6.0.1' }] };
  pool.metadata.labels = { 'app.kubernetes.io/managed-by': 'spiderpool-iaas', 'ipam.spidernet.io/subnet-cidr': '10-6-0-0-16' };
  pool.metadata.managedFields[0].fieldsV1['f:metadata']['f:labels'] = { '.': {}, 'f:app.kubernetes.io/managed-by': {}, 'f:ipam.spidernet.io/subnet-cidr': {} };
  pool.metadata.managedFields[0].fieldsV1['f:spec']['f:routes'] = {};
  pool.metadata.managedFields[0].fieldsV1['f:spec']['f:nodeName'] = {};
  pool.metadata.managedFields[1].fieldsV1['f:status']['f:allocatedIPs'] = {};
  pool.spec = spec;
  pool.status = { allocatedIPCount: allocations, totalIPCount: 32_512, allocatedIPs: allocatedIPs(allocations) };
  return pool;
}

/** An UPDATE of an IaaS node pool with `allocations` allocations; `newNodeName` is the new spec.nodeName. */
function poolUpdate(uid: string, allocations: number, newNodeName: string[] | undefined): Json {
  const review = fixture('pool-update-node-to-other-node');
  review.request.uid = uid;
  const oldObject = iaasPool(review.request.oldObject, allocations);
  const object = structuredClone(oldObject);
  object.metadata.resourceVersion = String(Number(oldObject.metadata.resourceVersion) + 1);
  if (newNodeName === undefined) delete object.spec.nodeName;
  else object.spec.nodeName = newNodeName;
  review.request.oldObject = oldObject;
  review.request.object = object;
  return review;
}

function body(id: string, title: string, path: string, review: Json, expectAllowed: boolean): BenchBody {
  return { id, title, path, json: JSON.stringify(review), uid: review.request.uid, expectAllowed };
}

/**
 * Bodies (a)–(d) of the performance comparison: (a) an allowed ~4 KB IaaS pool UPDATE (the node changes),
 * (b) the same UPDATE removing spec.nodeName (denied), (c) the `spiderpool-conf`
 * ConfigMap UPDATE to a valid timeout (allowed), (d) an allowed ~1 MiB pool UPDATE
 * (about 3,150 allocations in each of object and oldObject).
 */
export function benchBodies(): BenchBody[] {
  const configMap = fixture('configmap-update-timeout-50s');
  configMap.request.uid = 'bench-c-0000-0000-0000-000000000003';
  return [
    body('a', 'pool UPDATE, allowed', '/validate-spiderippool', poolUpdate('bench-a-0000-0000-0000-000000000001', 2, ['worker-2']), true),
    body('b', 'pool UPDATE, denied', '/validate-spiderippool', poolUpdate('bench-b-0000-0000-0000-000000000002', 2, undefined), false),
    body('c', 'spiderpool-conf UPDATE', '/validate-configmap', configMap, true),
    body('d', '~1 MiB pool UPDATE', '/validate-spiderippool', poolUpdate('bench-d-0000-0000-0000-000000000004', 3_150, ['worker-2']), true),
  ];
}

/**
 * The largest pool UPDATE a default cluster can store: `oldObject` and `object` each
 * 1,572,709 bytes, just under etcd's default `--max-request-bytes` (1.5 MiB = 1,572,864,
 * less room for the key), so the review is 3,146,218 bytes, a little over 3 MiB. Not
 * load-tested; sent once to each server to see which accept it (docs/performance.md, "Body limit").
 */
export function nearLimitBody(): BenchBody {
  return body('limit', 'pool UPDATE at etcd limit', '/validate-spiderippool', poolUpdate('bench-limit-0000-0000-000000000005', 9_448, ['worker-2']), true);
}
