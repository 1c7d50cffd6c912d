import { MAX_BODY_BYTES } from '../../src/defaults.js';
import { BodyBytes } from '../../src/server/review-body.js';

describe('BodyBytes', () => {
  it('keeps a body that arrives in one chunk as that chunk (no copy)', () => {
    const chunk = Buffer.from('{"a":1}');
    const body = new BodyBytes(chunk.length);
    expect(body.add(chunk)).toBe(true);
    expect(body.receivedBytes).toBe(chunk.length);
    expect(body.bytes()).toBe(chunk);
  });

  it('copies a body of several chunks into one buffer of its declared length', () => {
    const body = new BodyBytes(7);
    for (const part of ['{"a"', ':1}']) expect(body.add(Buffer.from(part))).toBe(true);
    expect([body.receivedBytes, body.bytes()?.toString()]).toEqual([7, '{"a":1}']);
  });

  it('has no body when fewer bytes than declared arrived', () => {
    const body = new BodyBytes(8);
    body.add(Buffer.from('{"a":1}'));
    expect(body.bytes()).toBeUndefined();
    expect(new BodyBytes(8).bytes()).toBeUndefined();
  });

  it('joins the chunks of a chunked body, and says when it grew past MAX_BODY_BYTES', () => {
    const body = new BodyBytes(-1);
    expect(body.add(Buffer.from('{"a"'))).toBe(true);
    expect(body.add(Buffer.from(':1}'))).toBe(true);
    expect(body.bytes()?.toString()).toBe('{"a":1}');
    expect(body.add(Buffer.alloc(MAX_BODY_BYTES - 7))).toBe(true);
    expect(body.add(Buffer.alloc(1))).toBe(false);
    expect(body.receivedBytes).toBe(MAX_BODY_BYTES + 1);
  });
});
