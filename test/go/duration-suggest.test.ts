import { suggestGoDuration } from '../../src/go/duration-suggest.js';

describe('suggestGoDuration', () => {
  it.each([
    ['50', '50s'],
    ['10', '10s'],
    ['1.5', '1.5s'],
    ['1min', '1m'],
    ['50sec', '50s'],
    ['50secs', '50s'],
    ['2hours', '2h'],
    ['100msec', '100ms'],
    ['1d', '24h'],
    ['5 s', '5s'],
    [' 50s ', '50s'],
    ['1min30sec', '1m30s'],
  ])('%j → %j', (text, suggestion) => {
    expect(suggestGoDuration(text)).toBe(suggestion);
  });

  it.each(['50s', 'abc', '', '1m30s', '5x', 's50', '-'])('has nothing to suggest for %j', (text) => {
    expect(suggestGoDuration(text)).toBeUndefined();
  });
});
