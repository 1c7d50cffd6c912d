/**
 * The committed ValidatingAdmissionPolicy evaluated by a CEL evaluator for JavaScript
 * (@marcbachmann/cel-js), as the API server evaluates it: the match conditions, then the
 * variables in order (one that fails to evaluate stays undefined, so that only an expression
 * reading it fails, as the API server's lazy variables do), then every validation.
 * Kubernetes' own CEL functions are emulated here: `strings.quote` (cel-go's ext strings:
 * escapes \a \b \f \n \r \t \v \\ and ", nothing else) and `list.indexOf`. What this cannot
 * check (cost limits, the API server's type checking, RE2 against JavaScript's regexps)
 * stays with the real kube-apiserver (test/e2e/admission-policy.test.ts).
 */
import { readFileSync } from 'node:fs';
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import { parseAllDocuments } from 'yaml';

type Obj = Record<string, any>;

const POLICY_FILE = new URL('../../deploy/components/validating-admission-policy/validatingadmissionpolicy.yaml', import.meta.url);

/** The characters cel-go's `strings.quote` escapes, and the letter after the backslash of each. */
const ESCAPED = '\x07\b\f\n\r\t\v"\\';
const ESCAPE_LETTERS = 'abfnrtv"\\';

/** cel-go's `strings.quote`. */
const celQuote = (s: string): string => `"${[...s].map((c) => (ESCAPED.includes(c) ? `\\${ESCAPE_LETTERS[ESCAPED.indexOf(c)]}` : c)).join('')}"`;

class Strings {}

function environment(): Environment {
  const env = new Environment({ unlistedVariablesAreDyn: true, enableOptionalTypes: true, homogeneousAggregateLiterals: false });
  env.registerType('Strings', Strings);
  env.registerConstant('strings', 'Strings', new Strings());
  env.registerFunction({
    name: 'quote',
    receiverType: 'Strings',
    returnType: 'string',
    handler: (_: unknown, s: string) => celQuote(s),
    params: [{ name: 's', type: 'string' }],
  });
  env.registerFunction({
    name: 'indexOf',
    receiverType: 'list',
    returnType: 'int',
    handler: (l: unknown[], v: unknown) => BigInt(l.indexOf(v)),
    params: [{ name: 'v', type: 'dyn' }],
  });
  return env;
}

/**
 * cel-js hands `matches` patterns to JavaScript's RegExp (no `u` flag), where RE2's `\x{HHHH}`
 * means something else: it is written as `\uHHHH` (every code point the policy names is in the BMP).
 */
const asJavaScriptRegExp = (expression: string): string => expression.replace(/\\x\{([0-9A-Fa-f]{1,4})\}/g, (_, hex: string) => `\\u${hex.padStart(4, '0')}`);

/**
 * JSON as the policy sees it: integers are int (bigint), and null fields are dropped, as the
 * API server drops them from objects of a CRD whose schema does not make them nullable.
 */
function celValue(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(celValue);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, celValue(v)]),
  );
}

/** What the policy decides: not matched (not judged), or the failed validations, in order, with their messages. */
type PolicyVerdict = { matched: false } | { matched: true; failed: { expression: string; message: string }[] };

/** A validation's failure, if it fails: false, or an evaluation error (failurePolicy Fail refuses then). */
function failure(v: { expression: string; check: ParseResult; message: (context: Obj) => unknown }, context: Obj): { expression: string; message: string }[] {
  try {
    return v.check(context) === true ? [] : [{ expression: v.expression, message: String(v.message(context)) }];
  } catch (error) {
    return [{ expression: v.expression, message: `evaluation error: ${(error as Error).message.split('\n')[0]}` }];
  }
}

/** An evaluator of the committed policy: `(object, oldObject)` (oldObject null on CREATE) to its verdict. */
export function committedPolicy(): (object: Obj, oldObject: Obj | null) => PolicyVerdict {
  const env = environment();
  const spec = parseAllDocuments(readFileSync(POLICY_FILE, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .find((d) => d['kind'] === 'ValidatingAdmissionPolicy')!['spec'];
  const compile = (expression: string): ParseResult => env.parse(asJavaScriptRegExp(expression));
  const conditions = (spec['matchConditions'] as Obj[]).map((c) => compile(c['expression']));
  const variables = (spec['variables'] as Obj[]).map((v) => [v['name'] as string, compile(v['expression'])] as const);
  const validations = (spec['validations'] as Obj[]).map((v) => ({
    expression: v['expression'] as string,
    check: compile(v['expression']),
    message: v['messageExpression'] === undefined ? () => v['message'] : compile(v['messageExpression']),
  }));
  return (object, oldObject) => {
    const context: Obj = { object: celValue(object), oldObject: oldObject === null ? null : celValue(oldObject), variables: {} };
    if (!conditions.every((c) => c(context) === true)) return { matched: false };
    for (const [name, expression] of variables) {
      try {
        context['variables'][name] = expression(context);
      } catch {
        // left undefined: reading it fails, as in the API server
      }
    }
    return { matched: true, failed: validations.flatMap((v) => failure(v, context)) };
  };
}
