/** kubectl's rendering of webhook denials (k8s.io/kubectl/pkg/cmd/util/helpers.go), as docs/rules.md "What kubectl shows" captured it. */
import { invalidStatus, errored } from '../../src/admission/response.js';
import { forbidden, invalid } from '../../src/kubernetes/field-errors.js';
import { renderAccepted, renderRefusals, renderWarnings, type Refusal } from '../../src/cli/kubectl-output.js';

const POOL = { group: 'spiderpool.spidernet.io', kind: 'SpiderIPPool' };
const refusal = (status: Refusal['status']): Refusal => ({ status, webhook: 'spiderippool.iaas-webhook.spidernet.io', verb: 'creating', source: 'pools.yaml' });

describe('kubectl output', () => {
  it('one Invalid denial with one cause: the cause on the same line', () => {
    const status = invalidStatus(POOL, 'iaas-node-pool', [forbidden('spec.nodeName', 'changing it is refused')]);
    expect(renderRefusals([refusal(status)])).toBe('The SpiderIPPool "iaas-node-pool" is invalid: spec.nodeName: Forbidden: changing it is refused\n');
  });

  it("several causes: kubectl's multi-line form, duplicates dropped", () => {
    const status = invalidStatus(POOL, 'p', [forbidden('spec.nodeName', 'a'), invalid('spec.ips', undefined, 'b'), forbidden('spec.nodeName', 'a')]);
    expect(renderRefusals([refusal(status)])).toBe('The SpiderIPPool "p" is invalid: \n* spec.nodeName: Forbidden: a\n* spec.ips: Invalid value: b\n');
  });

  it('a denial that is not Invalid names the webhook, as the API server words it', () => {
    expect(renderRefusals([refusal(errored(400, 'cannot decode SpiderIPPool').status!)])).toBe(
      'Error from server (BadRequest): error when creating "pools.yaml": admission webhook "spiderippool.iaas-webhook.spidernet.io" denied the request: cannot decode SpiderIPPool\n',
    );
  });

  it("several refused objects: kubectl's aggregate, each with the full message", () => {
    const a = invalidStatus(POOL, 'a', [forbidden('spec.nodeName', 'x')]);
    const b = invalidStatus(POOL, 'b', [forbidden('spec.nodeName', 'y')]);
    expect(renderRefusals([refusal(a), refusal(b)])).toBe(
      'Error from server (Invalid): error when creating "pools.yaml": admission webhook "spiderippool.iaas-webhook.spidernet.io" denied the request: SpiderIPPool.spiderpool.spidernet.io "a" is invalid: spec.nodeName: Forbidden: x\n' +
        'Error from server (Invalid): error when creating "pools.yaml": admission webhook "spiderippool.iaas-webhook.spidernet.io" denied the request: SpiderIPPool.spiderpool.spidernet.io "b" is invalid: spec.nodeName: Forbidden: y\n',
    );
  });

  it('warnings once each per run; accepted writes as kubectl names them', () => {
    const seen = new Set<string>();
    expect(renderWarnings(['w1', 'w2'], seen) + renderWarnings(['w1'], seen)).toBe('Warning: w1\nWarning: w2\n');
    expect(renderAccepted('SpiderIPPool', 'spiderpool.spidernet.io', 'late-v4', 'CREATE')).toBe(
      'spiderippool.spiderpool.spidernet.io/late-v4 created (server dry run)\n',
    );
    expect(renderAccepted('ConfigMap', '', 'spiderpool-conf', 'UPDATE')).toBe('configmap/spiderpool-conf configured (server dry run)\n');
  });
});
