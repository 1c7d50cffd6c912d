/**
 * A deadline on one call of client-node's generated API clients (1.x sets none: a request
 * the API server accepts and never answers waits for good). The deadline is an
 * `AbortSignal` set on the request through a call-time middleware
 * (`RequestContext.setSignal`), which node-fetch honours while connecting, waiting for the
 * response and reading its body: at the deadline the request is destroyed and its socket
 * released, not merely raced. client-go's rest client does the same with a per-request
 * `context.WithTimeout` (k8s.io/client-go/rest/request.go, `Request.Timeout`).
 */
import { Observable, type ConfigurationOptions, type ObservableMiddleware } from '@kubernetes/client-node';

/**
 * How long one call may take by default, in milliseconds: a Secret, a ClusterRole or a
 * webhook configuration is one small object, answered in milliseconds by a working API server.
 */
const API_CALL_TIMEOUT_MS = 10_000;

/** A call abandoned at its deadline. */
class ApiTimeoutError extends Error {
  override name = 'ApiTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no answer from the API server within ${timeoutMs / 1000} s; the request was abandoned`);
  }
}

/** Call-time options that abort the request when `signal` aborts (appended to the client's own middleware). */
function abortingOn(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/**
 * Runs `call`, handing it the options to pass to the client-node method it makes (merge
 * others with client-node's `setHeaderOptions(key, value, options)`), and aborts that
 * request after `timeoutMs`.
 *
 * @throws ApiTimeoutError when the deadline passed first; otherwise what `call` throws
 *   (an `ApiException` for an answer other than 2xx, a connection error).
 */
export async function withDeadline<T>(call: (options: ConfigurationOptions) => Promise<T>, timeoutMs: number = API_CALL_TIMEOUT_MS): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    return await call(abortingOn(signal));
  } catch (err) {
    if (signal.aborted) throw new ApiTimeoutError(timeoutMs);
    throw err;
  }
}
