#!/usr/bin/env node
/**
 * The command line: `serve`, `review`, `audit`, `validate-config`, `certs`, `register`, `unregister` and `completion`, thin shells around the
 * same functions the server uses. Each command's module is imported when that command runs,
 * not here: `serve` sends its first SpiderIPPool list request after loading only the
 * cluster client, and loads the server's modules (express, the reviewer, the certificates)
 * while the API server prepares the first page.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { levels } from 'pino';
import { DEFAULT_CERT_DIR, DEFAULT_CONFIGMAP_NAME, DEFAULT_NAMESPACE, DEFAULT_PORT, DEFAULT_SERVICE_NAME, DEFAULT_SYNC_WAIT_MS } from '../defaults.js';
import { findKubeConfig } from '../cluster/kubeconfig-source.js';
import { parseGoDuration } from '../go/duration-parse.js';
import { suggestGoDuration } from '../go/duration-suggest.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_SHUTDOWN_GRACE_MS, DEFAULT_TIMEOUTS } from '../server/limits.js';
import {
  collectAnnotation,
  collectEnforcement,
  parseBoolean,
  parseObjectName,
  parseOperation,
  parseUnsyncedPools,
  reportsWithoutPoolCache,
} from './arguments.js';
import { inputPaths, readInput, readStdin } from './input.js';
import { UsageError } from './cluster-state.js';
import type { CertsArguments } from './certs.js';
import { OUTPUT_FORMATS } from './kubectl-output.js';
import type { CommandResult } from './review-file.js';
import type { ServeArguments } from './serve.js';
import { packageVersion } from './version.js';
import { completionScript, SHELLS, type Shell } from './completion.js';

const LOG_LEVELS = [...Object.keys(levels.values), 'silent'];
/** Where `certs` writes by default: what `deploy/kustomization.yaml` reads. */
const DEPLOY_TLS_DIR = 'deploy/tls';

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^[0-9]+$/.test(value) || port > 65535) throw new InvalidArgumentError('must be a port number, 0-65535');
  return port;
}

function parsePositiveInt(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
}

/** A Go duration (`10s`, `1m30s`) as whole milliseconds, at least 0. */
function parseGoDurationMs(value: string): number {
  let ns: bigint;
  try {
    ns = parseGoDuration(value);
  } catch (e) {
    const suggestion = suggestGoDuration(value);
    throw new InvalidArgumentError((e as Error).message + (suggestion !== undefined ? `; did you mean ${JSON.stringify(suggestion)}?` : ''));
  }
  if (ns < 0n) throw new InvalidArgumentError('must not be negative');
  return Number(ns / 1_000_000n);
}

