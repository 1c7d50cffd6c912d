/**
 * The image built from the Dockerfile (image/build.sh, run before this
 * by `npm run test:cluster`) is what deploy/base/deployment.yaml expects: Node 24 LTS, user
 * 1000:1000, no npm in the runtime stage, and nothing under /app that the runtime user
 * can change.
 */
import { changeableByRuntimeUser, containers, mustContainers, WEBHOOK_IMAGE } from './image.js';

const run = (args: string[]) => mustContainers('podman', ['run', '--rm', '--network=none', '--entrypoint=sh', WEBHOOK_IMAGE, '-c', ...args]);

describe('the webhook image', () => {
  it('runs as 1000:1000 with the CLI as its entrypoint, serve by default', async () => {
    const config = JSON.parse(await mustContainers('podman', ['image', 'inspect', '--format', '{{json .Config}}', WEBHOOK_IMAGE]));
    expect(config).toMatchObject({ User: '1000:1000', Entrypoint: ['node', '--max-semi-space-size=8', 'dist/cli/main.js'], Cmd: ['serve'], WorkingDir: '/app' });
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
