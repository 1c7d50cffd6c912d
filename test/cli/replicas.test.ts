/** `serve --peer-readiness` and `--rebalance` say in one line what they lack, and are nothing without the flags. */
import { pino } from 'pino';
import { watchReplicas } from '../../src/cli/replicas.js';

const server = { port: 8443, ready: () => true };
const logger = pino({ level: 'silent' });

describe('watchReplicas', () => {
  it('starts nothing without --peer-readiness or --rebalance', async () => {
    await expect(watchReplicas({ peerReadiness: false }, server, logger)).resolves.toBeUndefined();
    await expect(watchReplicas({}, server, logger)).resolves.toBeUndefined();
  });

  it.each([
    [
      { namespace: 'spiderpool-iaas-webhook' },
      /^--peer-readiness needs the pod's name: pass --pod-name or set POD_NAME \(the downward API's metadata\.name\)$/,
    ],
    [{ podName: 'a' }, /^--peer-readiness needs the pod's namespace: pass --namespace or set POD_NAMESPACE/],
    [
      { podName: 'a', namespace: 'spiderpool-iaas-webhook', kubeconfig: '/nonexistent/kubeconfig' },
      /^cannot read the kubeconfig given by --kubeconfig \(\/nonexistent\/kubeconfig\)/,
    ],
  ])('refuses to start without what it needs: %j', async (flags, message) => {
    await expect(watchReplicas({ peerReadiness: true, ...flags }, server, logger)).rejects.toThrow(message);
  });

  it('names --rebalance when only it is given', async () => {
    await expect(watchReplicas({ rebalance: true, namespace: 'spiderpool-iaas-webhook' }, server, logger)).rejects.toThrow(/^--rebalance needs the pod's name/);
  });
});
