import { hasWildcard } from '../../src/spiderpool/candidate-wildcard.js';

describe("hasWildcard: Spiderpool's HasWildcardInStr", () => {
  test.each([
    ['plain', false],
    ['a*', true],
    ['a?', true],
    ['a[0-9]', true],
    ['a[b', false],
    ['a]b', false],
    ['a]b[', true],
    ['a\\b', false],
  ])('%j → %j', (name, expected) => {
    expect(hasWildcard(name)).toBe(expected);
  });
});
