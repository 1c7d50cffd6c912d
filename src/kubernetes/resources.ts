/**
 * Which resource the API server serves a kind as, for the AdmissionReviews `review` builds:
 * `request.kind`/`resource` and whether the object is namespaced and has a status
 * subresource. The kinds this webhook guards and the core workload kinds are listed;
 * any other kind gets the resource kubectl's RESTMapper would guess
 * (k8s.io/apimachinery/pkg/api/meta `UnsafeGuessKindToResource`).
 */
/** Kubernetes group and kind, e.g. `{group: 'spiderpool.spidernet.io', kind: 'SpiderIPPool'}`. */
export interface GroupKind {
  group: string;
  kind: string;
}

export interface ResourceInfo {
  /** Lower-case plural, e.g. `spiderippools`. */
  resource: string;
  namespaced: boolean;
  /**
   * The resource has a `status` subresource: an UPDATE of the main resource keeps the
   * stored status (the API server's update strategies reset it), so `object.status` is
   * the old object's.
   */
  statusSubresource: boolean;
}

/** `group/Kind` → resource, for the kinds the webhook guards and the core workload kinds. */
const KNOWN: ReadonlyMap<string, ResourceInfo> = new Map(
  (
    [
      ['spiderpool.spidernet.io', 'SpiderIPPool', 'spiderippools', false, true],
      ['', 'ConfigMap', 'configmaps', true, false],
      ['', 'Namespace', 'namespaces', false, true],
      ['', 'Pod', 'pods', true, true],
      ['apps', 'Deployment', 'deployments', true, true],
      ['apps', 'StatefulSet', 'statefulsets', true, true],
      ['apps', 'DaemonSet', 'daemonsets', true, true],
      ['apps', 'ReplicaSet', 'replicasets', true, true],
      ['batch', 'Job', 'jobs', true, true],
      ['batch', 'CronJob', 'cronjobs', true, true],
    ] as const
  ).map(([group, kind, resource, namespaced, statusSubresource]) => [`${group}/${kind}`, { resource, namespaced, statusSubresource }]),
);

/**
 * `UnsafeGuessKindToResource`: lower-case, then `s` → `ses`, `y` → `ies`, else `+s`
 * (`endpoints` stays as it is).
 */
export function guessResource(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular.endsWith('endpoints')) return singular;
  if (singular.endsWith('s')) return `${singular}es`;
  if (singular.endsWith('y')) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/**
 * The resource of `groupKind`. An unknown kind is namespaced when its object names a
 * namespace (`namespacedHint`), as the API server's discovery would tell kubectl.
 */
export function resourceOf(groupKind: GroupKind, namespacedHint: boolean): ResourceInfo & { known: boolean } {
  const known = KNOWN.get(`${groupKind.group}/${groupKind.kind}`);
  if (known !== undefined) return { ...known, known: true };
  return { resource: guessResource(groupKind.kind), namespaced: namespacedHint, statusSubresource: false, known: false };
}

/** `apiVersion` split as Kubernetes does: `v1` is the core group, `apps/v1` group `apps`. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
