/** The AdmissionReviews `review` builds from manifests carry what the API server would set. */
import { buildAdmissionReview, type KubeObject } from '../../src/kubernetes/build.js';
import { guessResource } from '../../src/kubernetes/resources.js';
import { decodeAdmissionReview } from '../../src/admission/review.js';
import { spiderIPPool } from '../helpers/pools.js';

const pool = (nic: string, status?: unknown): KubeObject => spiderIPPool('p', { provider: 'cloud', nic, ...(status === undefined ? {} : { status }) });

describe('buildAdmissionReview', () => {
  it('CREATE of a cluster-scoped pool: kind, resource, name, no namespace, userInfo, options, no oldObject', () => {
    const review = buildAdmissionReview({ operation: 'CREATE', object: pool('eth0') });
    const request = review.request as Record<string, unknown>;
    expect(decodeAdmissionReview(review).request.operation).toBe('CREATE');
    expect(request).toMatchObject({
      kind: { group: 'spiderpool.spidernet.io', version: 'v2beta1', kind: 'SpiderIPPool' },
      resource: { group: 'spiderpool.spidernet.io', version: 'v2beta1', resource: 'spiderippools' },
      requestKind: { group: 'spiderpool.spidernet.io', version: 'v2beta1', kind: 'SpiderIPPool' },
      requestResource: { group: 'spiderpool.spidernet.io', version: 'v2beta1', resource: 'spiderippools' },
      name: 'p',
      operation: 'CREATE',
      userInfo: { username: expect.any(String), groups: ['system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    });
    expect(request).not.toHaveProperty('namespace');
    expect(request['uid']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('UPDATE: object and oldObject are the two objects given; the stored status is kept (status subresource)', () => {
    const old = pool('eth0', { allocatedIPCount: 2 });
    const updated = pool('eth1');
    const { request } = buildAdmissionReview({ operation: 'UPDATE', object: updated, oldObject: old });
    expect(request.oldObject).toBe(old);
    expect((request.object as KubeObject).metadata!['annotations']).toEqual(updated.metadata!['annotations']);
    expect((request.object as KubeObject)['status']).toEqual({ allocatedIPCount: 2 });
    expect((request as Record<string, unknown>)['options']).toMatchObject({ kind: 'UpdateOptions' });
  });

  it('CREATE never carries an oldObject, even when one is passed', () => {
    expect(buildAdmissionReview({ operation: 'CREATE', object: pool('eth0'), oldObject: pool('eth1') }).request.oldObject).toBeNull();
  });

  it('DELETE: object is null, oldObject the object', () => {
    const { request } = buildAdmissionReview({ operation: 'DELETE', oldObject: pool('eth0') });
    expect(request.object).toBeNull();
    expect(request.oldObject).toMatchObject({ kind: 'SpiderIPPool' });
  });

  it('namespaced kinds get the namespace, from the object or the default, in the request and the object', () => {
    const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'spiderpool-conf' } };
    const { request } = buildAdmissionReview({ operation: 'CREATE', object: configMap, defaultNamespace: 'kube-system' });
    expect(request).toMatchObject({ namespace: 'kube-system', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { resource: 'configmaps' } });
    expect((request.object as KubeObject).metadata).toEqual({ name: 'spiderpool-conf', namespace: 'kube-system' });
    const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } };
    expect(buildAdmissionReview({ operation: 'CREATE', object: deployment }).request).toMatchObject({
      namespace: 'shop',
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    });
  });

  it.each([
    ['Pod', 'pods'],
    ['NetworkPolicy', 'networkpolicies'],
    ['Ingress', 'ingresses'],
    ['Endpoints', 'endpoints'],
  ])('an unknown kind %s gets the resource kubectl would guess (%s)', (kind, resource) => {
    expect(guessResource(kind)).toBe(resource);
  });

  it('the core workload kinds map to their resources', () => {
    const resources = ['Pod', 'Namespace', 'Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'ConfigMap'].map((kind) => {
      const apiVersion = ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet'].includes(kind)
        ? 'apps/v1'
        : ['Job', 'CronJob'].includes(kind)
          ? 'batch/v1'
          : 'v1';
      const { request } = buildAdmissionReview({ operation: 'CREATE', object: { apiVersion, kind, metadata: { name: 'x' } } });
      return [request.resource.resource, request.namespace];
    });
    expect(resources).toEqual([
      ['pods', 'default'],
      ['namespaces', undefined],
      ['deployments', 'default'],
      ['statefulsets', 'default'],
      ['daemonsets', 'default'],
      ['replicasets', 'default'],
      ['jobs', 'default'],
      ['cronjobs', 'default'],
      ['configmaps', 'default'],
    ]);
  });
});
