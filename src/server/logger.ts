import { destination as pinoDestination, pino, symbols, type DestinationStream, type Logger } from 'pino';

/** Log bytes gathered before a write to stdout, and the longest a line waits for company. */
const LOG_WRITE_BYTES = 4096;
const LOG_WRITE_INTERVAL_MS = 100;

/**
 * The JSON logger: one object per line on stdout, as log collectors expect from a
 * container. `level` is a pino level name (`info` by default, `silent` in tests).
 *
 * Lines are written asynchronously (pino's SonicBoom destination on fd 1) and together: a
 * review never waits for stdout, and a write is made per {@link LOG_WRITE_BYTES} of lines
 * or every {@link LOG_WRITE_INTERVAL_MS} ms, not per line (a write per denial cost more
 * CPU than the review). Call {@link closeLog} before `process.exit`, so that no line is
 * lost; at any other exit SonicBoom writes what is left synchronously.
 */
export function createLogger(
  level = process.env.LOG_LEVEL ?? 'info',
  destination: DestinationStream = pinoDestination({ dest: 1, sync: false, minLength: LOG_WRITE_BYTES, periodicFlush: LOG_WRITE_INTERVAL_MS }),
): Logger {
  return pino({ level, base: { service: 'spiderpool-iaas-webhook' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

/**
 * Writes out every line logged so far and ends the destination; resolves once it is all
 * written (at once for a destination that is not asynchronous). Log nothing afterwards.
 */
export function closeLog(logger: Logger): Promise<void> {
  const stream = (logger as unknown as Record<symbol, unknown>)[symbols.streamSym] as
    | (DestinationStream & { end?: () => void; once?: (event: string, listener: () => void) => void; destroyed?: boolean })
    | undefined;
  if (stream?.end === undefined || stream.once === undefined || stream.destroyed === true) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once!('close', resolve);
    stream.end!();
  });
}
