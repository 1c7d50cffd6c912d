/**
 * commander argument parsers shared by the commands, apart from the commands themselves:
 * the command line loads a command's module only when that command runs (`serve` begins its
 * list of SpiderIPPools before the server's modules are loaded).
 */
import { InvalidArgumentError } from 'commander';
import { EnforcementError, parseEnforcement } from '../rules/enforcement-table.js';
import { UNSYNCED_POOLS, type UnsyncedPools } from '../rules/pool-pair.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** commander argument parser: a Kubernetes object name (DNS-1123 subdomain, at most 253 characters). */
export function parseObjectName(value: string): string {
  if (value.length > 253 || !DNS1123_SUBDOMAIN.test(value)) {
    throw new InvalidArgumentError('must be a Kubernetes object name: lowercase a-z, 0-9, "-" and ".", starting and ending alphanumeric');
  }
  return value;
}

/** commander argument collector for repeated `KEY=VALUE`. */
export function collectAnnotation(value: string, previous: [string, string][]): [string, string][] {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('must be KEY=VALUE, e.g. example.com/owner=network-team');
  return [...previous, [value.slice(0, at), value.slice(at + 1)]];
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** `--operation` as typed, in any case (`update`, as kubectl users write verbs); `undefined` for anything else. */
export function parseOperation(value: string): Operation | undefined {
  const operation = value.toUpperCase();
  return operation === 'CREATE' || operation === 'UPDATE' || operation === 'DELETE' ? operation : undefined;
}

/**
 * commander argument parser of `serve --unsynced-pools`: `Refuse` or `Warn`, in any case.
 *
 * @throws InvalidArgumentError for anything else (commander prints it on one line, exit 2).
 */
export function parseUnsyncedPools(value: string): UnsyncedPools {
  const found = UNSYNCED_POOLS.find((setting) => setting.toLowerCase() === value.toLowerCase());
  if (found === undefined) {
    throw new InvalidArgumentError('must be Refuse (refuse IaaS pool writes while the pool cache has not synced) or Warn (let them through with a warning)');
  }
  return found;
}

/**
 * commander argument collector of `--enforcement ACTION|RULE=ACTION` (repeatable): each
 * value is checked with those before it, so a bad one is a one-line usage error (exit 2).
 */
export function collectEnforcement(value: string, previous: string[]): string[] {
  const values = [...previous, value];
  try {
    parseEnforcement(values);
  } catch (e) {
    if (e instanceof EnforcementError) throw new InvalidArgumentError(e.message);
    throw e;
  }
  return values;
}

/**
 * commander argument parser of a `true|false` flag value (`--reports=false`), in any case.
 *
 * @throws InvalidArgumentError for anything else.
 */
export function parseBoolean(value: string): boolean {
  const lower = value.toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw new InvalidArgumentError('must be true or false');
  return lower === 'true';
}

/**
 * What is wrong with `serve --reports=true` without a cluster, or `undefined`: the reports
 * describe the pools the pool cache lists (src/cluster/pool-reports.ts), and with
 * `--no-pool-cache`, or no kubeconfig found (`clusterFound` false), none is listed.
 */
export function reportsWithoutPoolCache(opts: { reports?: boolean; poolCache: boolean }, clusterFound: boolean): string | undefined {
  if (opts.reports !== true) return undefined;
  if (!opts.poolCache) return '--reports=true needs the pool cache (the reports are of the pools it lists): drop --no-pool-cache, or pass --reports=false';
  if (clusterFound) return undefined;
  return '--reports=true needs a cluster (the reports are of the pools it lists): pass --kubeconfig FILE, set $KUBECONFIG, create ~/.kube/config, run in a pod, or pass --reports=false';
}
