/** `serve --peer-readiness` and `--rebalance` say in one line what they lack, and are nothing without the flags. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { watchReplicas } from '../../src/cli/replicas.js';
import { writeKubeconfig } from '../helpers/kubeconfig.js';

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

  it('uses serve --context, as the caches do (a context the kubeconfig lacks stops the start)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'replicas-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    await writeKubeconfig(kubeconfig, { server: 'https://127.0.0.1:1', context: 'a' });
    const flags = { peerReadiness: true, podName: 'a', namespace: 'spiderpool-iaas-webhook', kubeconfig, context: 'missing' };
    // Without the context passed on, the rounds would start against the current-context: stop them.
    const started = watchReplicas(flags, server, logger).then((watch) => watch?.stop());
    try {
      await expect(started).rejects.toThrow(/^context was not found for specified context: missing/);
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});
