/**
 * The part of autocannon's programmatic API the load generator uses (autocannon ships no
 * types; `@types/autocannon` lags two majors behind).
 */
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: 'POST' | 'GET';
    headers?: Record<string, string>;
    body?: string | Buffer;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
  }
  interface Result {
    /** Responses per status class, e.g. `2xx`. */
    '2xx': number;
    non2xx: number;
    errors: number;
    timeouts: number;
    /** Seconds the run lasted. */
    duration: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
