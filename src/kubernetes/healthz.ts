/**
 * `/readyz` as the kube-apiserver serves it (k8s.io/apiserver/pkg/server/healthz): a list of
 * named checks, `[+]name ok` / `[-]name failed: reason`, shown in full when one fails or
 * when `?verbose` is asked for, `ok` otherwise.
 */

/** One named condition of readiness; other parts of the program add their own. */
export interface ReadinessCheck {
  /** Short kebab-case name shown in `/readyz?verbose`, e.g. `serving-certificate`. */
  name: string;
  /** `undefined` when ready; otherwise why not, one line for a person. */
  check(): string | undefined;
  /**
   * Listed like any other check, but a failure does not make the server unready: for a
   * part that degrades to warnings instead of failing reviews (with failurePolicy Fail,
   * an unready webhook would block every guarded write).
   */
  informational?: boolean;
}

export interface ReadinessReport {
  ready: boolean;
  /** The response body, newline-terminated. */
  text: string;
}

/**
 * Runs every check in order; an informational check's failure is listed but does not
 * count. The body is `ok\n` when all pass and `verbose` is false;
 * otherwise one line per check and a last line `readyz check passed|failed`, as the
 * kube-apiserver writes it (it withholds failure reasons; ours name no secrets and say
 * what to fix, so they are shown).
 */
export function readinessReport(checks: readonly ReadinessCheck[], verbose: boolean): ReadinessReport {
  const results = checks.map((c) => ({ name: c.name, failure: c.check(), informational: c.informational === true }));
  const ready = results.every((r) => r.failure === undefined || r.informational);
  if (ready && !verbose) return { ready, text: 'ok\n' };
  const lines = results.map((r) => (r.failure === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.failure}`));
  return { ready, text: `${lines.join('\n')}\nreadyz check ${ready ? 'passed' : 'failed'}\n` };
}
