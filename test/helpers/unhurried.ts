/**
 * Server deadlines for the loopback tests that are not about a deadline. CI runs `npm test`
 * under `nice` beside the cluster suite, where this process's own clients (TLS included)
 * may send a body slower than the product's deadlines allow: a 408, a 429 or a reset would
 * then fail a test about something else. The deadlines are tested where they are the subject.
 */
import type { ServerTimeouts } from '../../src/server/limits.js';

/** Every deadline of an unhurried server, in milliseconds. */
const UNHURRIED_DEADLINE_MS = 60_000;

/** One minute for every deadline of the server's: beyond any test's own bound on an answer. */
export const UNHURRIED_TIMEOUTS: Partial<ServerTimeouts> = {
  handshakeMs: UNHURRIED_DEADLINE_MS,
  headersMs: UNHURRIED_DEADLINE_MS,
  requestMs: UNHURRIED_DEADLINE_MS,
  bodyWaitMs: UNHURRIED_DEADLINE_MS,
  bodyStallMs: UNHURRIED_DEADLINE_MS,
};

/**
 * A bound on a review's answer as a test's client times it, where that time is not the
 * subject: a third of the unhurried deadlines, so an answer that waited for one of them
 * still fails, while a loaded machine's slow handshakes and bodies do not.
 */
export const UNHURRIED_ANSWER_MS = UNHURRIED_DEADLINE_MS / 3;
