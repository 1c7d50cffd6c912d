/** Go's `time.Duration` is an int64 count of nanoseconds: its range. */
export const MIN_INT64 = -(1n << 63n);
export const MAX_INT64 = (1n << 63n) - 1n;

/** Nanoseconds per unit, as the `time.Nanosecond` … `time.Hour` constants (go/src/time/time.go). */
export const NANOSECOND = 1n;
export const MICROSECOND = 1_000n * NANOSECOND;
export const MILLISECOND = 1_000n * MICROSECOND;
export const SECOND = 1_000n * MILLISECOND;
export const MINUTE = 60n * SECOND;
export const HOUR = 60n * MINUTE;
