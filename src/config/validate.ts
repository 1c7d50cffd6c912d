import { readConfYml } from './conf-yml.js';
import { checkProviderSettings, type ProviderFindings } from './provider.js';

/**
 * Validates the text of Spiderpool's `conf.yml` as Spiderpool's agent and controller would
 * at start-up: decodable by both of their YAML decoders, and a valid `iaasNetworkProvider`
 * block when the provider is enabled.
 *
 * @returns field errors (paths relative to `conf.yml`) that would stop Spiderpool from
 *   starting, and warnings for settings that are ignored now but would fail once enabled.
 *   Never throws.
 */
export function validateConfYml(text: string): ProviderFindings {
  const reading = readConfYml(text);
  return reading.ok ? checkProviderSettings(reading.provider) : { errors: reading.errors, warnings: [] };
}
