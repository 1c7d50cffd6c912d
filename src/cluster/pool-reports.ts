/**
 * The OpenReports ClusterReports of the stored pools' violations (src/store/pool-reports.ts),
 * kept by the replica that holds the reports Lease (leader.ts); the others stand by. Every
 * `intervalMs` the leader builds the reports again if a pool was judged since, and writes
 * only those whose content differs from what it last wrote or listed, deleting its reports
 * of rules no longer broken. When the `clusterreports.openreports.io` CRD is not served it
 * logs one line and asks again every `crdRecheckMs`; nothing else stops. Each report is
 * owned by a ClusterRole rendered only with the reports (`--reports-owner-cluster-role`):
 * turning the reports off or uninstalling deletes them (garbage collection; ADR 0054).
 */
import { ApiException, CustomObjectsApi, type KubeConfig, type V1OwnerReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  CLUSTER_REPORTS,
  REPORT_LABELS,
  REPORT_LIMITS,
  REPORT_NAMES,
  clusterReports,
  reportContent,
  type ClusterReport,
  type ShownViolation,
} from '../store/pool-reports.js';
import { DENY_ALL, type ActionOf } from '../admission/enforcement.js';
import type { PoolViolationTracker } from '../store/pool-violations.js';
import { inSlices, type Slicing } from '../store/slices.js';
import { WEBHOOKS } from '../defaults.js';
import { summarizeApiError } from './api-error.js';
import { withDeadline } from './deadline.js';
import { startLeaderElection, type LeaderElection } from './leader.js';
import { clusterRoleOwner } from './owner.js';

/** How often the leader compares the reports with the violations, in milliseconds: a fix shows within about this. */
export const REPORT_INTERVAL_MS = 10_000;
/** How often an absent CRD is asked for again, in milliseconds. */
const CRD_RECHECK_MS = 60_000;

type WriteOperation = 'create' | 'update' | 'delete';

export interface PoolReportsOptions {
  kubeConfig: KubeConfig;
  tracker: Pick<PoolViolationTracker, 'counts' | 'firstViolators' | 'describe' | 'judgements' | 'judged'>;
  /** Whether the pools have been listed: before, no report is written or deleted (they would say "no violation"). */
  synced(): boolean;
  /** The stored pool's uid, for the results' resources. */
  uidOf(pool: string): string | undefined;
  /** Each rule's action (`serve --enforcement`); every rule `Deny` when absent. */
  actionOf?: ActionOf;
  lease: { namespace: string; name: string };
  identity: string;
  /** The ClusterRole owning the reports and the Lease (`--reports-owner-cluster-role`); none when absent. */
  ownerClusterRole?: string;
  /** The flag that named `ownerClusterRole`, for messages (default `--reports-owner-cluster-role`). */
  ownerFlag?: string;
  logger: Logger;
  /** How the describing of the listed pools yields to the event loop (the server's `EVENT_LOOP_SLICING`). */
  slicing?: Slicing;
  intervalMs?: number;
  crdRecheckMs?: number;
  retryPeriodMs?: number;
  /** Each API call's deadline, in milliseconds (default: deadline.ts's). */
  callTimeoutMs?: number;
  now?: () => number;
}

export interface PoolReports {
  isLeader(): boolean;
  /** Whether the CRD was served when last asked; `undefined` before the first ask. */
  crdInstalled(): boolean | undefined;
  /** Writes since the start, by operation and outcome. */
  writes(): ReadonlyMap<`${WriteOperation}/${'success' | 'failure'}`, number>;
  /** Waits for the round in progress, if any, and runs one more (tests; the timer runs them otherwise). */
  sync(): Promise<void>;
  /** Stops writing and hands the Lease back. */
  stop(): Promise<void>;
}

/** One line for an API failure. */
const failureLine = (err: unknown): string => summarizeApiError(err).message;

/** The reports writer: state in fields, one round a method call (client-go reflector's shape). */
class ReportWriter {
  /** Each report's content and resourceVersion as last written or listed; `undefined` until listed (after taking the lead, or a failure). */
  private written: Map<string, { content: string; resourceVersion: string }> | undefined;
  private crd: boolean | undefined;
  private checkedAtMs = -Infinity;
  private builtAt = -1;
  private desired: ClusterReport[] = [];
  private owner: V1OwnerReference | undefined;
  readonly counts = new Map<`${WriteOperation}/${'success' | 'failure'}`, number>();
  private readonly api: CustomObjectsApi;

  constructor(private readonly options: PoolReportsOptions) {
    this.api = options.kubeConfig.makeApiClient(CustomObjectsApi);
  }

  crdInstalled = (): boolean | undefined => this.crd;

  /** Forget what was written: another replica may write until this one leads again. */
  reset(): void {
    this.written = undefined;
    this.builtAt = -1;
  }

