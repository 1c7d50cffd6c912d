import { destination as pinoDestination, pino, symbols, type DestinationStream, type Logger } from 'pino';

/**
 * The JSON logger: one object per line on stdout, as log collectors expect from a
 * container. `level` is a pino level name (`info` by default, `silent` in tests).
 *
 * Lines are written asynchronously (pino's SonicBoom destination on fd 1): a review never
 * waits for a write to stdout, and lines logged while one is being written go out together
 * in the next. Call {@link closeLog} before `process.exit`, so that no line is lost.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination: DestinationStream = pinoDestination({ dest: 1, sync: false })): Logger {
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
