import { aggregateFieldErrors, fieldErrorBody, forbidden, invalid, required, tooMany, underField } from '../../src/kubernetes/field-errors.js';
import { quoteGoString } from '../../src/go/strconv-quote.js';
import { allowed, denied, invalidStatus, MAX_LISTED } from '../../src/admission/response.js';

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
    expect(underField('data[conf.yml]', [forbidden('', 'x'), forbidden('a.b', 'y')]).map((e) => e.field)).toEqual(['data[conf.yml]', 'data[conf.yml].a.b']);
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

  it('lists at most MAX_LISTED causes, the last saying how many were left out', () => {
    const errors = Array.from({ length: 5000 }, (_, i) => forbidden(`metadata.annotations[p${i}]`, 'no'));
    const status = invalidStatus({ group: 'spiderpool.spidernet.io', kind: 'SpiderIPPool' }, 'p', errors);
    expect(status.details!.causes).toHaveLength(MAX_LISTED);
    expect(status.details!.causes!.at(-1)).toEqual({
      reason: 'FieldValueForbidden',
      field: 'metadata.annotations[p0]',
      message: `Forbidden: ${5000 - MAX_LISTED + 1} more errors not shown`,
    });
    expect(status.message.length).toBeLessThan(2000);
    expect(invalidStatus({ group: '', kind: 'ConfigMap' }, 'cm', errors.slice(0, MAX_LISTED)).details!.causes).toHaveLength(MAX_LISTED);
  });
});

describe('warnings', () => {
  it('are kept up to MAX_LISTED, then cut with a count of the rest', () => {
    const warnings = Array.from({ length: 100 }, (_, i) => `w${i}`);
    expect(allowed(warnings.slice(0, MAX_LISTED)).warnings).toEqual(warnings.slice(0, MAX_LISTED));
    const cut = allowed(warnings).warnings!;
    expect(cut).toHaveLength(MAX_LISTED);
    expect(cut.at(-1)).toBe(`${100 - MAX_LISTED + 1} more warnings not shown`);
    expect(denied(invalidStatus({ group: '', kind: 'ConfigMap' }, 'cm', [forbidden('a', 'b')]), warnings).warnings).toEqual(cut);
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
