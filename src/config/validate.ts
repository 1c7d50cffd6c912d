import { invalid, type FieldError, type FieldWarning } from '../field/errors.js';
import { escapeUnprintable } from '../field/quote.js';
import { byComponent, type Component } from './components.js';
import { readConfYml, type Stops } from './conf-yml.js';
import { checkProviderSettings } from './provider.js';
import type { GoStruct } from './schema.js';
import { startProblems } from './start-checks.js';

/** What stops Spiderpool (errors, and which component) and what it silently ignores (warnings). */
export interface ConfYmlFindings {
  errors: FieldError[];
  warnings: FieldWarning[];
  stops: Stops;
}

/**
 * Validates the text of Spiderpool's `conf.yml` as Spiderpool's agent and controller would
 * at start-up: the whole document decodable by both of their YAML decoders, the start-time
 * checks of `agent.networkResourcePlugin` on what each decoder read, and a valid
 * `iaasNetworkProvider` block when the provider is enabled.
 *
 * @returns field errors (paths relative to `conf.yml`) that would stop Spiderpool from
 *   starting, which component they stop, and warnings for settings Spiderpool ignores.
 *   Never throws.
 */
export function validateConfYml(text: string): ConfYmlFindings {
  const reading = readConfYml(text);
  const start = startErrors(reading.agent, reading.controller);
  if (!reading.ok) {
    return {
      errors: [...reading.errors, ...start.errors],
      warnings: reading.warnings,
      stops: { agent: reading.stops.agent || start.stops.agent, controller: reading.stops.controller || start.stops.controller },
    };
  }
  const provider = checkProviderSettings(reading.provider);
  const providerStops = provider.errors.length > 0;
  return {
    errors: [...start.errors, ...provider.errors],
    warnings: [...reading.warnings, ...provider.warnings],
    stops: { agent: start.stops.agent || providerStops, controller: start.stops.controller || providerStops },
  };
}

const START_STOPS: Readonly<Record<Component, string>> = {
  both: "Spiderpool's agent and controller refuse to start",
  agent: "Spiderpool's agent refuses to start (its decoder, gopkg.in/yaml.v3, reads the value differently from the controller's)",
  controller: "Spiderpool's controller refuses to start (its decoder, gopkg.in/yaml.v2, reads the value differently from the agent's)",
};

/**
 * The start-time checks on each decoder's reading (a decoder that refused the document
 * has no reading): one error per problem, naming the components it stops.
 */
export function startErrors(agent: GoStruct | undefined, controller: GoStruct | undefined): { errors: FieldError[]; stops: Stops } {
  const v3 = agent ? startProblems(agent) : [];
  const v2 = controller ? startProblems(controller) : [];
  const errors = byComponent(
    v3,
    v2,
    (p) => `${p.field}\n${p.why}`,
    // Label keys and values, names and patterns as written can hold controls: escaped, one line.
    (p, stops) => invalid(escapeUnprintable(p.field), p.badValue, escapeUnprintable(`${p.why}, so ${START_STOPS[stops]}; ${p.advice}`)),
  );
  return { errors, stops: { agent: v3.length > 0, controller: v2.length > 0 } };
}
