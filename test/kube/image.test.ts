/**
 * The image built from the Dockerfile (image/build.sh, run before this
 * by `npm run test:cluster`) is what deploy/base/deployment.yaml expects: Node 24 LTS, user
 * 1000:1000, no npm in the runtime stage, nothing under /app that the runtime user
 * can change, and Node's compile cache filled for that user.
 */
import { changeableByRuntimeUser, containers, mustContainers, WEBHOOK_IMAGE } from './image.js';

const run = (args: string[]) => mustContainers('podman', ['run', '--rm', '--network=none', '--entrypoint=sh', WEBHOOK_IMAGE, '-c', ...args]);

describe('the webhook image', () => {
  it('runs as 1000:1000 with the CLI as its entrypoint, serve by default', async () => {
    const config = JSON.parse(await mustContainers('podman', ['image', 'inspect', '--format', '{{json .Config}}', WEBHOOK_IMAGE]));
    expect(config).toMatchObject({
      User: '1000:1000',
      Entrypoint: ['node', '--max-semi-space-size=8', 'dist/cli/main.js'],
      Cmd: ['serve'],
      WorkingDir: '/app',
    });
  });

  it('ships Node 24 LTS and no npm (the runtime stage does not need it)', async () => {
    const out = await run(['node -p "process.version + \' \' + process.release.lts"; command -v npm || echo no-npm']);
    expect(out).toMatch(/^v24\.\d+\.\d+ Krypton\nno-npm\n$/);
  });

  it('has no file under /app that the runtime user can write, and every one owned by root', async () => {
    expect(await changeableByRuntimeUser(WEBHOOK_IMAGE)).toEqual([]);
    const count = Number(await run(['find /app -type f | wc -l']));
    expect(count).toBeGreaterThan(1000); // the check saw node_modules and dist/
  });

  it("ships Node's compile cache, read by the runtime user on a read-only root: every module serve loads is found in it", async () => {
    // NODE_DEBUG_NATIVE=COMPILE_CACHE logs each module's entry: accepted, or "not initialized" (a miss, compiled anew).
    const script =
      "await import('/app/dist/cluster/pool-cache.js'); await import('/app/dist/server/serve.js'); await import('/app/dist/cluster/kubeconfig.js')";
    const out = await mustContainers('podman', [
      'run',
      '--rm',
      '--network=none',
      '--read-only',
      '--env=NODE_DEBUG_NATIVE=COMPILE_CACHE',
      '--entrypoint=sh',
      WEBHOOK_IMAGE,
      '-c',
      `node --max-semi-space-size=8 --input-type=module -e "${script}" 2>&1`,
    ]);
    expect(out).toContain('/app/compile-cache/v24.');
    const accepted = out.split('\n').filter((l) => l.includes(' was accepted')).length;
    expect(accepted).toBeGreaterThan(1000); // client-node, express, prom-client, zod and ours
    // A miss, a rejected entry, or one the runtime user cannot read (Node writes them 0600); the -e script itself is never cached.
    expect(out.split('\n').filter((l) => /not initialized|rejected|permission denied/.test(l) && !l.includes('[eval'))).toEqual([]);
  });

  it('the check finds a file the runtime user owns (the check can fail)', async () => {
    const container = (await mustContainers('buildah', ['from', '--quiet', WEBHOOK_IMAGE])).trim();
    const tag = 'localhost/spiderpool-iaas-webhook:writable-check';
    try {
      await mustContainers('buildah', ['run', '--user=0:0', container, '--', 'sh', '-c', 'chown 1000 /app/package.json && chmod o+w /app/dist/index.js']);
      await mustContainers('buildah', ['commit', '--quiet', container, tag]);
      expect(await changeableByRuntimeUser(tag)).toEqual(['/app/package.json', '/app/dist/index.js']);
    } finally {
      await containers('buildah', ['rm', container]);
      await containers('podman', ['rmi', '--force', tag]);
    }
  });
});
