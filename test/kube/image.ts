/**
 * The webhook image as image/build.sh leaves it ($WEBHOOK_IMAGE in image/env.sh), and
 * podman/buildah run with the project's own configuration (image/containers.conf,
 * image/storage.conf) rather than /etc/containers.
 */
import path from 'node:path';
import { runProcess, type Finished } from '../e2e/cluster/processes.js';
import { ROOT } from '../e2e/cluster/webhook.js';

/** Tag of the image built by image/build.sh (kept equal to image/env.sh). */
export const WEBHOOK_IMAGE = 'localhost/spiderpool-iaas-webhook:ci';

const CONTAINERS_ENV = {
  ...process.env,
  CONTAINERS_CONF: path.join(ROOT, 'image/containers.conf'),
  CONTAINERS_STORAGE_CONF: path.join(ROOT, 'image/storage.conf'),
};

/** `podman ARGS` (or `buildah ARGS`) with the project's configuration; a result, never a throw. */
export function containers(tool: 'podman' | 'buildah', args: readonly string[]): Promise<Finished> {
  return runProcess(tool, args, { env: CONTAINERS_ENV });
}

/** Like {@link containers}, but throws with the output when the command fails; returns stdout. */
export async function mustContainers(tool: 'podman' | 'buildah', args: readonly string[]): Promise<string> {
  const r = await containers(tool, args);
  if (r.code !== 0) throw new Error(`${tool} ${args.join(' ')} failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/**
 * The paths under /app of `image` that uid 1000 (the runtime user) could change: files it
 * may write (`find -writable`, run as that user) or that are not owned by root:root.
 * Runs the image with the pod's restrictions except the read-only root filesystem, which
 * would hide exactly what is checked here.
 */
export async function changeableByRuntimeUser(image: string): Promise<string[]> {
  const out = await mustContainers('podman', [
    'run',
    '--rm',
    '--network=none',
    '--user=1000:1000',
    '--cap-drop=ALL',
    '--security-opt=no-new-privileges',
    '--entrypoint=find',
    image,
    '/app',
    '(',
    '-writable',
    '-o',
    '!',
    '-user',
    '0',
    '-o',
    '!',
    '-group',
    '0',
    ')',
    '-print',
  ]);
  return out.split('\n').filter((line) => line !== '');
}
