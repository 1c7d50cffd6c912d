/**
 * The rules Spiderpool applies to its `iaasNetworkProvider` block at start-up (design
 * document, "请求超时与时间预算" / request timeout and time budget). A value that breaks
 * them is fatal: the agent and the controller refuse to start.
 */
import { formatGoDuration } from '../go/duration-format.js';
import { parseGoDuration } from '../go/duration-parse.js';
import { suggestGoDuration } from '../go/duration-suggest.js';
import { MINUTE, SECOND } from '../go/duration-units.js';
import { invalid, MAX_WARNING_CHARS, required, type FieldError, type FieldWarning } from '../kubernetes/field-errors.js';
import { Path } from '../kubernetes/field-path.js';
import { quoteShort, quoteShown, truncate } from '../go/strconv-quote.js';
import { CONF_YML_KEY } from '../defaults.js';
import type { ProviderSettings } from './conf-yml.js';
import { parseGoUrl } from '../go/url.js';

/** Static safety limit: kubelet gives the whole Pod sandbox creation 2 minutes. */
const STATIC_LIMIT_NS = 2n * MINUTE;
/** The Spiderpool CNI plugin waits 100s for the agent on ADD and DEL; one provider call must fit in it. */
const CNI_AGENT_BUDGET_NS = 100n * SECOND;

/** Who refuses to start, by default: both components read the same provider settings. */
const BOTH_REFUSE = "Spiderpool's agent and controller refuse to start with it";
const ADVICE = "use 50s (the default, above the provider's ~48s worst case) or 55s-59s under heavy rate limiting";

/** Outcome of checking the provider block: errors deny; warnings are shown to the user. */
export interface ProviderFindings {
  errors: FieldError[];
  warnings: FieldWarning[];
}

const PROVIDER = Path.of('iaasNetworkProvider');
const TIMEOUT_FIELD = PROVIDER.child('httpRequestTimeout').toString();
/** The timeout as a warning names it: under the ConfigMap's key. */
const TIMEOUT_SHOWN = Path.of('data').key(CONF_YML_KEY).child('iaasNetworkProvider', 'httpRequestTimeout').toString();
/** Characters of a long timeout a warning shows (the rest of the warning takes ~190). */
const SHOWN_WHEN_LONG = 32;

/**
 * Checks the provider settings as Spiderpool does, with field paths relative to `conf.yml`
 * (`iaasNetworkProvider.httpRequestTimeout`).
 *
 * Spiderpool validates the block only when `serverUrl` (released) or `service.name`
 * (PR #5778) is non-empty; otherwise the integration is off, and a timeout that would fail once it is turned on becomes a warning.
 * `refusing` says who stops (when only one component reads these settings).
 */
export function checkProviderSettings(settings: ProviderSettings, refusing: string = BOTH_REFUSE): ProviderFindings {
  const timeout = settings.httpRequestTimeout;
  const problem = httpRequestTimeoutProblem(timeout);
  const service = settings.service ?? { name: '', namespace: '', port: 0n };
  if (settings.serverUrl === '' && service.name === '') {
    if (problem === undefined) return { errors: [], warnings: [] };
    const message = (shown: string, why: string) =>
      `${shown} is ignored while serverUrl and service.name are empty, but Spiderpool will refuse ` + `to start once the IaaS provider is enabled: it ${why}`;
    // A warning is one line of at most MAX_WARNING_CHARS (with "data[conf.yml]."): the limit's reason goes
    // first, then a long value is cut short.
    const fits = (m: string) => `${TIMEOUT_SHOWN}: ${m}`.length <= MAX_WARNING_CHARS;
    const brief = problem.why.split(' (')[0]!;
    const full = message(quoteShown(timeout), problem.why);
    const shorter = message(quoteShown(timeout), brief);
    const text = fits(full) ? full : fits(shorter) ? shorter : message(quoteShort(timeout, SHOWN_WHEN_LONG), brief);
    return { errors: [], warnings: [{ field: TIMEOUT_FIELD, message: text }] };
  }
  const errors = [settings.serverUrl === '' ? undefined : checkServerUrl(settings.serverUrl, refusing), ...checkService(service, refusing)];
  if (problem) errors.push(invalid(TIMEOUT_FIELD, timeout, `${problem.why}, so ${refusing}; ${problem.advice}`));
  return { errors: errors.filter((e): e is FieldError => e !== undefined), warnings: [] };
}

