/**
 * A small PromQL reader for checking the monitoring files (deploy/components/monitoring):
 * it parses an expression into a tree of selectors, function calls, aggregations and
 * binary operations, so a test can ask which series an alert names and what each
 * function is applied to. It follows the grammar of Prometheus' promql/parser
 * (generated_parser.y, lex.go) for what alert and dashboard queries use, plus Grafana's
 * `$variable` / `${variable}` in ranges. It is not a validator of all PromQL: what it does
 * not know it refuses with `PromqlSyntaxError`, naming the offset.
 */

/** A range or offset as written (`5m`, `$__rate_interval`), with its place in the source. */
export interface Duration {
  text: string;
  /** Offsets of the text in the source expression: `source.slice(start, end) === text`. */
  start: number;
  end: number;
}

export interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export type Expr =
  | { type: 'number'; value: number }
  | { type: 'string'; value: string }
  | { type: 'selector'; name: string | undefined; matchers: Matcher[]; range?: Duration; offset?: Duration }
  | { type: 'call'; func: string; args: Expr[] }
  | { type: 'aggregate'; op: string; param?: Expr; expr: Expr; grouping?: { without: boolean; labels: string[] } }
  | { type: 'binary'; op: string; lhs: Expr; rhs: Expr; bool: boolean }
  | { type: 'unary'; op: '-' | '+'; expr: Expr }
  | { type: 'paren'; expr: Expr }
  | { type: 'subquery'; expr: Expr; range: Duration; step?: Duration; offset?: Duration };

export class PromqlSyntaxError extends Error {
  override name = 'PromqlSyntaxError';
}

/** promql/parser/lex.go's aggregation operators (`key` tokens). */
const AGGREGATIONS = new Set([
  'sum',
  'avg',
  'count',
  'min',
  'max',
  'group',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'count_values',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Aggregations with a parameter before the expression: `topk(3, x)`. */
const PARAMETERISED = new Set(['topk', 'bottomk', 'count_values', 'quantile', 'limitk', 'limit_ratio']);

/** Binary operators by precedence, lowest first (promql/parser/lex.go, ItemType.Precedence). */
const PRECEDENCE: readonly (readonly string[])[] = [['or'], ['and', 'unless'], ['==', '!=', '<=', '<', '>=', '>'], ['+', '-'], ['*', '/', '%', 'atan2'], ['^']];
const COMPARISONS = new Set(PRECEDENCE[2]);

type Token =
  | { kind: 'ident'; text: string; at: number }
  | { kind: 'number'; text: string; at: number }
  | { kind: 'string'; text: string; at: number }
  | { kind: 'op'; text: string; at: number }
  | { kind: 'end'; text: ''; at: number };

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_:]/;
const OPERATORS = ['==', '!=', '=~', '!~', '<=', '>=', '<', '>', '=', '+', '-', '*', '/', '%', '^', '(', ')', '{', '}', '[', ']', ',', '@', ':'];

/** Reads the string literal starting at `at` (", ' or `); returns its value and the offset after it. */
function readString(source: string, at: number): { value: string; next: number } {
  const quote = source[at]!;
  let value = '';
  let i = at + 1;
  while (i < source.length && source[i] !== quote) {
    if (source[i] === '\\' && quote !== '`') {
      const escaped = source[i + 1];
      if (escaped === undefined) break;
      // Go string escapes (PromQL strings are Go's): the ones a regex or label needs.
      value += escaped === 'n' ? '\n' : escaped === 't' ? '\t' : escaped;
      i += 2;
    } else {
      value += source[i];
      i++;
    }
  }
  if (i >= source.length) throw new PromqlSyntaxError(`unterminated string starting at offset ${at}`);
  return { value, next: i + 1 };
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '"' || c === "'" || c === '`') {
      const { value, next } = readString(source, i);
      tokens.push({ kind: 'string', text: value, at: i });
      i = next;
    } else if (/[0-9.]/.test(c)) {
      // A number (1, 0.5, 1e3, 0x1f) or a duration (5m, 1h30m): letters and digits run on.
      const at = i;
      while (i < source.length && /[0-9A-Za-z.]/.test(source[i]!)) {
        if (/[eE]/.test(source[i]!) && /[+-]/.test(source[i + 1] ?? '') && /^[0-9.]+$/.test(source.slice(at, i))) i++;
        i++;
      }
      tokens.push({ kind: 'number', text: source.slice(at, i), at });
    } else if (IDENT_START.test(c)) {
      const at = i;
      while (i < source.length && IDENT_PART.test(source[i]!)) i++;
      tokens.push({ kind: 'ident', text: source.slice(at, i), at });
    } else if (c === '$') {
      // Grafana's variables ($__rate_interval, ${job}), read as one token.
      const at = i;
      i++;
      if (source[i] === '{') {
        while (i < source.length && source[i] !== '}') i++;
        i++;
      } else {
        while (i < source.length && IDENT_PART.test(source[i]!)) i++;
      }
      tokens.push({ kind: 'number', text: source.slice(at, i), at });
    } else {
      const op = OPERATORS.find((o) => source.startsWith(o, i));
      if (op === undefined) throw new PromqlSyntaxError(`unexpected character ${JSON.stringify(c)} at offset ${i}`);
      tokens.push({ kind: 'op', text: op, at: i });
      i += op.length;
    }
  }
  tokens.push({ kind: 'end', text: '', at: source.length });
  return tokens;
}

