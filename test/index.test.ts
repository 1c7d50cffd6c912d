import * as api from '../src/index.js';

describe('public API (src/index.ts, what dist/index.js is built from; test/e2e runs the built files)', () => {
  it('exports the few names other tools call, and nothing else', () => {
    expect(api.parseGoDuration('1m30s')).toBe(90_000_000_000n);
    expect(api.formatGoDuration(90_000_000_000n)).toBe('1m30s');
    expect(() => api.parseGoDuration('50')).toThrow(new Error('time: missing unit in duration "50"'));
    expect(Object.keys(api).sort()).toEqual(['createReviewer', 'formatGoDuration', 'parseGoDuration', 'reviewAdmission', 'validateConfYml']);
  });
});
