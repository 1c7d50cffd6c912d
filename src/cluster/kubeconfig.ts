/**
 * Loads the cluster connection {@link findKubeConfig} finds (controller-runtime's order:
 * `--kubeconfig`, `$KUBECONFIG`, in-cluster, `$HOME/.kube/config`). No source at all is
 * not an error: callers that can work without a cluster (local `serve`, the `review` CLI)
 * say so instead of dialling a default address. A source that cannot be used is an error
 * that names where it came from, so the operator knows which flag or variable to fix.
 */
import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import {
  findKubeConfig,
  IN_CLUSTER_TOKEN,
  processEnvironment,
  type KubeConfigEnvironment,
  type KubeConfigLocation,
  type KubeConfigOrder,
} from './kubeconfig-source.js';

export type { KubeConfigEnvironment } from './kubeconfig-source.js';

/** Which configuration to use: `--context` (default: the current-context) and the lookup order. */
export interface KubeConfigSelection {
  context?: string;
  order?: KubeConfigOrder;
}

/** A loaded configuration and where it came from. */
export interface LoadedKubeConfig extends KubeConfigLocation {
  config: KubeConfig;
}

/** Where a configuration came from, as an operator would name it: the flag or variable and the file. */
function describeKubeConfigSource(location: KubeConfigLocation): string {
  switch (location.source) {
    case 'flag':
      return `the kubeconfig given by --kubeconfig (${location.from})`;
    case 'KUBECONFIG':
      return `the kubeconfig given by $KUBECONFIG (${location.from})`;
    case 'in-cluster':
      return `the in-cluster service account ($KUBERNETES_SERVICE_HOST, ${IN_CLUSTER_TOKEN})`;
    case 'home':
      return `the kubeconfig ~/.kube/config (${location.from})`;
  }
}

/** The first line of a reading error: js-yaml appends an excerpt of the file, which may hold credentials. */
function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split('\n')[0]!;
}

/** Reads one kubeconfig file, naming it and its source when it cannot be read. */
function loadFile(file: string, location: KubeConfigLocation): KubeConfig {
  const config = new KubeConfig();
  try {
    config.loadFromFile(file);
  } catch (err) {
    const several = location.source === 'KUBECONFIG' && file !== location.from;
    const which = several ? `the kubeconfig ${file}, one of those $KUBECONFIG lists (${location.from})` : describeKubeConfigSource(location);
    throw new Error(`cannot read ${which}: ${err instanceof TypeError ? uncheckedFieldProblem(file, err) : firstLine(err)}`);
  }
  return config;
}

/**
 * client-node reads the parsed document's fields unchecked, so an empty file, `~` or a
 * field of another type (`server: 5`) is a TypeError: which of them, in the operator's words.
 */
function uncheckedFieldProblem(file: string, err: TypeError): string {
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch {
    document = undefined;
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return 'it holds no kubeconfig (the file is empty or not a YAML mapping)';
  return `a field does not have the type a kubeconfig gives it (${firstLine(err)}); compare the file with the output of kubectl config view`;
}

/**
 * Adds what `config` lacks from `later`, as kubectl merges the files `$KUBECONFIG` lists:
 * the first file to set a cluster, user or context name, or the current-context, wins
 * (client-node's `mergeConfig` throws on a name set twice instead).
 */
function mergeFirstWins(config: KubeConfig, later: KubeConfig): void {
  for (const cluster of later.clusters) if (config.getCluster(cluster.name) === null) config.addCluster(cluster);
  for (const user of later.users) if (config.getUser(user.name) === null) config.addUser(user);
  for (const context of later.contexts) if (config.getContextObject(context.name) === null) config.addContext(context);
  if (!config.getCurrentContext()) config.setCurrentContext(later.getCurrentContext());
}

/** `$KUBECONFIG` may list several files, merged as kubectl merges them. */
function loadConfig(location: KubeConfigLocation): KubeConfig {
  if (location.source === 'in-cluster') {
    const config = new KubeConfig();
    config.loadFromCluster();
    return config;
  }
  const [first, ...rest] = (location.source === 'KUBECONFIG' ? location.from.split(delimiter) : [location.from]).filter((file) => file !== '');
  const config = loadFile(first!, location);
  for (const file of rest) mergeFirstWins(config, loadFile(file, location));
  return config;
}

/**
 * Loads the cluster connection, or returns `undefined` when there is none to find.
 *
 * @param explicitPath `--kubeconfig`, when given: the only file tried.
 * @param select `--context` (kubectl's: a context of the merged files instead of their
 *   current-context) and the lookup order (default controller-runtime's).
 * @throws Error naming the source (`--kubeconfig (FILE)`, `$KUBECONFIG (…)`, `~/.kube/config (…)`)
 *   when the chosen file cannot be read or parsed, has no context `select.context`, or names
 *   no current context with a cluster (a broken kubeconfig is an operator error to report,
 *   never a reason to fall through to another source).
 */
export function loadKubeConfig(
  explicitPath?: string,
  from: KubeConfigEnvironment = processEnvironment(),
  select: KubeConfigSelection = {},
): LoadedKubeConfig | undefined {
  const location = findKubeConfig(explicitPath, from, select.order);
  if (location === undefined) return undefined;
  const config = loadConfig(location);
  if (select.context !== undefined) useContext(config, select.context, location);
  if (config.getCurrentCluster() === null) {
    const context = config.getCurrentContext();
    const why = context ? `its current-context "${context}" names no cluster it defines` : 'it sets no current-context';
    throw new Error(`cannot use ${describeKubeConfigSource(location)}: ${why}; set current-context (kubectl config use-context) or choose another file`);
  }
  return { ...location, config };
}

/** `--context NAME`, as kubectl takes it: a context the files define, else kubectl's error naming the source. */
function useContext(config: KubeConfig, context: string, location: KubeConfigLocation): void {
  if (config.getContextObject(context) === null) {
    const names = config.contexts.map((c) => JSON.stringify(c.name));
    const known = names.length === 0 ? 'none' : names.slice(0, 5).join(', ') + (names.length > 5 ? ', …' : '');
    throw new Error(
      `context was not found for specified context: ${context} (in ${describeKubeConfigSource(location)}; its contexts: ${known}; see kubectl config get-contexts)`,
    );
  }
  config.setCurrentContext(context);
}
