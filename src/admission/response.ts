/**
 * Small constructors for the decisions rules return, named for what the caller means
 * (after controller-runtime's `admission.Allowed`, `Denied`, `Errored` and
 * `apierrors.NewInvalid`).
 */
import { aggregateFieldErrors, fieldErrorBody, forbidden, type FieldError } from '../kubernetes/field-errors.js';
import { quoteShown, truncate } from '../go/strconv-quote.js';
import type { GroupKind } from '../kubernetes/resources.js';
import type { Status, Verdict } from '../kubernetes/schema.js';

/**
 * At most this many warnings and field causes go into one response. Each is bounded in
 * length already, but their number follows cluster state (one per pool that names this one
 * as its pair), and the API server keeps only 4 KiB of warnings per request anyway.
 */
export const MAX_LISTED = 16;

/** `items` cut to {@link MAX_LISTED}, with `more(n)` in place of the `n` left out. */
function bounded<T>(items: readonly T[], more: (n: number) => T): T[] {
  return items.length <= MAX_LISTED ? [...items] : [...items.slice(0, MAX_LISTED - 1), more(items.length - MAX_LISTED + 1)];
}

const boundedWarnings = (warnings: readonly string[]) => bounded(warnings, (n) => `${n} more warnings not shown`);

/** Allow, with optional warnings (kubectl prints each as `Warning: <text>`). */
export function allowed(warnings: readonly string[] = []): Verdict {
  return warnings.length > 0 ? { allowed: true, warnings: boundedWarnings(warnings) } : { allowed: true };
}

/** Deny with a full `metav1.Status`, keeping any warnings. */
export function denied(status: Status, warnings: readonly string[] = []): Verdict {
  return warnings.length > 0 ? { allowed: false, status, warnings: boundedWarnings(warnings) } : { allowed: false, status };
}

/** `metav1.StatusReason` for the HTTP codes this webhook answers with (k8s.io/apimachinery/pkg/apis/meta/v1). */
export const REASON_BY_CODE: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'Timeout',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  431: 'RequestHeaderFieldsTooLarge',
  500: 'InternalError',
};

/**
 * Deny because the request could not be judged (controller-runtime's `Errored`), e.g. an
 * object whose fields do not have the types the rule reads. `code` is an HTTP status code.
 */
export function errored(code: number, message: string): Verdict {
  const reason = REASON_BY_CODE[code];
  return denied({ status: 'Failure', code, ...(reason ? { reason } : {}), message });
}

/**
 * The status Kubernetes returns for an invalid object (`apierrors.NewInvalid`): code 422,
 * reason `Invalid`, one cause per field error, and the message
 * `<Kind>.<group> "<name>" is invalid: <field>: <Type>: <detail>` (several as `[a, b]`).
 * kubectl prints `The <Kind> "<name>" is invalid: <field>: <cause message>` from the causes.
 *
 * More than {@link MAX_LISTED} errors are cut to that many, the last one saying how many
 * were left out (on the first error's field: the response stays bounded whatever the
 * cluster holds).
 *
 * @param errors at least one field error.
 */
export function invalidStatus(groupKind: GroupKind, name: string, allErrors: readonly FieldError[]): Status {
  const qualifiedKind = groupKind.group === '' ? groupKind.kind : `${groupKind.kind}.${groupKind.group}`;
  const errors = bounded(allErrors, (n) => forbidden(allErrors[0]!.field, `${n} more errors not shown`));
  return {
    status: 'Failure',
    code: 422,
    reason: 'Invalid',
    message: `${qualifiedKind} ${quoteShown(name)} is invalid: ${aggregateFieldErrors(errors)}`,
    details: {
      group: groupKind.group,
      kind: groupKind.kind,
      name: truncate(name), // at most 253 characters from the API server; bounded for direct callers
      causes: errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    },
  };
}
