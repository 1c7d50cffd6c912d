/**
 * What the API server said when it refused a request, from a client-node error, in one
 * line: for logs and CLI errors. Never the whole HTTP exchange that client-node puts into
 * an `ApiException`'s message (status line, body and every response header).
 */
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { StatusSchema } from '../kubernetes/schema.js';

/** Longest message kept from a response body, in characters. */
const MAX_MESSAGE_CHARS = 300;

/** The parts of a `metav1.Status` an error summary uses; `details` names the resource for 403 and 404. */
const ApiServerStatusSchema = StatusSchema.pick({ reason: true, message: true })
  .partial()
  .extend({ details: z.object({ group: z.string(), kind: z.string() }).partial().optional() });

export interface ApiErrorSummary {
  /** The HTTP status, when the API server answered. */
  statusCode?: number;
  /** The Status `reason` (`NotFound`, `Forbidden`, ...), when the body was a Status. */
  reason?: string;
  /** One line: the Status message, else the start of the body, else the error's own message. */
  message: string;
  /** The Status `details.group` and `details.kind` (for a 403 or 404: the resource asked for). */
  details?: { group?: string; kind?: string };
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}…` : line;
}

/** The Status in an `ApiException` body (client-node keeps the body as text), if it is one. */
function statusIn(body: unknown): z.infer<typeof ApiServerStatusSchema> | undefined {
  if (typeof body !== 'string') return ApiServerStatusSchema.safeParse(body).data;
  try {
    return ApiServerStatusSchema.safeParse(JSON.parse(body)).data;
  } catch {
    return undefined;
  }
}

/**
 * Summarizes `err`: an `ApiException` (the generated API clients), an error with a numeric
 * `statusCode` (client-node's `Watch` on a non-200 answer; it reads no body), or any
 * other error (a connection failure: its message and that of its `cause`).
 */
export function summarizeApiError(err: unknown): ApiErrorSummary {
  if (err instanceof ApiException) {
    const status = statusIn(err.body);
    const body = typeof err.body === 'string' ? err.body : '';
    // A Status without a message says no more than its code; a body of another shape is shown as it came.
    const message = oneLine(status?.message ?? ((status === undefined && body) || (err.code === 401 ? 'Unauthorized' : `HTTP ${err.code}`)));
    return {
      statusCode: err.code,
      message,
      ...(status?.reason ? { reason: status.reason } : {}),
      ...(status?.details ? { details: status.details } : {}),
    };
  }
  const e = err as { message?: unknown; statusCode?: unknown; cause?: { message?: unknown } } | undefined;
  const own = typeof e?.message === 'string' ? e.message : String(err);
  const cause = typeof e?.cause?.message === 'string' && !own.includes(e.cause.message) ? ` (${e.cause.message})` : '';
  const message = oneLine(own + cause);
  return typeof e?.statusCode === 'number' ? { statusCode: e.statusCode, message } : { message };
}

/** `context "kind", server https://127.0.0.1:6443`: where a request went, as errors name it. */
export function connectionName(config: KubeConfig): string {
  return `context ${JSON.stringify(config.getCurrentContext())}, server ${config.getCurrentCluster()?.server ?? '(none)'}`;
}

/** Whether `err` (or its cause) is a refused TCP connection (client-go's `IsConnectionRefused`). */
function connectionRefused(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  return [e?.code, e?.cause?.code].includes('ECONNREFUSED') || /ECONNREFUSED/.test(`${e?.message} ${e?.cause?.message}`);
}

/**
 * A failed call in kubectl's words (k8s.io/kubectl/pkg/cmd/util/helpers.go `checkErr`,
 * `StandardErrorMessage`), in one line, with what to check:
 *
 * @param server the cluster's URL, whose host kubectl names for a refused connection.
 * @param resource what was asked for (`spiderippools.spiderpool.spidernet.io/v2beta1`), named on a 404.
 * @param notFoundHint what to check on a 404 (e.g. that a CRD is installed).
 */
export function kubectlErrorLine(err: unknown, server: string, resource: string, notFoundHint: string): string {
  const summary = summarizeApiError(err);
  if (summary.statusCode === undefined) {
    if (connectionRefused(err)) return `The connection to the server ${hostOf(server)} was refused - did you specify the right host or port?`;
    return `Unable to connect to the server: ${summary.message}; check the server address and the network`;
  }
  if (summary.statusCode === 404) return `the server could not find the requested resource (${resource}); ${notFoundHint}`;
  if (summary.statusCode === 401) return 'You must be logged in to the server (Unauthorized); check the credentials of the kubeconfig';
  return `Error from server (${summary.reason ?? `HTTP ${summary.statusCode}`}): ${summary.message}`;
}

function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}
