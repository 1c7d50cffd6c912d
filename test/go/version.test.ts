import { goAtLeast, SPIDERPOOL_GO, SPIDERPOOL_GO_NAME } from '../../src/go/version.js';

describe('the Go release the webhook follows', () => {
  it('is Go 1.25, the release Spiderpool builds its images with', () => {
    expect(SPIDERPOOL_GO_NAME).toBe('go1.25');
  });

  it('compares releases', () => {
    expect(goAtLeast(SPIDERPOOL_GO.minor)).toBe(true);
    expect(goAtLeast(SPIDERPOOL_GO.minor - 1)).toBe(true);
    expect(goAtLeast(SPIDERPOOL_GO.minor + 1)).toBe(false);
  });
});
