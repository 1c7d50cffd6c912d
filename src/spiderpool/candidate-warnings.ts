/**
 * The warnings for one source of candidate pools (a Pod or template annotation, a Namespace
 * annotation): per NIC and IP version, the category mix Spiderpool resolves by ignoring the
 * lower categories (categories.ts), pools that do not exist, patterns that match nothing,
 * and annotations Spiderpool refuses. Warnings, never denials: the write is fine, the Pod
 * start is what fails or behaves unexpectedly. Each is one line under 256 characters
 * without control characters (the API server drops a warning with any).
 */
import { MAX_WARNING_CHARS } from '../kubernetes/field-errors.js';
import { escapeUnprintable, quoteGoString } from '../go/strconv-quote.js';
import type { IPVersion } from './ip-ranges.js';
import type { Parsed } from './candidate-annotations.js';
import { BAD_PATTERN } from '../go/filepath-match.js';
import { STEPS_PER_REVIEW, type StepBudget } from './candidate-budget.js';
import { mixOf, resolve, type Category, type DualStack, type Mix, type PoolCatalog } from './candidate-categories.js';

/** Where candidates were written and what a refusal of them costs. */
export interface CandidateSource {
  /** The annotation key, named in each warning. */
  annotation: string;
  /** Its field path, e.g. `spec.template.metadata.annotations[ipam.spidernet.io/ippools]`. */
  field: string;
  /** Who is hurt when Spiderpool refuses it, e.g. `the Pod gets no IP address when it starts`. */
  refusal: string;
  parsed: Parsed;
}

export interface CandidateContext {
  pools: PoolCatalog;
  dualStack: DualStack;
  /** The review's own, shared by every source it checks (budget.ts). */
  budget: StepBudget;
}

/** Names listed before the rest is counted. */
const NAMES_SHOWN = 3;

const LABEL: Record<Category, string> = {
  paired: 'paired IaaS primary pools',
  iaas: 'IaaS pools',
  traditional: 'traditional pools',
};

/** `name` cut to `maxChars` characters. */
const cut = (name: string, maxChars: number): string => (name.length <= maxChars ? name : `${name.slice(0, maxChars - 1)}…`);

/** A name as shown: cut to `maxChars`, unprintable characters escaped (pool names are printable ASCII: kept as they are). */
const shown = (name: string, maxChars: number): string => {
  const text = cut(name, maxChars);
  return /^[ -~]*$/.test(text) ? text : escapeUnprintable(text);
};

const nameList = (names: readonly string[], maxChars: number): string => {
  const head = names
    .slice(0, NAMES_SHOWN)
    .map((n) => shown(n, maxChars))
    .join(', ');
  return `[${head}${names.length > NAMES_SHOWN ? ` (+${names.length - NAMES_SHOWN})` : ''}]`;
};

const quotedList = (names: readonly string[], maxChars: number): string => {
  const head = names
    .slice(0, NAMES_SHOWN)
    .map((n) => quoteGoString(cut(n, maxChars)))
    .join(', ');
  return `${head}${names.length > NAMES_SHOWN ? ` (+${names.length - NAMES_SHOWN})` : ''}`;
};

/**
 * The warning `build` makes with names cut to as many characters as keep it within
 * {@link MAX_WARNING_CHARS} (pool names run to 253), cut as a whole as a last resort.
 */
export function fit(build: (maxChars: number) => string): string {
  for (const maxChars of [Infinity, 48, 16]) {
    const text = build(maxChars);
    if (text.length <= MAX_WARNING_CHARS) return text;
  }
  return `${build(16).slice(0, MAX_WARNING_CHARS - 1)}…`;
}

const where = (nic: string | undefined, version: IPVersion, annotation: string, maxChars: number): string =>
  `${nic === undefined ? 'every NIC' : `NIC ${quoteGoString(cut(nic, maxChars))}`} IPv${version} (${annotation})`;

/** `only <kept> will be used; <ignored> are ignored, with no fallback`, names cut to `maxChars`. */
export function mixText(mix: Mix, maxChars: number): string {
  const ignored = mix.ignored.map((i) => `${LABEL[i.category]} ${nameList(i.names, maxChars)}`).join(' and ');
  return `only ${LABEL[mix.kept.category]} ${nameList(mix.kept.names, maxChars)} will be used; ${ignored} are ignored, with no fallback`;
}

const sameMix = (a: Mix | undefined, b: Mix | undefined): boolean =>
  JSON.stringify([a?.kept.names, a?.ignored.map((i) => i.names)]) === JSON.stringify([b?.kept.names, b?.ignored.map((i) => i.names)]);

