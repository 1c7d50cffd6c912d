/**
 * What the API server said when it refused a request, from a client-node error, in one
 * line: for logs and CLI errors. Never the whole HTTP exchange that client-node puts into
 * an `ApiException`'s message (status line, body and every response header).
 */
import { ApiException } from '@kubernetes/client-node';
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