/**
 * What is wrong with an `httpRequestTimeout` as written: empty means 50s; otherwise a Go
 * duration `d` with `0 < d < 2m` and `d < 100s` (design document, 校验规则 / validation rules).
 *
 * @returns `why` (the value as parsed and the limit it broke, with the limit's reason) and
 *   `advice` (what to write instead), or `undefined` when Spiderpool accepts the value.
 */
export function httpRequestTimeoutProblem(text: string): { why: string; advice: string } | undefined {
  if (text === '') return undefined;
  let ns: bigint;
  try {
    ns = parseGoDuration(text);
  } catch (e) {
    // Suggest only what would be accepted ("50" → "50s", "1min" → "1m", not "100" → "100s").
    const suggestion = suggestGoDuration(text);
    const hint = suggestion !== undefined && httpRequestTimeoutProblem(suggestion) === undefined ? `did you mean ${quoteShown(suggestion)}? ` : '';
    return {
      why: `is not a Go duration (${truncate((e as Error).message)})`,
      advice: `${hint}write a number with a unit (ns, us, ms, s, m, h) such as "50s", or leave it empty for the default 50s`,
    };
  }
  const is = `is ${formatGoDuration(ns)}`;
  if (ns <= 0n) {
    return { why: `${is}, must be greater than 0 (every provider call would time out at once)`, advice: ADVICE };
  }
  if (ns >= STATIC_LIMIT_NS) {
    return {
      why:
        `${is}, must be less than 2m (the static limit: kubelet gives the whole Pod sandbox creation 2 minutes) ` +
        'and less than 100s (what the Spiderpool CNI plugin waits for the agent on ADD and DEL)',
      advice: ADVICE,
    };
  }
  if (ns >= CNI_AGENT_BUDGET_NS) {
    return {
      why: `${is}, must be less than 100s (what the Spiderpool CNI plugin waits for the agent on ADD and DEL, which one provider call must fit in)`,
      advice: ADVICE,
    };
  }
  return undefined;
}

/**
 * `serverUrl`, when set, exactly as Spiderpool's `ValidateConfig` checks it
 * (pkg/iaas/client/client.go): Go's `url.Parse` succeeds (see go-url.ts, which follows
 * the Go release of go/version.ts), the scheme is http or https, and `URL.Host` is not
 * empty. Only the host-with-port is checked, so `http://:80` passes, as it does there.
 */
function checkServerUrl(text: string, refusing: string = BOTH_REFUSE): FieldError | undefined {
  const url = parseGoUrl(text);
  const why = !url.ok
    ? `is not a URL Go can parse (${truncate(url.error)})`
    : url.scheme !== 'http' && url.scheme !== 'https'
      ? 'must be an http:// or https:// URL'
      : url.host === ''
        ? 'has no host'
        : undefined;
  if (why === undefined) return undefined;
  return invalid(
    PROVIDER.child('serverUrl').toString(),
    text,
    `${why}, so ${refusing}; write an http:// or https:// URL with a host, such as ` +
      `"http://iaas-network-provider.example.svc:80", or leave serverUrl empty to turn the IaaS provider off`,
  );
}

/**
 * PR #5778's `service` reference, when `service.name` is set: the namespace is required
 * and the port must be a TCP port (1-65535).
 */
function checkService(service: { name: string; namespace: string; port: bigint }, refusing: string): FieldError[] {
  if (service.name === '') return [];
  const errors: FieldError[] = [];
  if (service.namespace === '') {
    errors.push(
      required(
        PROVIDER.child('service', 'namespace').toString(),
        `the provider Service ${quoteShown(service.name)} needs its namespace, so ${refusing}; write the namespace the Service is in`,
      ),
    );
  }
  if (service.port < 1n || service.port > 65535n) {
    errors.push(
      invalid(
        PROVIDER.child('service', 'port').toString(),
        String(service.port),
        `must be a port between 1 and 65535, so ${refusing}; write the port the provider Service listens on, such as 80`,
      ),
    );
  }
  return errors;
}
