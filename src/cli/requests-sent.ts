/**
 * `serve`'s start order: the server's modules load once the caches' first list requests are
 * written to their sockets (their `finish`, seen on Node's `http.client.request.start`
 * diagnostics channel). Why: loading holds the one thread, and with it the requests'
 * connections (docs/adr/0021-start-order.md).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';

const REQUEST_START = 'http.client.request.start';

/**
 * Runs `start`, then resolves with its result once at least one HTTP(S) request begun from
 * `start`'s call on has been sent and every such request is sent (`finish`) or has failed
 * (`close`), or `limitMs` milliseconds after `start` returned, whichever comes first (a
 * silent API server or a slow credential plugin delays the server's start by `limitMs` at
 * most).
 *
 * @throws what `start` throws.
 */
export async function afterRequestsSent<T>(start: () => Promise<T>, limitMs: number): Promise<T> {
  let pending = 0;
  let sent = 0;
  let settle: (() => void) | undefined;
  const done = () => {
    sent++;
    pending--;
    if (pending === 0) settle?.();
  };
  const onStart = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    pending++;
    let counted = false;
    const once = () => {
      if (counted) return;
      counted = true;
      done();
    };
    request.once('finish', once);
    request.once('close', once);
  };
  subscribe(REQUEST_START, onStart);
  try {
    const result = await start();
    await new Promise<void>((resolve) => {
      // Not unref'd: before the server listens, this timer may be all that keeps the process alive.
      const timer = setTimeout(resolve, limitMs);
      settle = () => {
        clearTimeout(timer);
        resolve();
      };
      if (sent > 0 && pending === 0) settle();
    });
    return result;
  } finally {
    unsubscribe(REQUEST_START, onStart);
  }
}
