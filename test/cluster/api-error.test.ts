import { ApiException } from '@kubernetes/client-node';
import { summarizeApiError } from '../../src/cluster/api-error.js';

describe('summarizeApiError', () => {
  it("takes the Status message, reason and details from an ApiException, not client-node's HTTP dump", () => {
    const body = JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'x is forbidden',
      details: { group: 'g.io', kind: 'things' },
    });
    const summary = summarizeApiError(new ApiException(403, 'Unknown API Status Code!', body, { 'audit-id': 'secret-ish' }));
    expect(summary).toEqual({ statusCode: 403, reason: 'Forbidden', message: 'x is forbidden', details: { group: 'g.io', kind: 'things' } });
  });

  it('says HTTP and the code for a Status without a message, not the Status JSON', () => {
    expect(summarizeApiError(new ApiException(503, 'Unknown API Status Code!', JSON.stringify({ kind: 'Status', code: 503 }), {}))).toEqual({
      statusCode: 503,
      message: 'HTTP 503',
    });
  });

  it('keeps one line of at most 300 characters of a body that is not a Status', () => {
    expect(summarizeApiError(new ApiException(404, 'Unknown API Status Code!', '404 page not found\n', {}))).toEqual({
      statusCode: 404,
      message: '404 page not found',
    });
    const long = summarizeApiError(new ApiException(502, 'x', `<html>\n${'a'.repeat(1000)}`, {}));
    expect(long.message).toMatch(/^<html> a+…$/);
    expect(long.message.length).toBe(301);
  });

  it('says Unauthorized for a 401 without a body, and HTTP <code> for another', () => {
    expect(summarizeApiError(new ApiException(401, 'Unauthorized', undefined, {}))).toEqual({ statusCode: 401, message: 'Unauthorized' });
    expect(summarizeApiError(new ApiException(500, 'x', undefined, {}))).toEqual({ statusCode: 500, message: 'HTTP 500' });
  });

  it("reads a watch's statusCode, and a connection error's cause", () => {
    expect(summarizeApiError(Object.assign(new Error('Forbidden'), { statusCode: 403 }))).toEqual({ statusCode: 403, message: 'Forbidden' });
    const refused = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:6443') });
    expect(summarizeApiError(refused)).toEqual({ message: 'fetch failed (connect ECONNREFUSED 127.0.0.1:6443)' });
    expect(summarizeApiError('plain')).toEqual({ message: 'plain' });
  });
});
