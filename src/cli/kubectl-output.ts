/**
 * What kubectl prints for the API server's answer to a write, so `review` shows what an
 * operator would see on `kubectl apply` (k8s.io/kubectl/pkg/cmd/util/helpers.go,
 * `checkErr`/`StandardErrorMessage`/`MultilineError`; k8s.io/apiserver's
 * `webhookerrors.ToStatusErr`):
 *
 * - a denial with status reason `Invalid` and details: `The <Kind> "<name>" is invalid: `
 *   then the causes as `<field>: <message>` (duplicates dropped): one on the same line,
 *   several as `* …` lines below;
 * - any other denial: `Error from server (<reason>): error when <verb> "<source>":
 *   admission webhook "<webhook>" denied the request: <message>`;
 * - several refused writes in one run are kubectl's aggregate: each in that second form
 *   (kubectl renders an aggregate of errors without the `Invalid` special case);
 * - warnings as `Warning: <text>`, each distinct text once per run (kubectl's
 *   deduplicating warning writer); all of it on stderr.
 */
import { stringify } from 'yaml';
import { quoteGoString } from '../go/strconv-quote.js';
import type { Status } from '../kubernetes/schema.js';

/** One write's refusal, as the API server returns it to kubectl. */
export interface Refusal {
  status: Status;
  /** The webhook that denied it (the API server prefixes its message with that). */
  webhook: string;
  /** kubectl's verb for the write (`creating`, `replacing`, `deleting`). */
  verb: string;
  /** The file, as kubectl names it (`STDIN` for standard input). */
  source: string;
}

/** The API server's message for a webhook's denial (`ToStatusErr`). */
function deniedMessage(refusal: Refusal): string {
  const denied = `admission webhook ${quoteGoString(refusal.webhook)} denied the request`;
  const { message, reason } = refusal.status;
  return message !== '' ? `${denied}: ${message}` : reason ? `${denied}: ${reason}` : `${denied} without explanation`;
}

/** `StandardErrorMessage` of the status error, with kubectl's source prefix (`AddSourceToErr`). */
function standardMessage(refusal: Refusal): string {
  const text = `error when ${refusal.verb} ${quoteGoString(refusal.source)}: ${deniedMessage(refusal)}`;
  return refusal.status.reason ? `Error from server (${refusal.status.reason}): ${text}` : `Error from server: ${text}`;
}

/** kubectl's rendering of one refused write, ending with a newline. */
function singleRefusal(refusal: Refusal): string {
  const { status } = refusal;
  if (status.reason !== 'Invalid') return `${standardMessage(refusal)}\n`;
  const details = status.details;
  if (details === undefined) return 'The request is invalid\n';
  const head = details.kind !== '' || details.name !== '' ? `The ${details.kind} ${quoteGoString(details.name)} is invalid` : 'The request is invalid';
  const causes = [...new Set(details.causes.map((c) => `${c.field}: ${c.message}`))];
  if (causes.length === 0) return `${head}\n`;
  if (causes.length === 1) return `${head}: ${causes[0]}\n`;
  return `${head}: \n${causes.map((c) => `* ${c}\n`).join('')}`;
}

/** What kubectl prints on stderr for the refused writes of one run (nothing when none). */
export function renderRefusals(refusals: readonly Refusal[]): string {
  if (refusals.length === 0) return '';
  if (refusals.length === 1) return singleRefusal(refusals[0]!);
  return refusals.map((r) => `${standardMessage(r)}\n`).join('');
}

/** kubectl's warning lines for `warnings`, skipping those `seen` already; adds them to `seen`. */
export function renderWarnings(warnings: readonly string[] | undefined, seen: Set<string>): string {
  let out = '';
  for (const warning of warnings ?? []) {
    if (seen.has(warning)) continue;
    seen.add(warning);
    out += `Warning: ${warning}\n`;
  }
  return out;
}

/** The line kubectl prints on stdout for an accepted write: `spiderippool.spiderpool.spidernet.io/x created (server dry run)`. */
export function renderAccepted(kind: string, group: string, name: string, operation: 'CREATE' | 'UPDATE' | 'DELETE'): string {
  const what = { CREATE: 'created', UPDATE: 'configured', DELETE: 'deleted' }[operation];
  return `${kind.toLowerCase()}${group === '' ? '' : `.${group}`}/${name} ${what} (server dry run)\n`;
}

/** `-o json` or `-o yaml`, as kubectl offers them. */
export const OUTPUT_FORMATS = ['json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `value` printed for machines as `-o` asks: indented JSON, or YAML as kubectl prints it (one document). */
export function printed(value: unknown, format: OutputFormat): string {
  return format === 'json' ? JSON.stringify(value, null, 2) + '\n' : stringify(value, { lineWidth: 0 });
}
