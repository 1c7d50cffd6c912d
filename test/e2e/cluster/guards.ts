/**
 * Which guards of SpiderIPPool writes a test cluster has: the ValidatingAdmissionPolicy
 * of deploy/components/validating-admission-policy/ and the webhook (its
 * ValidatingWebhookConfiguration, as `register` writes it), each installed or removed on
 * demand, and known to be in force from what the API server answers:
 *
 *   const guards = await clusterGuards(cluster, api);   // stores the probe pool
 *   await guards.set({ policy: true, webhook: false });  // resolves once in force
 *
 * The API server picks up both kinds of configuration through informers, so a change is
 * in force only once two probes say so: a dry run removing `spec.nodeName` from a stored
 * IaaS node pool (refused by either guard; the policy's message names it), and a dry run
 * of a `spiderpool-conf` with a bad timeout (refused by the webhook alone).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { until } from '../../helpers/until.js';
import type { ApiClient } from './api-client.js';
import type { Cluster } from './harness.js';
import { ROOT } from './webhook.js';

export const POOLS_PATH = '/apis/spiderpool.spidernet.io/v2beta1/spiderippools';
const ADMISSION_PATH = '/apis/admissionregistration.k8s.io/v1';
export const POLICY_FILE = path.join(ROOT, 'deploy/components/validating-admission-policy/validatingadmissionpolicy.yaml');

export interface GuardState {
  policy: boolean;
  webhook: boolean;
}

export interface Guards {
  /** Installs or removes each guard; resolves once the API server answers accordingly (60 s at most, else throws). */
  set(state: GuardState): Promise<void>;
}

const PROBE_NAME = 'guard-probe';
const PROBE = {
  apiVersion: 'spiderpool.spidernet.io/v2beta1',
  kind: 'SpiderIPPool',
  metadata: { name: PROBE_NAME, annotations: { 'ipam.spidernet.io/iaas-provider': 'cloud', 'ipam.spidernet.io/parent-nic': 'eth0' } },
  spec: { subnet: '10.6.0.0/16', nodeName: ['w1'] },
};
const CONF_PROBE = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'spiderpool-conf', namespace: 'kube-system' },
  data: { 'conf.yml': 'iaasNetworkProvider:\n  serverUrl: http://probe:80\n  httpRequestTimeout: not-a-duration\n' },
};

/**
 * The guards of `cluster` (started with the webhook registered, the policy absent).
 *
 * @throws Error when the probe pool cannot be stored.
 */
export async function clusterGuards(cluster: Cluster, api: ApiClient): Promise<Guards> {
  const stored = await api.request('POST', POOLS_PATH, PROBE);
  if (stored.status !== 201) throw new Error(`storing the probe pool: ${stored.status} ${JSON.stringify(stored.body)}`);
  const [policy, binding] = parseAllDocuments(readFileSync(POLICY_FILE, 'utf8')).map((d) => d.toJS() as Record<string, any>);
  const objects = [
    ['validatingadmissionpolicies', policy!],
    ['validatingadmissionpolicybindings', binding!],
  ] as const;

  // An UPDATE of a custom resource must name the version it replaces.
  const withoutNode = { ...PROBE, metadata: { ...PROBE.metadata, resourceVersion: stored.body.metadata.resourceVersion }, spec: { subnet: '10.6.0.0/16' } };
  const inForce = async (): Promise<GuardState> => {
    const pool = await api.request('PUT', `${POOLS_PATH}/${PROBE_NAME}?dryRun=All`, withoutNode);
    const conf = await api.request('POST', '/api/v1/namespaces/kube-system/configmaps?dryRun=All', CONF_PROBE);
    return { policy: pool.status === 422 && String(pool.body?.message).includes('ValidatingAdmissionPolicy'), webhook: conf.status === 422 };
  };
  let wanted: GuardState = { policy: false, webhook: true };

  return {
    async set(state) {
      if (state.policy !== wanted.policy) {
        for (const [resource, object] of state.policy ? objects : [...objects].reverse()) {
          const answer = state.policy
            ? await api.request('POST', `${ADMISSION_PATH}/${resource}`, object)
            : await api.request('DELETE', `${ADMISSION_PATH}/${resource}/${object['metadata']['name']}`);
          if (answer.status !== 200 && answer.status !== 201)
            throw new Error(`${state.policy ? 'creating' : 'deleting'} ${resource}: ${answer.status} ${JSON.stringify(answer.body)}`);
        }
      }
      if (state.webhook !== wanted.webhook) {
        if (state.webhook) await cluster.register();
        else {
          const deleted = await cluster.kubectl(['delete', 'validatingwebhookconfiguration', 'spiderpool-iaas-webhook']);
          if (deleted.code !== 0) throw new Error(`deleting the webhook configuration: ${deleted.stderr}`);
        }
      }
      wanted = state;
      let last: GuardState | undefined;
      await until(
        async () => {
          last = await inForce();
          return last.policy === state.policy && last.webhook === state.webhook;
        },
        `guards ${JSON.stringify(state)} in force`,
        { timeoutMs: 60_000, intervalMs: 250, describe: () => JSON.stringify(last) },
      );
    },
  };
}
