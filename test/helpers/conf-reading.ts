/**
 * What `readConfYml` makes of a conf.yml text, for the tests that expect one outcome: the
 * provider block read, or the refusals (each a field error as Kubernetes renders it).
 */
import { fieldErrorString } from '../../src/kubernetes/field-errors.js';
import { readConfYml } from '../../src/spiderpool/conf-yml.js';

/**
 * `serverUrl` and `httpRequestTimeout` of the provider block read from `text`.
 *
 * @throws Error listing the refusals when `text` is refused.
 */
export function confProvider(text: string) {
  const reading = readConfYml(text);
  if (!reading.ok) throw new Error(`expected a reading, got ${reading.errors.map(fieldErrorString).join('; ')}`);
  const { serverUrl, httpRequestTimeout } = reading.provider;
  return { serverUrl, httpRequestTimeout };
}

/**
 * The refusals of `text`, one rendered field error each.
 *
 * @throws Error showing the provider block (bigints as strings) when `text` is read.
 */
export function confRefusals(text: string): string[] {
  const reading = readConfYml(text);
  if (reading.ok) throw new Error(`expected a refusal, got ${JSON.stringify(reading.provider, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
  return reading.errors.map(fieldErrorString);
}
