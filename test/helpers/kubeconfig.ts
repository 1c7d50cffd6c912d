/** Kubeconfig files for tests that start a client as kubectl would, from a file. */
import { writeFile } from 'node:fs/promises';

interface KubeconfigSpec {
  /** The API server's URL. */
  server: string;
  /** The current context's name (default `x`). */
  context?: string;
  /** `insecure-skip-tls-verify`: client-node speaks plain HTTP only to a cluster marked so. */
  insecure?: boolean;
}

/**
 * Writes to `file` a kubeconfig (JSON, which YAML readers take) with one cluster, `c`, at
 * `server`, one user, `u`, with the bearer token `t`, and one context, the current one.
 */
export async function writeKubeconfig(file: string, { server, context = 'x', insecure = false }: KubeconfigSpec): Promise<void> {
  const cluster = insecure ? { server, 'insecure-skip-tls-verify': true } : { server };
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: context, context: { cluster: 'c', user: 'u' } }],
      'current-context': context,
    }),
  );
}