  async round(): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    if (this.crd === false && now - this.checkedAtMs < (this.options.crdRecheckMs ?? CRD_RECHECK_MS)) return;
    if (!this.options.synced()) return;
    if (this.written === undefined && !(await this.list(now))) return;
    await this.options.tracker.judged(); // the pass over every pool after a list: counts complete
    if (this.options.tracker.judgements !== this.builtAt) await this.build();
    for (const report of this.desired) await this.put(report);
    const wanted = new Set(this.desired.map((r) => r.metadata.name));
    for (const name of [...this.written!.keys()].filter((n) => !wanted.has(n))) await this.remove(name);
  }

  /** Lists the webhook's reports (its label, its names); false when the CRD is not served (logged when that changes). */
  private async list(now: number): Promise<boolean> {
    this.checkedAtMs = now;
    const selector = Object.entries(REPORT_LABELS)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    let listed: { items?: unknown[] };
    try {
      listed = await withDeadline((o) => this.api.listClusterCustomObject({ ...CLUSTER_REPORTS, labelSelector: selector }, o), this.options.callTimeoutMs);
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
      if (this.crd !== false)
        this.options.logger.warn(
          `the ${CLUSTER_REPORTS.plural}.${CLUSTER_REPORTS.group} CRD is not installed: no reports (install OpenReports' CRDs to have them); asking again every ${(this.options.crdRecheckMs ?? CRD_RECHECK_MS) / 1000} s`,
        );
      this.crd = false;
      return false;
    }
    if (this.crd === false) this.options.logger.info(`the ${CLUSTER_REPORTS.plural}.${CLUSTER_REPORTS.group} CRD is installed: writing reports`);
    this.crd = true;
    // Its own names only: RBAC limits update and delete to them (a labelled report of another name is left alone).
    this.written = new Map((listed.items ?? []).map((item) => this.entryOf(item)).filter(([name]) => REPORT_NAMES.includes(name)));
    await this.resolveOwner();
    return true;
  }

  private entryOf(item: unknown): [string, { content: string; resourceVersion: string }] {
    const metadata = (item as { metadata?: { name?: string; resourceVersion?: string } }).metadata;
    return [metadata?.name ?? '', { content: reportContent(item), resourceVersion: metadata?.resourceVersion ?? '' }];
  }

  private async resolveOwner(): Promise<void> {
    const owner = await reportsOwner(this.options)?.();
    if (owner === 'absent') throw new Error(ownerAbsent(this.options));
    this.owner = owner;
  }

  /** The reports of the tracker's violations now: the listed pools described in slices. */
  private async build(): Promise<void> {
    const { tracker, uidOf } = this.options;
    this.builtAt = tracker.judgements;
    const counts = new Map(tracker.counts());
    const firsts = tracker.firstViolators(REPORT_LIMITS.maxResults);
    const rulesOf = new Map<string, Set<string>>();
    for (const [rule, names] of firsts) for (const name of names) rulesOf.set(name, (rulesOf.get(name) ?? new Set()).add(rule));
    const shown: ShownViolation[] = [];
    const describe = ([name, rules]: [string, Set<string>]) => {
      for (const v of tracker.describe(name)) if (rules.has(v.rule)) shown.push({ ...v, ...(uidOf(name) === undefined ? {} : { uid: uidOf(name)! }) });
    };
    if (this.options.slicing === undefined) [...rulesOf].forEach(describe);
    else await inSlices(rulesOf, describe, this.options.slicing);
    const owner = this.owner && { apiVersion: this.owner.apiVersion, kind: this.owner.kind, name: this.owner.name, uid: this.owner.uid };
    this.desired = clusterReports({
      policy: WEBHOOKS.spiderIPPool.name,
      counts,
      shown,
      actionOf: this.options.actionOf ?? DENY_ALL,
      ...(owner ? { owner } : {}),
    });
  }

  /** Creates or replaces `report` unless what is stored says the same. */
  private async put(report: ClusterReport): Promise<void> {
    const content = reportContent(report);
    const stored = this.written!.get(report.metadata.name);
    if (stored?.content === content) return;
    const operation = stored === undefined ? 'create' : 'update';
    const written = await this.count(operation, () =>
      stored === undefined
        ? withDeadline((o) => this.api.createClusterCustomObject({ ...CLUSTER_REPORTS, body: report }, o), this.options.callTimeoutMs)
        : withDeadline(
            (o) =>
              this.api.replaceClusterCustomObject(
                {
                  ...CLUSTER_REPORTS,
                  name: report.metadata.name,
                  body: { ...report, metadata: { ...report.metadata, resourceVersion: stored.resourceVersion } },
                },
                o,
              ),
            this.options.callTimeoutMs,
          ),
    );
    this.written!.set(report.metadata.name, {
      content,
      resourceVersion: (written as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '',
    });
  }

  private async remove(name: string): Promise<void> {
    await this.count('delete', () => withDeadline((o) => this.api.deleteClusterCustomObject({ ...CLUSTER_REPORTS, name }, o), this.options.callTimeoutMs));
    this.written!.delete(name);
  }

  /** Runs a write and counts it; a failure makes the next round list again (a conflict, a report deleted by hand). */
  private async count<T>(operation: WriteOperation, write: () => Promise<T>): Promise<T> {
    try {
      const result = await write();
      this.bump(`${operation}/success`);
      return result;
    } catch (err) {
      this.bump(`${operation}/failure`);
      this.reset();
      throw err;
    }
  }

  private bump(key: `${WriteOperation}/${'success' | 'failure'}`): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
}

