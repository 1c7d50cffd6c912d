import { pino, type Logger } from 'pino';

/**
 * The JSON logger: one object per line on stdout, as log collectors expect from a
 * container. `level` is a pino level name (`info` by default, `silent` in tests).
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { service: 'spiderpool-iaas-webhook' }, timestamp: pino.stdTimeFunctions.isoTime });
}