class Parser {
  private pos = 0;
  private readonly tokens: Token[];

  constructor(private readonly source: string) {
    this.tokens = tokenize(source);
  }

  parse(): Expr {
    const expr = this.expression(0);
    const rest = this.peek();
    if (rest.kind !== 'end') throw this.error(`unexpected ${JSON.stringify(rest.text)}`);
    return expr;
  }

  private peek(ahead = 0): Token {
    return this.tokens[Math.min(this.pos + ahead, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const token = this.peek();
    this.pos++;
    return token;
  }

  private error(message: string): PromqlSyntaxError {
    return new PromqlSyntaxError(`${message} at offset ${this.peek().at} of ${JSON.stringify(this.source)}`);
  }

  private expect(text: string): Token {
    const token = this.next();
    if (token.text !== text || token.kind === 'string') {
      this.pos--;
      throw this.error(`expected ${JSON.stringify(text)}, found ${JSON.stringify(token.text)}`);
    }
    return token;
  }

  private isOp(text: string): boolean {
    const token = this.peek();
    return token.kind === 'op' && token.text === text;
  }

  private isKeyword(text: string): boolean {
    const token = this.peek();
    return token.kind === 'ident' && token.text.toLowerCase() === text;
  }

  /** Binary operators at `level` of PRECEDENCE and above, left-associative but for `^`. */
  private expression(level: number): Expr {
    if (level === PRECEDENCE.length) return this.unary();
    let lhs = this.expression(level + 1);
    for (;;) {
      const token = this.peek();
      const op = token.kind === 'op' || token.kind === 'ident' ? token.text.toLowerCase() : '';
      if (!PRECEDENCE[level]!.includes(op)) return lhs;
      this.next();
      const bool = this.isKeyword('bool');
      if (bool) {
        if (!COMPARISONS.has(op)) throw this.error(`bool after ${op}, which is not a comparison`);
        this.next();
      }
      this.vectorMatching();
      const rhs = op === '^' ? this.expression(level) : this.expression(level + 1);
      lhs = { type: 'binary', op, lhs, rhs, bool };
    }
  }

  /** `on(...)` / `ignoring(...)` and `group_left(...)` / `group_right(...)`; the labels are not kept. */
  private vectorMatching(): void {
    if (this.isKeyword('on') || this.isKeyword('ignoring')) {
      this.next();
      this.labelList();
      if (this.isKeyword('group_left') || this.isKeyword('group_right')) {
        this.next();
        if (this.isOp('(')) this.labelList();
      }
    }
  }

  private labelList(): string[] {
    this.expect('(');
    const labels: string[] = [];
    while (!this.isOp(')')) {
      const token = this.next();
      if (token.kind !== 'ident' && token.kind !== 'string') throw this.error(`expected a label name, found ${JSON.stringify(token.text)}`);
      labels.push(token.text);
      if (!this.isOp(')')) this.expect(',');
    }
    this.expect(')');
    return labels;
  }

  private unary(): Expr {
    if (this.isOp('-') || this.isOp('+')) {
      const op = this.next().text as '-' | '+';
      return { type: 'unary', op, expr: this.unary() };
    }
    return this.postfix(this.primary());
  }

  /** `[range]` on a selector, `[range:step]` on anything (a subquery), `offset`, `@`. */
  private postfix(expr: Expr): Expr {
    for (;;) {
      if (this.isOp('[')) {
        this.next();
        const range = this.duration();
        if (this.isOp(']')) {
          this.next();
          if (expr.type !== 'selector' || expr.range !== undefined || expr.offset !== undefined)
            throw this.error('a range [..] follows only an instant vector selector');
          expr = { ...expr, range };
          continue;
        }
        this.expect(':');
        const step = this.isOp(']') ? undefined : this.duration();
        this.expect(']');
        expr = { type: 'subquery', expr, range, ...(step ? { step } : {}) };
      } else if (this.isKeyword('offset')) {
        this.next();
        const negative = this.isOp('-');
        if (negative) this.next();
        const offset = this.duration();
        if (expr.type !== 'selector' && expr.type !== 'subquery') throw this.error('offset follows only a selector or a subquery');
        expr = { ...expr, offset };
      } else if (this.isOp('@')) {
        this.next();
        const token = this.next();
        if (token.kind !== 'number' && !(token.kind === 'ident' && ['start', 'end'].includes(token.text))) throw this.error('expected a time after @');
        if (token.kind === 'ident') {
          this.expect('(');
          this.expect(')');
        }
      } else {
        return expr;
      }
    }
  }

  private duration(): Duration {
    const token = this.next();
    if (token.kind !== 'number') {
      this.pos--;
      throw this.error(`expected a duration, found ${JSON.stringify(token.text)}`);
    }
    if (!token.text.startsWith('$')) parseDurationMs(token.text);
    return { text: token.text, start: token.at, end: token.at + token.text.length };
  }

  private primary(): Expr {
    const token = this.peek();
    if (token.kind === 'number') {
      this.next();
      const value = Number(token.text);
      if (token.text.startsWith('$') || Number.isNaN(value)) throw this.error(`${JSON.stringify(token.text)} is not a number`);
      return { type: 'number', value };
    }
    if (token.kind === 'string') {
      this.next();
      return { type: 'string', value: token.text };
    }
    if (this.isOp('(')) {
      this.next();
      const expr = this.expression(0);
      this.expect(')');
      return { type: 'paren', expr };
    }
    if (this.isOp('{')) return this.selector(undefined);
    if (token.kind === 'ident') {
      const lower = token.text.toLowerCase();
      if (['inf', 'nan'].includes(lower)) {
        this.next();
        return { type: 'number', value: lower === 'inf' ? Infinity : NaN };
      }
      if (AGGREGATIONS.has(lower) && (this.peek(1).text === '(' || ['by', 'without'].includes(this.peek(1).text.toLowerCase()))) return this.aggregate();
      this.next();
      if (this.isOp('(')) return this.call(token.text);
      return this.selector(token.text);
    }
    throw this.error(`unexpected ${JSON.stringify(token.text)}`);
  }

  private aggregate(): Expr {
    const op = this.next().text.toLowerCase();
    let grouping = this.grouping();
    this.expect('(');
    let param: Expr | undefined;
    if (PARAMETERISED.has(op)) {
      param = this.expression(0);
      this.expect(',');
    }
    const expr = this.expression(0);
    this.expect(')');
    grouping ??= this.grouping();
    return { type: 'aggregate', op, ...(param ? { param } : {}), expr, ...(grouping ? { grouping } : {}) };
  }

  private grouping(): { without: boolean; labels: string[] } | undefined {
    if (!this.isKeyword('by') && !this.isKeyword('without')) return undefined;
    const without = this.next().text.toLowerCase() === 'without';
    return { without, labels: this.labelList() };
  }

  private call(func: string): Expr {
    this.expect('(');
    const args: Expr[] = [];
    while (!this.isOp(')')) {
      args.push(this.expression(0));
      if (!this.isOp(')')) this.expect(',');
    }
    this.expect(')');
    return { type: 'call', func, args };
  }

  private selector(name: string | undefined): Expr {
    const matchers: Matcher[] = [];
    if (this.isOp('{')) {
      this.next();
      while (!this.isOp('}')) {
        const label = this.next();
        if (label.kind !== 'ident' && label.kind !== 'string') throw this.error(`expected a label name, found ${JSON.stringify(label.text)}`);
        const op = this.next();
        if (op.kind !== 'op' || !['=', '!=', '=~', '!~'].includes(op.text)) throw this.error(`expected a label matcher operator after ${label.text}`);
        const value = this.next();
        if (value.kind !== 'string') throw this.error(`expected a string after ${label.text}${op.text}`);
        matchers.push({ label: label.text, op: op.text as Matcher['op'], value: value.text });
        if (!this.isOp('}')) this.expect(',');
      }
      this.expect('}');
    }
    const named = matchers.find((m) => m.label === '__name__' && m.op === '=');
    const metric = name ?? named?.value;
    if (metric === undefined && matchers.every(matchesEmpty)) {
      throw this.error('a selector needs a metric name or a matcher that does not match the empty string');
    }
    return { type: 'selector', name: metric, matchers };
  }
}

/** Whether the matcher selects series without the label (its value the empty string). */
function matchesEmpty(m: Matcher): boolean {
  switch (m.op) {
    case '=':
      return m.value === '';
    case '!=':
      return m.value !== '';
    case '=~':
      return fullMatch(m.value, '');
    case '!~':
      return !fullMatch(m.value, '');
  }
}

/**
 * Whether the RE2 `pattern` matches all of `value`, as a label matcher does (Prometheus
 * anchors it). JavaScript's RegExp reads the RE2 syntax these files use the same way.
 */
export function fullMatch(pattern: string, value: string): boolean {
  return new RegExp(`^(?:${pattern})$`).test(value);
}

/** Parses one PromQL expression. @throws PromqlSyntaxError naming the offset. */
export function parsePromql(source: string): Expr {
  return new Parser(source).parse();
}

/** The direct children of `expr`. */
export function children(expr: Expr): Expr[] {
  switch (expr.type) {
    case 'call':
      return expr.args;
    case 'aggregate':
      return expr.param ? [expr.param, expr.expr] : [expr.expr];
    case 'binary':
      return [expr.lhs, expr.rhs];
    case 'unary':
    case 'paren':
    case 'subquery':
      return [expr.expr];
    default:
      return [];
  }
}

/** `expr` and everything under it, parents first. */
export function walk(expr: Expr): Expr[] {
  return [expr, ...children(expr).flatMap(walk)];
}

/** Every vector selector in `expr`. */
export function selectors(expr: Expr): Extract<Expr, { type: 'selector' }>[] {
  return walk(expr).filter((e): e is Extract<Expr, { type: 'selector' }> => e.type === 'selector');
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/**
 * A PromQL duration (`1h30m`, `90s`, `500ms`; units ms s m h d w y, each at most once, largest
 * first, as model.ParseDuration in prometheus/common) in milliseconds.
 *
 * @throws PromqlSyntaxError for anything else.
 */
export function parseDurationMs(text: string): number {
  const parts = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(text);
  if (text === '' || parts === null) throw new PromqlSyntaxError(`${JSON.stringify(text)} is not a duration (e.g. 5m, 1h30m)`);
  const units = ['y', 'w', 'd', 'h', 'm', 's', 'ms'];
  return parts.slice(1).reduce((sum, n, i) => sum + (n === undefined ? 0 : Number(n) * UNIT_MS[units[i]!]!), 0);
}

/** Milliseconds as the shortest PromQL duration (`90000` → `1m30s`). */
export function formatDurationMs(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const unit of ['y', 'w', 'd', 'h', 'm', 's', 'ms']) {
    const n = Math.floor(rest / UNIT_MS[unit]!);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * UNIT_MS[unit]!;
  }
  return text;
}

/**
 * `source` with every range and subquery duration replaced by `change(ms)` (offsets and
 * Grafana variables untouched): how a test variant of an alert with shorter windows is made
 * from the one rule file.
 */
export function rewriteRanges(source: string, change: (ms: number) => number): string {
  const durations = walk(parsePromql(source))
    .flatMap((e) => (e.type === 'selector' ? (e.range ? [e.range] : []) : e.type === 'subquery' ? [e.range, ...(e.step ? [e.step] : [])] : []))
    .filter((d) => !d.text.startsWith('$'))
    .sort((a, b) => b.start - a.start);
  let out = source;
  for (const d of durations) out = out.slice(0, d.start) + formatDurationMs(change(parseDurationMs(d.text))) + out.slice(d.end);
  return out;
}