/** {@link parseGoDurationMs}, and more than 0 ms. */
function parsePositiveGoDurationMs(value: string): number {
  const ms = parseGoDurationMs(value);
  if (ms === 0) throw new InvalidArgumentError('must be at least 1ms');
  return ms;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A repeatable option, its values in order; --help shows `shown` as its default, not `[]`. */
function repeatable<T>(flags: string, description: string, shown: string, parse: (value: string, previous: T[]) => T[]): Option {
  return new Option(flags, description).argParser(parse).default([], shown);
}

function finish(result: CommandResult): void {
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}

const configMapOptions = (cmd: Command): Command =>
  cmd
    .option('--configmap-name <name>', "name of Spiderpool's ConfigMap", DEFAULT_CONFIGMAP_NAME)
    .option('--configmap-namespace <namespace>', "namespace of Spiderpool's ConfigMap (default: any; serve watches it in kube-system)");

/** `--enforcement`, the same on `serve`, `review`, `audit` and `validate-config`. */
const enforcementOption = (cmd: Command): Command =>
  cmd.addOption(
    repeatable(
      '--enforcement <ACTION|RULE=ACTION>',
      'Deny (refuse), Warn (allow with a warning) or Audit (allow, record only): for every rule, or RULE=ACTION for one (repeatable; any case)',
      'Deny',
      collectEnforcement,
    ),
  );

const program = new Command('spiderpool-iaas-webhook')
  .description('Validating admission webhook for Spiderpool IaaS SpiderIPPools and the iaasNetworkProvider configuration')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError('(run with --help for usage)')
  // Usage errors exit 2, so that exit 1 always means "refused" for review and validate-config.
  .exitOverride();

configMapOptions(
  enforcementOption(program.command('serve'))
    .description('serve the webhook over HTTPS')
    .addOption(new Option('--port <port>', 'HTTPS port').env('PORT').argParser(parsePort).default(DEFAULT_PORT))
    .option('--host <address>', 'address to bind (default: all interfaces)')
    .option('--cert-dir <dir>', 'directory with tls.crt and tls.key', DEFAULT_CERT_DIR)
    .option('--no-generate-certs', 'fail instead of generating a CA and serving certificate when none are in --cert-dir')
    .option(
      '--tls-secret <name>',
      'keep a CA and serving certificate in this Secret of --namespace (which must exist: the install creates it empty; filled, renewed before expiry) and serve them from --cert-dir',
      parseObjectName,
    )
    .option(
      '--manage-webhook-configuration <name>',
      'write the ValidatingWebhookConfiguration of deploy/ under this name once serving, its caBundle kept trusting --cert-dir/ca.crt (equal to it with --tls-secret)',
      parseObjectName,
    )
    .option(
      '--owner-cluster-role <name>',
      'ClusterRole of the install made owner of the Secret and the configuration: deleting it deletes them (garbage collection)',
      parseObjectName,
    )
    .option(
      '--reports-owner-cluster-role <name>',
      'ClusterRole made owner of the reports and their Lease, installed only with them: deleting it deletes them (default: --owner-cluster-role)',
      parseObjectName,
    )
    .addOption(
      repeatable(
        '--webhook-configuration-annotation <key=value>',
        'annotation of that configuration (repeatable), e.g. example.com/owner=network-team (not cert-manager.io/inject-ca-from: the pods keep caBundle)',
        'none',
        collectAnnotation,
      ),
    )
    .addOption(new Option('--namespace <namespace>', 'namespace of the pod: of --tls-secret and of the Service the API server calls').env('POD_NAMESPACE'))
    .option('--service <name>', 'Service the API server calls the webhook through (certificate names, clientConfig)', parseObjectName, DEFAULT_SERVICE_NAME)
    .addOption(
      new Option('--cert-validity <duration>', 'with --tls-secret: validity of a serving certificate (Go duration)')
        .argParser(parseGoDurationMs)
        .default(365 * 24 * 3600 * 1000, '8760h'),
    )
    .addOption(
      new Option('--ca-validity <duration>', 'with --tls-secret: validity of a CA (Go duration)')
        .argParser(parseGoDurationMs)
        .default(10 * 365 * 24 * 3600 * 1000, '87600h'),
    )
    .option('--kubeconfig <file>', 'kubeconfig for watching SpiderIPPools (default: $KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('--context <name>', 'the kubeconfig context to use (default: its current-context)')
    .option('--no-pool-cache', 'connect to no cluster, even when a kubeconfig is found (dual-stack pair checks are skipped with a warning)')
    .option('--client-ca-file <file>', "PEM CA bundle; when set, reviews need a client certificate it issued (the API server's admission client certificate)")
    .option(
      '--max-connections <n>',
      'cap on open connections; at it, a newcomer takes the slot of one waiting for its TLS handshake or idle longest',
      parsePositiveInt,
      DEFAULT_MAX_CONNECTIONS,
    )
    .option(
      '--max-connections-per-address <n>',
      "connections waiting for their TLS handshake one client address may hold (established ones are not counted); a newcomer beyond it closes that address's oldest handshake (default: a quarter of --max-connections)",
      parsePositiveInt,
    )
    .addOption(
      new Option('--handshake-timeout <duration>', 'from the TCP accept to a finished TLS handshake, then the connection is closed (Go duration)')
        .argParser(parsePositiveGoDurationMs)
        .default(DEFAULT_TIMEOUTS.handshakeMs, '3s'),
    )
    .addOption(
      new Option('--idle-timeout <duration>', 'how long a connection may stay open without a request; longer than the API server keeps one idle (Go duration)')
        .argParser(parsePositiveGoDurationMs)
        .default(DEFAULT_TIMEOUTS.keepAliveMs, '2m'),
    )
    .addOption(
      new Option('--shutdown-timeout <duration>', 'on SIGTERM/SIGINT, how long in-flight reviews may take to finish (Go duration)')
        .argParser(parseGoDurationMs)
        .default(DEFAULT_SHUTDOWN_GRACE_MS, '10s'),
    )
    .addOption(
      new Option('--pool-cache-sync-wait <duration>', 'how long /readyz waits for the first list of SpiderIPPools before it turns ready anyway (Go duration)')
        .argParser(parseGoDurationMs)
        .default(DEFAULT_SYNC_WAIT_MS, '1m'),
    )
    .addOption(
      new Option(
        '--unsynced-pools <setting>',
        'Refuse or Warn: what an IaaS pool write gets while the SpiderIPPool cache has not synced (the pair rules cannot run)',
      )
        .argParser(parseUnsyncedPools)
        .default('Refuse'),
    )
    .option(
      '--peer-readiness',
      "watch the other replicas of the Deployment and mark one whose port and heartbeat fall silent not ready (its pod's Ready condition), so the API server stops calling a dead node's pod within seconds (docs/operations.md)",
    )
    .option(
      '--rebalance',
      'evict this replica, through the PodDisruptionBudget, when it shares its node with another while a node that could take it holds none (after a node came back)',
    )
    .addOption(new Option('--pod-name <name>', "with --peer-readiness or --rebalance: this pod's name").env('POD_NAME'))
    .addOption(
      new Option(
        '--reports <enabled>',
        "true or false: keep OpenReports ClusterReports of the stored pools' violations, one replica at a time (a Lease in --namespace); default true with a cluster (true needs one, and the pool cache)",
      ).argParser(parseBoolean),
    )
    .addOption(new Option('--log-level <level>', 'log level').env('LOG_LEVEL').choices(LOG_LEVELS).default('info')),
)
  // A usage error as commander's own: one line on stderr, exit 2, nothing started.
  .hook('preAction', (command) => {
    const opts = command.opts<ServeArguments>();
    const problem = reportsWithoutPoolCache(opts, findKubeConfig(opts.kubeconfig) !== undefined);
    if (problem !== undefined) command.error(`error: ${problem}`);
  })
  .action(async (opts: ServeArguments) => {
    const { serve } = await import('./serve.js');
    await serve(opts);
  });

configMapOptions(
  enforcementOption(program.command('review'))
    .description(
      'judge manifests as the API server would send them to the webhook and print what kubectl would (exit 0 allowed, 1 refused, 2 bad input); ' +
        'an AdmissionReview (JSON) gets the response AdmissionReview',
    )
    .argument('[FILE...]', 'manifests (YAML or JSON, several documents or a kind: List), a folder of them, or an AdmissionReview; - for standard input')
    .addOption(repeatable('-f, --filename <path>', 'as FILE (repeatable), as kubectl apply -f takes it', 'standard input when no FILE', collect))
    .option('--old <OLD>', 'the stored objects: review an UPDATE from OLD to FILE (OLD another file than FILE)')
    .option('--operation <operation>', 'CREATE (default), UPDATE (default with --old) or DELETE, in any case', (value: string) => {
      const operation = parseOperation(value);
      if (operation === undefined) throw new InvalidArgumentError('must be CREATE, UPDATE or DELETE (any case)');
      return operation;
    })
    .addOption(
      repeatable('--pools <path>', 'cluster state: a file or folder of manifests (SpiderIPPools, Namespaces, the ConfigMap); repeatable', 'none', collect),
    )
    .option('--cluster', "add the live cluster's objects to the state, listed once (kubectl's lookup: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster)")
    .option('--kubeconfig <file>', 'the kubeconfig of --cluster (implies it)')
    .option('--context <name>', 'the kubeconfig context of --cluster (implies it; default: the current-context)')
    .option('--manifest <file>', 'the ValidatingWebhookConfiguration whose rules and selectors decide which writes are reviewed (default: the one in deploy/)')
    .option('-n, --namespace <namespace>', 'namespace of namespaced objects that name none', 'default')
    .addOption(new Option('-o, --output <format>', 'json or yaml: print the response AdmissionReviews').choices(OUTPUT_FORMATS))
    .option('--warnings-as-errors', "exit 1 when a warning is printed, as kubectl's flag does (Warn findings included)"),
).action(async (files: string[], opts) => {
  const { reviewFromArguments } = await import('./review.js');
  finish(await reviewFromArguments(inputPaths(files, opts.filename), opts, () => readStdin()));
});

enforcementOption(program.command('audit'))
  .description("judge every stored IaaS pool (--pools, else the cluster's) as a CREATE would and list what breaks the rules; exit 0 none, 1 some, 2 bad input")
  .addOption(repeatable('--pools <path>', 'the pools: a file or folder of manifests (kind: List included); repeatable', "none: the cluster's", collect))
  .option(
    '--kubeconfig <file>',
    'without --pools, the pools are listed once from the cluster kubectl would use: this kubeconfig, else $KUBECONFIG, ~/.kube/config, in-cluster',
  )
  .option('--context <name>', 'the kubeconfig context to use (default: its current-context)')
  .addOption(new Option('-o, --output <format>', 'json or yaml: the report for machines').choices(OUTPUT_FORMATS))
  .action(async (opts) => {
    const { auditFromArguments } = await import('./audit.js');
    finish(await auditFromArguments(opts));
  });

enforcementOption(program.command('validate-config'))
  .description("check Spiderpool's conf.yml, or a manifest with its ConfigMap, as the webhook would; exit 0 valid, 1 refused, 2 bad input")
  .argument('[FILE]', 'conf.yml or a ConfigMap manifest; - for standard input')
  .option('-f, --filename <path>', 'as FILE')
  .option('--configmap-name <name>', "name of Spiderpool's ConfigMap", DEFAULT_CONFIGMAP_NAME)
  .addOption(new Option('-o, --output <format>', 'json or yaml: each ConfigMap checked, its verdict and causes').choices(OUTPUT_FORMATS))
  .action(async (file: string | undefined, opts) => {
    const [{ validateConfigText }, { enforcementTable }, { actionsOf }] = await Promise.all([
      import('./validate-config.js'),
      import('./enforcement-notes.js'),
      import('../rules/enforcement-table.js'),
    ]);
    const given = [...(file === undefined ? [] : [file]), ...(opts.filename === undefined ? [] : [opts.filename])];
    // Unlike review, no FILE is a usage error (as it always was), never a read of standard input.
    if (given.length !== 1) throw new UsageError('give one file: validate-config FILE or -f FILE (- for standard input)');
    const [path] = inputPaths(given, []);
    const table = enforcementTable(opts.enforcement);
    finish(validateConfigText(await readInput(path!), opts.configmapName, table && actionsOf(table), opts.output));
  });

program
  .command('certs')
  .description('write a serving certificate (tls.crt, tls.key) signed by the CA in --out (ca.crt, ca.key; created when absent) and print the base64 caBundle')
  .option('--service <name>', 'Service name of the webhook', DEFAULT_SERVICE_NAME)
  .option('--namespace <namespace>', 'namespace of the Service', DEFAULT_NAMESPACE)
  .option('--out <dir>', 'directory to write the files to', DEPLOY_TLS_DIR)
  .option('--new-ca', 'replace the CA in --out too (the caBundle changes: re-register the webhook)')
  .addOption(repeatable('--dns-name <name>', 'extra DNS name for the certificate (repeatable)', 'none', collect))
  .addOption(repeatable('--ip <address>', 'extra IP address for the certificate (repeatable)', 'none', collect))
  .option('--days <days>', 'validity in days', parsePositiveInt, 365)
  .action(async (opts: CertsArguments) => {
    const { writeCerts } = await import('./certs.js');
    await writeCerts(opts);
  });

program
  .command('register')
  .description('create or update the ValidatingWebhookConfiguration of deploy/ in the cluster (server-side apply) with the caBundle of --ca-file')
  .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
  .option('--context <name>', 'the kubeconfig context to use (default: its current-context)')
  .option('--ca-file <file>', 'CA certificate that signed the serving certificate (written by certs)', `${DEPLOY_TLS_DIR}/ca.crt`)
  .option('--service <name>', "Service the API server calls (default: the manifest's)")
  .option('--namespace <namespace>', "namespace of the Service (default: the manifest's)")
  .option('--url <url>', 'call the webhook at https://HOST:PORT instead of the Service (a webhook outside the cluster)')
  .option(
    '--manifest <file>',
    'YAML holding the ValidatingWebhookConfiguration, e.g. a copy of deploy/base/validatingwebhookconfiguration.yaml you changed (default: that file)',
  )
  .action(async (opts) => {
    // The Kubernetes client would add ~0.5 s and ~70 MiB to a `serve` without a cluster
    // (measured with bench/).
    const { registerWebhook } = await import('../registration/register.js');
    const registration = await registerWebhook({
      caFile: opts.caFile,
      kubeconfig: opts.kubeconfig,
      context: opts.context,
      manifest: opts.manifest,
      target: opts.url !== undefined ? { url: opts.url } : { service: { name: opts.service, namespace: opts.namespace } },
    });
    const what = registration.changed ? 'applied' : 'unchanged';
    process.stdout.write(
      `validatingwebhookconfiguration.admissionregistration.k8s.io/${registration.name} ${what} (resourceVersion ${registration.resourceVersion ?? '?'}) at ${registration.server}\n`,
    );
  });

program
  .command('unregister')
  .description('delete the ValidatingWebhookConfiguration (before removing the webhook: no write then waits for it); exit 0 also when it is already gone')
  .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
  .option('--context <name>', 'the kubeconfig context to use (default: its current-context)')
  .option('--name <name>', 'name of the ValidatingWebhookConfiguration', parseObjectName, DEFAULT_SERVICE_NAME)
  .action(async (opts) => {
    const [{ loadKubeConfig }, { unregisterWebhook }, { NO_CLUSTER_FOUND }] = await Promise.all([
      import('../cluster/kubeconfig.js'),
      import('../registration/unregister.js'),
      import('../cluster/kubeconfig-source.js'),
    ]);
    const loaded = loadKubeConfig(opts.kubeconfig, undefined, { order: 'kubectl', ...(opts.context !== undefined ? { context: opts.context } : {}) });
    if (loaded === undefined) throw new Error(NO_CLUSTER_FOUND);
    const result = await unregisterWebhook(loaded.config, opts.name);
    const object = `validatingwebhookconfiguration.admissionregistration.k8s.io "${opts.name}"`;
    process.stdout.write(result === 'deleted' ? `${object} deleted\n` : `${object} not found: nothing to delete\n`);
  });

program
  .command('completion')
  .description('print a bash or zsh completion script; load it with source <(spiderpool-iaas-webhook completion bash)')
  .addArgument(new Argument('<shell>', 'bash or zsh').choices(SHELLS))
  .action((shell: Shell) => {
    const commands = program.commands.map((c) => ({
      name: c.name(),
      description: c.description(),
      flags: c.options.flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined)),
    }));
    process.stdout.write(completionScript(shell, commands));
  });

program.parseAsync().catch((e: unknown) => {
  if (e instanceof CommanderError) {
    // commander has printed the usage error; help and version exit 0.
    process.exitCode = e.exitCode === 0 ? 0 : 2;
    return;
  }
  // A one-line error for the person at the terminal; no stack trace.
  process.stderr.write(`error: ${(e as Error).message ?? String(e)}\n`);
  process.exitCode = 2;
});
