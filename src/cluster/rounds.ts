/**
 * A loop of rounds for the replicas' own upkeep (peers.ts, rebalance.ts): the first at
 * once, each next one `intervalMs` after the previous one began, at once when a round
 * outlasted the interval (a silent peer's probe waits its whole deadline), never two at a time.
 */

export interface Rounds {
  /** Runs a round now, or joins the one running; resolves when it ends (tests drive rounds so). */
  round(): Promise<void>;
  stop(): void;
}

/**
 * @param round one round; it must not throw (log inside it).
 * @param nowMs a monotonic clock in milliseconds.
 */
export function startRounds(round: () => Promise<void>, intervalMs: number, nowMs: () => number): Rounds {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= (async () => {
      const startedMs = nowMs();
      await round();
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(() => void tick(), Math.max(0, intervalMs - (nowMs() - startedMs))).unref();
    })().finally(() => (running = undefined));
    return running;
  };
  void tick();
  return {
    round: tick,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
