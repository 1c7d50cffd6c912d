import { aggregateFieldErrors, fieldErrorBody, forbidden, invalid, required, tooMany, underField } from '../../src/field/errors.js';
import { quoteGoString } from '../../src/field/quote.js';
import { invalidStatus } from '../../src/admission/response.js';

describe('field errors render as Kubernetes renders them', () => {
  it.each([
    [forbidden('spec.nodeName', 'no'), 'Forbidden: no'],
    [invalid('a', '100s', 'too long'), 'Invalid value: "100s": too long'],
    [invalid('a', 'x\ny', 'one line'), 'Invalid value: "x\\ny": one line'],
    [invalid('a', undefined, 'omitted'), 'Invalid value: omitted'],
    [required('data[conf.yml]', 'needed'), 'Required value: needed'],
    [tooMany('spec.ips', 70000, 32768, 'use ranges'), 'Too many: 70000: must have at most 32768 items; use ranges'],
  ])('%j → %s', (error, body) => {
    expect(fieldErrorBody(error)).toBe(body);
  });

  it('aggregates one error bare and several in brackets, without duplicates', () => {
    const a = forbidden('a', 'x');
    const b = forbidden('b', 'y');
    expect(aggregateFieldErrors([a])).toBe('a: Forbidden: x');
    expect(aggregateFieldErrors([a, b, a])).toBe('[a: Forbidden: x, b: Forbidden: y]');
  });

  it('re-roots field paths', () => {
    expect(underField('data[conf.yml]', [forbidden('', 'x'), forbidden('a.b', 'y')]).map((e) => e.field)).toEqual([
      'data[conf.yml]',
      'data[conf.yml].a.b',
    ]);
  });

  it('builds the apierrors.NewInvalid status', () => {
    expect(invalidStatus({ group: '', kind: 'ConfigMap' }, 'cm', [invalid('data[x]', 'v', 'bad')])).toEqual({
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'ConfigMap "cm" is invalid: data[x]: Invalid value: "v": bad',
      details: { group: '', kind: 'ConfigMap', name: 'cm', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "v": bad', field: 'data[x]' }] },
    });
  });
});

describe('quoteGoString (strconv.Quote)', () => {
  it.each([
    ['pool-a', '"pool-a"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['line\nbreak\ttab', '"line\\nbreak\\ttab"'],
    ['\x00\x1b\x7f', '"\\x00\\x1b\\x7f"'],
    ['héllo 世界', '"héllo 世界"'],
    ['\u00a0\u200b', '"\\u00a0\\u200b"'],
    ['\u{e0001}', '"\\U000e0001"'],
    ['\ud800', '"\ufffd"'],
  ])('%j → %s', (input, quoted) => {
    expect(quoteGoString(input)).toBe(quoted);
  });
});