/** The warnings for one NIC and version, or the pattern that makes Spiderpool refuse the whole annotation. */
function nicWarnings(
  source: CandidateSource,
  nic: string | undefined,
  version: IPVersion,
  names: readonly string[],
  context: CandidateContext,
): string[] | { badPattern: string } | 'over budget' {
  const { dualStack, budget } = context;
  const on = resolve(names, version, context.pools, dualStack.known ? dualStack.enableIPv6 : true, budget);
  if (on === 'over budget') return on;
  if (!on.ok) return { badPattern: on.pattern };
  const at = (maxChars: number) => `spiderpool: ${where(nic, version, source.annotation, maxChars)}`;
  const warnings: string[] = [];
  const { unmatched, grouped } = on;
  if (unmatched.length > 0) {
    warnings.push(
      fit(
        (m) =>
          `${at(m)}: ${unmatched.length === 1 ? 'pattern' : 'patterns'} ${quotedList(unmatched, m)} ${unmatched.length === 1 ? 'matches' : 'match'} no IPv${version} SpiderIPPool`,
      ),
    );
  }
  if (grouped.missing.length > 0) {
    const one = grouped.missing.length === 1;
    warnings.push(
      fit(
        (m) =>
          `${at(m)}: SpiderIPPool${one ? '' : 's'} ${quotedList(grouped.missing, m)} ${one ? 'does' : 'do'} not exist; Spiderpool fails the allocation when the Pod starts`,
      ),
    );
  }
  if (grouped.otherVersion.length > 0) {
    const one = grouped.otherVersion.length === 1;
    warnings.push(
      fit(
        (m) =>
          `${at(m)}: SpiderIPPool${one ? '' : 's'} ${quotedList(grouped.otherVersion, m)} ${one ? 'is not an' : 'are not'} IPv${version} pool${one ? '' : 's'}; name ${one ? 'it' : 'them'} under "ipv${version === 4 ? 6 : 4}"`,
      ),
    );
  }
  const mixOn = mixOf(grouped);
  if (dualStack.known) {
    if (mixOn) warnings.push(fit((m) => `${at(m)}: ${mixText(mixOn, m)}`));
    return warnings;
  }
  const off = resolve(names, version, context.pools, false, budget);
  if (off === 'over budget') return off;
  const mixOff = off.ok ? mixOf(off.grouped) : undefined;
  if (sameMix(mixOn, mixOff)) {
    if (mixOff) warnings.push(fit((m) => `${at(m)}: ${mixText(mixOff, m)}`));
  } else {
    const paired = grouped.byCategory.get('paired') ?? [];
    warnings.push(
      fit((m) => `${at(m)}: paired IaaS primary pools ${nameList(paired, m)} rank first only if dual-stack is on, which is not known: ${dualStack.reason}`),
    );
  }
  return warnings;
}

/** The one warning of a review that stopped checking at its step budget (budget.ts). */
export function overBudgetWarning(field: string, pools: number, version: IPVersion): string {
  return `spiderpool: ${field}: candidate pools were not checked: their names and wildcards need more than ${STEPS_PER_REVIEW} steps against ${pools} IPv${version} pools, this webhook's per-review bound`;
}

/**
 * The warnings for `source`, given the pools and dual-stack setting known now, within the
 * review's step budget.
 *
 * @returns one warning when the annotation is refused by Spiderpool (malformed, or a
 *   pattern Go's `filepath.Match` refuses), when the pools are not known yet, or when the
 *   review's step budget runs out (the budget is then marked exceeded); else, per NIC
 *   and IP version, one for a category mix, one for missing pools, one for patterns that match
 *   nothing, one for pools of the other version.
 */
export function candidateWarnings(source: CandidateSource, context: CandidateContext): string[] {
  const { parsed } = source;
  if (!parsed.ok && parsed.unchecked) return [`spiderpool: ${source.field}: candidate pools were not checked: ${parsed.reason}`];
  if (!parsed.ok) return [fit(() => `spiderpool: ${source.field}: ${escapeUnprintable(parsed.reason)}; Spiderpool refuses it, so ${source.refusal}`)];
  const unavailable = context.pools.unavailable();
  if (unavailable !== undefined) return [fit(() => `spiderpool: ${source.field}: candidate pools were not checked: ${unavailable}`)];
  const warnings: string[] = [];
  for (const { nic, ipv4, ipv6 } of parsed.nics) {
    for (const [version, names] of [
      [4, ipv4],
      [6, ipv6],
    ] as const) {
      if (names.length === 0) continue;
      // With IPv6 off Spiderpool drops the IPv6 candidates (`filterPoolMisspecified`, pkg/ipam/config.go).
      if (version === 6 && context.dualStack.known && !context.dualStack.enableIPv6) continue;
      const found = nicWarnings(source, nic, version, names, context);
      if (found === 'over budget') return [overBudgetWarning(source.field, context.pools.ofVersion(version).length, version)];
      if (!Array.isArray(found)) {
        return [
          fit(
            (m) =>
              `spiderpool: ${source.field}: pattern ${quoteGoString(cut(found.badPattern, m))} is malformed (Go filepath.Match: ${BAD_PATTERN}); Spiderpool refuses it, so ${source.refusal}`,
          ),
        ];
      }
      warnings.push(...found);
    }
  }
  return warnings;
}
