/** `serve --peer-readiness` says in one line what it lacks, and is nothing without the flag. */
import { pino } from 'pino';
import { watchPeers } from '../../src/cli/peer-readiness.js';

const server = { port: 8443, ready: () => true };
const logger = pino({ level: 'silent' });

describe('watchPeers', () => {
  it('starts nothing without --peer-readiness', async () => {
    await expect(watchPeers({ peerReadiness: false }, server, logger)).resolves.toBeUndefined();
    await expect(watchPeers({}, server, logger)).resolves.toBeUndefined();
  });

  it.each([
    [{ namespace: 'spiderpool-iaas-webhook' }, /^--peer-readiness needs the pod's name: pass --pod-name or set POD_NAME \(the downward API's metadata\.name\)$/],
    [{ podName: 'a' }, /^--peer-readiness needs the pod's namespace: pass --namespace or set POD_NAMESPACE/],
    [{ podName: 'a', namespace: 'spiderpool-iaas-webhook', kubeconfig: '/nonexistent/kubeconfig' }, /^cannot read the kubeconfig given by --kubeconfig \(\/nonexistent\/kubeconfig\)/],
  ])('refuses to start without what it needs: %j', async (flags, message) => {
    await expect(watchPeers({ peerReadiness: true, ...flags }, server, logger)).rejects.toThrow(message);
  });
});
