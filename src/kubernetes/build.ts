/**
 * Builds the AdmissionReview the API server would send for a write of a manifest, so that
 * `review` judges plain manifests with the server's own reviewer (what `kyverno apply` and
 * `gator test` do, without kyverno#9188: `object` and `oldObject` are always the two
 * objects given, never one object twice). The fields follow
 * k8s.io/apiserver/pkg/admission/plugin/webhook/request (`CreateAdmissionObjects`).
 */
import { randomUUID } from 'node:crypto';
import { resourceOf, splitApiVersion } from './resources.js';
import { ADMISSION_API_VERSION, type AdmissionReviewRequest } from './schema.js';

/** A Kubernetes object as read from a manifest: at least `apiVersion` and `kind`. */
export type KubeObject = Record<string, unknown> & { apiVersion: string; kind: string; metadata?: Record<string, unknown> };

/** Who the request is from: `userInfo` of the review. */
interface UserInfo {
  username: string;
  groups: string[];
}

/** The user offline reviews run as, unless told otherwise: an authenticated user with no other group. */
const REVIEW_USER: UserInfo = { username: 'spiderpool-iaas-webhook-review', groups: ['system:authenticated'] };

export interface AdmissionWrite {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  /** CREATE, UPDATE: the object to be written. DELETE: unused (the object is `oldObject`). */
  object?: KubeObject;
  /** UPDATE: the stored object; DELETE: the object to delete; ignored on CREATE (`oldObject` is null). */
  oldObject?: KubeObject;
  /** For namespaced kinds whose object names no namespace, as kubectl's context does (default `default`). */
  defaultNamespace?: string;
  userInfo?: UserInfo;
  /** `request.uid` (default: a random UUID, as the API server makes one per call). */
  uid?: string;
}

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const;

const metadataOf = (object: KubeObject | undefined): Record<string, unknown> => {
  const metadata = object?.metadata;
  return metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata : {};
};
const stringField = (record: Record<string, unknown>, key: string): string | undefined =>
  typeof record[key] === 'string' && record[key] !== '' ? (record[key] as string) : undefined;

/**
 * The AdmissionReview request for `write`. As the API server does before validating
 * admission: a namespaced object gets the request's namespace; an UPDATE's object keeps
 * the stored `uid`, `resourceVersion` and `creationTimestamp` when it does not set them,
 * and the stored `status` when the kind has a status subresource.
 *
 * @throws Error when the operation lacks its object (`object` for CREATE and UPDATE,
 *   `oldObject` for UPDATE and DELETE).
 */
export function buildAdmissionReview(write: AdmissionWrite): AdmissionReviewRequest {
  const { operation } = write;
  const subject = operation === 'DELETE' ? write.oldObject : write.object;
  if (subject === undefined) throw new Error(`${operation} needs ${operation === 'DELETE' ? 'the object to delete' : 'the object to write'}`);
  if (operation === 'UPDATE' && write.oldObject === undefined) throw new Error('UPDATE needs the stored object (oldObject)');
  const { group, version } = splitApiVersion(subject.apiVersion);
  const kind = subject.kind;
  const metadata = metadataOf(subject);
  const info = resourceOf({ group, kind }, stringField(metadata, 'namespace') !== undefined);
  const namespace = info.namespaced ? (stringField(metadata, 'namespace') ?? write.defaultNamespace ?? 'default') : undefined;
  const place = (object: KubeObject | undefined): KubeObject | undefined => {
    if (object === undefined) return undefined;
    const own = metadataOf(object);
    return namespace === undefined || own['namespace'] === namespace ? object : { ...object, metadata: { ...own, namespace } };
  };
  const oldObject = operation === 'CREATE' ? undefined : place(write.oldObject);
  let object = operation === 'DELETE' ? undefined : place(write.object);
  if (operation === 'UPDATE' && object !== undefined && oldObject !== undefined) object = carryOver(oldObject, object, info.statusSubresource);
  const name = stringField(metadata, 'name');
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'AdmissionReview',
    request: {
      uid: write.uid ?? randomUUID(),
      kind: { group, version, kind },
      resource: { group, version, resource: info.resource },
      requestKind: { group, version, kind },
      requestResource: { group, version, resource: info.resource },
      ...(name !== undefined ? { name } : {}),
      ...(namespace !== undefined ? { namespace } : {}),
      operation,
      userInfo: write.userInfo ?? REVIEW_USER,
      object: object ?? null,
      oldObject: oldObject ?? null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[operation], ...(operation === 'DELETE' ? {} : { fieldManager: 'kubectl' }) },
    },
  } as AdmissionReviewRequest;
}

/** What the stored object keeps across an UPDATE of the main resource. */
function carryOver(oldObject: KubeObject, object: KubeObject, statusSubresource: boolean): KubeObject {
  const stored = metadataOf(oldObject);
  const metadata = { ...metadataOf(object) };
  for (const key of ['uid', 'resourceVersion', 'creationTimestamp'] as const) {
    if (metadata[key] === undefined && stored[key] !== undefined) metadata[key] = stored[key];
  }
  const updated: KubeObject = { ...object, metadata };
  if (statusSubresource) {
    if (oldObject['status'] === undefined) delete updated['status'];
    else updated['status'] = oldObject['status'];
  }
  return updated;
}
