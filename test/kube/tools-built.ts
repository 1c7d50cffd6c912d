/**
 * The Go tools a cluster file needs beyond what every file needs (`pretest:cluster`: the
 * API server, the kube tools, dist/, the image). `.ci/run` builds them in the background
 * while the first files run, so a file that needs one waits for it in its first hook: each
 * build script locks its cache entry, so a running build is waited for and a cached one
 * answers at once (docs/adr/0043-citime-tool-builds-beside-the-cluster.md).
 */
import { join } from 'node:path';
import { runProcess } from '../e2e/cluster/processes.js';
import { REPO_ROOT } from '../e2e/helm.js';

/** A cold build of the slowest (cosign, helm) under load; the waiting hook's timeout too. */
export const TOOL_BUILD_MS = 45 * 60_000;

/** The tools test/kube/build-tools.sh builds (the one list of their builds). */
type Tool = 'prometheus' | 'kube-router' | 'cert-manager' | 'helm' | 'cosign';

/**
 * Resolves once every tool named is built, one after another in the order given.
 *
 * @throws Error with the build's stderr when one fails.
 */
export async function toolsBuilt(...tools: Tool[]): Promise<void> {
  for (const tool of tools) {
    const built = await runProcess('bash', [join(REPO_ROOT, 'test/kube/build-tools.sh'), tool], { timeoutMs: TOOL_BUILD_MS });
    if (built.code !== 0) throw new Error(`${tool} could not be built (test/kube/build-tools.sh ${tool}):\n${built.stderr}`);
  }
}
