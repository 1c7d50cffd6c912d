/**
 * The PromQL reader the monitoring checks stand on (test/deploy/promql.ts): what it finds in
 * the shapes alert and dashboard queries use, and what it refuses.
 */
import { formatDurationMs, parseDurationMs, parsePromql, PromqlSyntaxError, rewriteRanges, selectors, walk } from './promql.js';

const names = (q: string) => selectors(parsePromql(q)).map((s) => s.name);
const calls = (q: string) => walk(parsePromql(q)).flatMap((e) => (e.type === 'call' ? [e.func] : []));

describe('parsePromql', () => {
  it('finds the metric names of selectors, inside calls, aggregations and binary operators', () => {
    expect(names('sum by (webhook) (rate(a_total{code=~"5.."}[5m])) / ignoring(code) group_left sum(rate(b_total[5m])) > 0')).toEqual(['a_total', 'b_total']);
    expect(names('time() - last_sync > 15 * 60 and synced == 1')).toEqual(['last_sync', 'synced']);
    expect(names('histogram_quantile(0.99, sum(rate(x_bucket[10m])) by (le))')).toEqual(['x_bucket']);
    expect(names('{__name__="by_name", job="a"}')).toEqual(['by_name']);
    expect(names('topk(3, x) or on(pod) vector(0)')).toEqual(['x']);
  });

  it('tells calls from selectors and aggregations (a metric may be called like a keyword)', () => {
    expect(calls('increase(sum[1h]) + absent(max)')).toEqual(['increase', 'absent']);
    expect(names('increase(sum[1h]) + absent(max)')).toEqual(['sum', 'max']);
    const tree = parsePromql('max by (rule) (v) > 0');
    expect(tree).toMatchObject({ type: 'binary', op: '>', lhs: { type: 'aggregate', op: 'max', grouping: { without: false, labels: ['rule'] } } });
  });

  it('keeps the precedence of PromQL: comparison above and, * above -', () => {
    expect(parsePromql('a - b < 7 * 86400')).toMatchObject({ op: '<', lhs: { op: '-' }, rhs: { op: '*' } });
    expect(parsePromql('a > 1 and b == 1 or c')).toMatchObject({ op: 'or', lhs: { op: 'and', lhs: { op: '>' }, rhs: { op: '==' } } });
    expect(parsePromql('2 ^ 3 ^ 2')).toMatchObject({ op: '^', lhs: { value: 2 }, rhs: { op: '^' } });
  });

  it('reads matchers with every operator, escapes and quotes', () => {
    const [s] = selectors(parsePromql(`m{a="x\\"y", b!='z', c=~".+[.]io", d!~\`\\d\`}`));
    expect(s!.matchers).toEqual([
      { label: 'a', op: '=', value: 'x"y' },
      { label: 'b', op: '!=', value: 'z' },
      { label: 'c', op: '=~', value: '.+[.]io' },
      { label: 'd', op: '!~', value: '\\d' },
    ]);
  });

  it('reads ranges, subqueries, offsets and Grafana variables in ranges', () => {
    expect(selectors(parsePromql('rate(x[$__rate_interval])'))[0]!.range!.text).toBe('$__rate_interval');
    expect(parsePromql('max_over_time(rate(x[1m])[1h:5m] offset 1d)')).toMatchObject({
      args: [{ type: 'subquery', range: { text: '1h' }, step: { text: '5m' }, offset: { text: '1d' } }],
    });
  });

  it.each([
    ['sum(rate(x[5m])', 'expected ")"'],
    ['rate(x[5])', 'is not a duration'],
    ['sum(x)[5m]', 'follows only an instant vector selector'],
    ['{job=~".*"}', 'needs a metric name'],
    ['x{a~"b"}', 'unexpected character'],
    ['x > bool', 'unexpected'],
    ['a + bool b', 'bool after +'],
    ['x{a="b}', 'unterminated string'],
    ['x y', 'unexpected "y"'],
  ])('refuses %s (%s)', (query, message) => {
    expect(() => parsePromql(query)).toThrow(PromqlSyntaxError);
    expect(() => parsePromql(query)).toThrow(message);
  });
});

describe('durations', () => {
  it('parse and format as Prometheus writes them', () => {
    expect(parseDurationMs('1h30m')).toBe(5_400_000);
    expect(parseDurationMs('500ms')).toBe(500);
    expect(formatDurationMs(5_400_000)).toBe('1h30m');
    expect(formatDurationMs(10_000)).toBe('10s');
    expect(() => parseDurationMs('30m1h')).toThrow('is not a duration');
    expect(() => parseDurationMs('1.5h')).toThrow('is not a duration');
  });

  it('rewriteRanges changes ranges and subquery steps only, in place', () => {
    expect(rewriteRanges('increase(x{a="[5m]"}[5m]) > 0 and max_over_time(y[1h:1m] offset 5m) > 0', (ms) => ms / 30)).toBe(
      'increase(x{a="[5m]"}[10s]) > 0 and max_over_time(y[2m:2s] offset 5m) > 0',
    );
    expect(rewriteRanges('rate(x[$__rate_interval])', () => 1000)).toBe('rate(x[$__rate_interval])');
  });
});
