/** libyaml's reads past the first document: the scanner's reach and the reader's 512-byte chunks. */
import { decodedCharacters, readPastFirstDocument } from '../../src/yaml-go/libyaml-lookahead.js';

describe('readPastFirstDocument', () => {
  it('reads the whole text when no marker ends the first document', () => {
    expect(readPastFirstDocument('a: 1\n', undefined)).toEqual({ v2: 5, v3: 5 });
  });
  it('stops yaml.v2 at the marker and the character after it, yaml.v3 two tokens further', () => {
    const text = 'a: 1\n---\nb: 1\nc: 2\n';
    const reach = readPastFirstDocument(text, 5);
    expect(reach.v2).toBe(9);
    expect(reach.v3).toBeGreaterThan(text.indexOf('b:'));
    expect(reach.v3).toBeLessThan(text.indexOf('c:') + 1);
    expect(reach.v3Problem).toBeUndefined();
  });
  it("names yaml.v3's token error with its line", () => {
    expect(readPastFirstDocument('a: 1\n---\n\t\n', 5).v3Problem).toBe('line 3: found character that cannot start any token');
  });
});

describe('decodedCharacters', () => {
  it('decodes whole 512-byte chunks', () => {
    const text = 'a'.repeat(2000);
    expect(decodedCharacters(text, 1, 0)).toBe(512);
    expect(decodedCharacters(text, 513, 0)).toBe(1024);
    expect(decodedCharacters(text, 2000, 0)).toBe(2000);
  });
  it("counts a byte order mark's 3 bytes into the first chunk", () => {
    const text = 'a'.repeat(2000);
    expect(decodedCharacters(text, 1, 3)).toBe(509);
    expect(decodedCharacters(text, 510, 3)).toBe(1021);
  });
  it('leaves a character cut by the chunk end for the next read', () => {
    const text = `${'a'.repeat(511)}é${'a'.repeat(600)}`;
    expect(decodedCharacters(text, 1, 0)).toBe(511);
  });
});
