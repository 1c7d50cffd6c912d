/**
 * How the server writes JSON answers: a body with `Content-Length` in one `res.end`, and
 * a client's mistake as a Kubernetes `Status` (the kube-apiserver shows its `message`
 * when a webhook call fails), with a one-line message and never a stack trace.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { REASON_BY_CODE } from '../admission/response.js';
import { truncate } from '../go/strconv-quote.js';

/** The `Status` reason of an HTTP code this server answers with. */
const reasonOf = (code: number): string => REASON_BY_CODE[code] ?? 'BadRequest';

export function statusBody(code: number, message: string) {
  const reason = reasonOf(code);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** Answers `code` with `value` as JSON; headers set before (`Allow`, `Retry-After`) are kept. */
export function sendJson(res: ServerResponse, code: number, value: unknown): void {
  sendJsonText(res, code, JSON.stringify(value));
}

/** Answers `code` with `json`, JSON already encoded. */
export function sendJsonText(res: ServerResponse, code: number, json: string): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

/**
 * Answers a refused request (`path` as requested) with a `Status` and logs the refusal
 * at info, the level of every answer that is not an allowed review.
 */
export function refuse(res: ServerResponse, logger: Logger, path: string, code: number, message: string): void {
  sendJson(res, code, statusBody(code, message));
  logRefusal(logger, path, code, message);
}

/** The log line of a refusal answered with `code` (see {@link refuse}). */
export function logRefusal(logger: Logger, path: string, code: number, message: string): void {
  logger.info({ path: truncate(path), code, reason: reasonOf(code), message: truncate(message) }, 'request refused');
}
