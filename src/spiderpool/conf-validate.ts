import { invalid, type FieldError, type FieldWarning } from '../kubernetes/field-errors.js';
import { escapeUnprintable } from '../go/strconv-quote.js';
import { byComponent, type Component, type Stops } from './conf-components.js';
import { providerSettings, readConfYml, type ProviderSettings } from './conf-yml.js';
import { checkProviderSettings } from './conf-provider.js';
import type { GoStruct } from '../yaml-go/go-types.js';
import { agentSocketProblems, startProblems, type StartProblem } from './conf-start-checks.js';
import { CHART_ONLY_KEY, chartOnlyKeyMatters } from './conf-unknown-keys.js';

/** What stops Spiderpool (errors, and which component) and what it silently ignores (warnings). */
export interface ConfYmlFindings {
  errors: FieldError[];
  warnings: FieldWarning[];
  stops: Stops;
}

/**
 * Validates the text of Spiderpool's `conf.yml` as Spiderpool's agent and controller would
 * at start-up (Spiderpool main @ a7fbd3b, in the daemons' order): the whole document
 * decodable by each one's YAML decoder, then on what each decoded, the IaaS client's
 * `ValidateConfig` when the provider is enabled, the agent's unix socket path, and the
 * start-time checks of `agent.networkResourcePlugin`.
 *
 * @returns field errors (paths relative to `conf.yml`) that would stop Spiderpool from
 *   starting, which component they stop, and warnings for settings Spiderpool ignores or
 *   that its two components read differently. Never throws.
 */
export function validateConfYml(text: string): ConfYmlFindings {
  const read = readConfYml(text);
  // The chart-only key is reported only where it changes something (unknown-keys.ts).
  const chartKeyMatters = read.agent !== undefined && chartOnlyKeyMatters(read.agent);
  const reading = { ...read, warnings: read.warnings.filter((w) => w.field !== CHART_ONLY_KEY || chartKeyMatters) };
  const start = startErrors(reading.agent, reading.controller);
  const provider = providerFindings(reading.agent && providerSettings(reading.agent), reading.controller && providerSettings(reading.controller));
  const decoding = reading.ok ? { errors: [], stops: { agent: false, controller: false } } : reading;
  return {
    errors: [...decoding.errors, ...start.errors, ...provider.errors],
    warnings: [...reading.warnings, ...provider.warnings],
    stops: {
      agent: decoding.stops.agent || start.stops.agent || provider.stops.agent,
      controller: decoding.stops.controller || start.stops.controller || provider.stops.controller,
    },
  };
}

const PROVIDER_REFUSING: Readonly<Record<Component, string>> = {
  both: "Spiderpool's agent and controller refuse to start with it",
  agent: "Spiderpool's agent (gopkg.in/yaml.v3, which reads it so) refuses to start with it",
  controller: "Spiderpool's controller (gopkg.in/yaml.v2, which reads it so) refuses to start with it",
};

/**
 * The provider checks on each component's settings (`undefined` for a component whose
 * decoder refused the document): the same findings when both read the same settings;
 * otherwise each component's, naming the one it stops.
 */
function providerFindings(agent: ProviderSettings | undefined, controller: ProviderSettings | undefined): ConfYmlFindings {
  const same = agent !== undefined && JSON.stringify(agent, bigints) === JSON.stringify(controller, bigints);
  if (same) {
    const both = checkProviderSettings(agent);
    const stops = both.errors.length > 0;
    return { ...both, stops: { agent: stops, controller: stops } };
  }
  const none = { errors: [], warnings: [] };
  const v3 = agent ? checkProviderSettings(agent, PROVIDER_REFUSING.agent) : none;
  const v2 = controller ? checkProviderSettings(controller, PROVIDER_REFUSING.controller) : none;
  const warnings = [...new Map([...v3.warnings, ...v2.warnings].map((w) => [`${w.field}\n${w.message}`, w])).values()];
  return { errors: [...v3.errors, ...v2.errors], warnings, stops: { agent: v3.errors.length > 0, controller: v2.errors.length > 0 } };
}

const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? String(value) : value);

const START_STOPS: Readonly<Record<Component, string>> = {
  both: "Spiderpool's agent and controller refuse to start",
  agent: "Spiderpool's agent refuses to start (its decoder, gopkg.in/yaml.v3, reads the value differently from the controller's)",
  controller: "Spiderpool's controller refuses to start (its decoder, gopkg.in/yaml.v2, reads the value differently from the agent's)",
};
const AGENT_ONLY_STOPS = "Spiderpool's agent refuses to start (the controller does not use it)";

/**
 * The start-time checks on each decoder's reading (a decoder that refused the document
 * has no reading): one error per problem, naming the components it stops.
 */
function startErrors(agent: GoStruct | undefined, controller: GoStruct | undefined): { errors: FieldError[]; stops: Stops } {
  const socket = agent ? agentSocketProblems(agent) : [];
  const v3 = agent ? startProblems(agent) : [];
  const v2 = controller ? startProblems(controller) : [];
  const render = (p: StartProblem, stops: string) =>
    // Label keys and values, names and patterns as written can hold controls: escaped, one line.
    invalid(escapeUnprintable(p.field), p.badValue, escapeUnprintable(`${p.why}, so ${stops}; ${p.advice}`));
  const errors = [
    ...socket.map((p) => render(p, AGENT_ONLY_STOPS)),
    ...byComponent(
      v3,
      v2,
      (p) => `${p.field}\n${p.why}`,
      (p, stops) => render(p, START_STOPS[stops]),
    ),
  ];
  return { errors, stops: { agent: socket.length + v3.length > 0, controller: v2.length > 0 } };
}