/** Starts electing, and writing the reports while leading. */
export function startPoolReports(options: PoolReportsOptions): PoolReports {
  const writer = new ReportWriter(options);
  let lastFailure: string | undefined;
  let running: Promise<void> = Promise.resolve();
  const once = async () => {
    try {
      if (election.isLeader()) await writer.round();
      lastFailure = undefined;
    } catch (err) {
      const line = failureLine(err);
      if (line !== lastFailure) options.logger.warn({ err: line }, 'writing the reports failed; trying again');
      lastFailure = line;
    }
  };
  // One round at a time; a tick while one runs or waits is dropped, so rounds never pile up behind a slow API server.
  let queued = 0;
  const round = () => {
    queued++;
    running = running.then(once).finally(() => queued--);
    return running;
  };
  const tick = () => void (queued === 0 && round());
  const election: LeaderElection = startLeaderElection({
    kubeConfig: options.kubeConfig,
    lease: options.lease,
    identity: options.identity,
    ...(options.ownerClusterRole === undefined ? {} : { owner: { read: reportsOwner(options)!, absent: ownerAbsent(options) } }),
    onLeading: (leading) => {
      writer.reset();
      if (leading) tick();
    },
    logger: options.logger,
    ...(options.retryPeriodMs === undefined ? {} : { retryPeriodMs: options.retryPeriodMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const timer = setInterval(tick, options.intervalMs ?? REPORT_INTERVAL_MS).unref();
  return {
    isLeader: () => election.isLeader(),
    crdInstalled: () => writer.crdInstalled(),
    writes: () => writer.counts,
    sync: () => round(),
    stop: async () => {
      clearInterval(timer);
      await running;
      await election.stop();
    },
  };
}

/**
 * Registers, read when scraped: `spiderpool_iaas_webhook_reports_leader` (1 while this
 * replica holds the reports Lease), `spiderpool_iaas_webhook_report_writes_total{operation,result}`
 * (ClusterReport creates, updates and deletes, `success` or `failure`) and
 * `spiderpool_iaas_webhook_reports_crd_installed` (1 when the CRD was served when last asked).
 */
export function registerPoolReportMetrics(registry: Registry, reports: Pick<PoolReports, 'isLeader' | 'writes' | 'crdInstalled'>): void {
  new Gauge({
    name: 'spiderpool_iaas_webhook_reports_leader',
    help: 'Whether this replica holds the reports Lease and keeps the OpenReports ClusterReports (1) or stands by (0).',
    registers: [registry],
    collect() {
      this.set(reports.isLeader() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'spiderpool_iaas_webhook_reports_crd_installed',
    help: 'Whether the clusterreports.openreports.io CRD was served when last asked (1), or not (0: no reports).',
    registers: [registry],
    collect() {
      this.set(reports.crdInstalled() ? 1 : 0);
    },
  });
  new Counter({
    name: 'spiderpool_iaas_webhook_report_writes_total',
    help: 'ClusterReport writes by this replica, by operation (create, update, delete) and result (success, failure).',
    labelNames: ['operation', 'result'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [key, count] of reports.writes()) {
        const [operation, result] = key.split('/');
        this.inc({ operation: operation!, result: result! }, count);
      }
    },
  });
}

/** The flag that named the reports' owner, for messages. */
const ownerFlag = (options: PoolReportsOptions): string => options.ownerFlag ?? '--reports-owner-cluster-role';

/** Reads the reports' owner ClusterRole (its reference, or `'absent'`) within `timeoutMs`; undefined without one. */
function reportsOwner(options: PoolReportsOptions): ((timeoutMs?: number) => ReturnType<typeof clusterRoleOwner>) | undefined {
  const name = options.ownerClusterRole;
  return name === undefined ? undefined : (timeoutMs) => clusterRoleOwner(options.kubeConfig, name, timeoutMs, ownerFlag(options));
}

/** Why the reports' owner is absent, and that nothing is to be done (one line). */
function ownerAbsent(options: PoolReportsOptions): string {
  return `ClusterRole ${options.ownerClusterRole}, the reports' owner (${ownerFlag(options)}), does not exist: reports are being turned off or the install deleted; nothing to do (an upgrade with reports on restores it)`;
}
