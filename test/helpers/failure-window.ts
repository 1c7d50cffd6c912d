/**
 * What one fault cost the guarded writes of a fault run (test/kube/faults.ts), from the
 * times its failed calls were sent: the figures the two-node scenarios print and assert
 * (test/kube/twonode.test.ts).
 */
export interface FailureWindow {
  /** Failed calls sent from the fault's start until the next fault's (or the run's end). */
  failed: number;
  /** Seconds from the fault's start to the sending of its last failed call: 0 without one. */
  recoverySeconds: number;
  /**
   * The longest stretch of failures, in seconds: first to last call of a run of failed
   * calls each sent at most `gapSeconds` after the one before (calls that succeeded in
   * between, as when one replica of two is dead, do not end it).
   */
  longestStretchSeconds: number;
}

/**
 * The failures sent in [fromSeconds, toSeconds) of `failedAtSeconds` (ascending, seconds
 * from the run's start), summed up as {@link FailureWindow}.
 */
export function failureWindow(failedAtSeconds: readonly number[], fromSeconds: number, toSeconds: number, gapSeconds = 2): FailureWindow {
  const within = failedAtSeconds.filter((t) => t >= fromSeconds && t < toSeconds);
  let longest = 0;
  let stretchStart = within[0] ?? 0;
  within.forEach((t, i) => {
    if (i > 0 && t - within[i - 1]! > gapSeconds) stretchStart = t;
    longest = Math.max(longest, t - stretchStart);
  });
  const round = (s: number) => Math.round(s * 10) / 10;
  return {
    failed: within.length,
    recoverySeconds: within.length === 0 ? 0 : round(within[within.length - 1]! - fromSeconds),
    longestStretchSeconds: round(longest),
  };
}
