import { describe, expect, it } from '@jest/globals';
import {
  AppError,
  canonicalJson,
  isRememberedStatus,
  parseIdempotencyKey,
  requestFingerprint,
} from '../src/index.js';

describe('parseIdempotencyKey', () => {
  it('is null without the header', () => {
    expect(parseIdempotencyKey(undefined)).toBeNull();
    expect(parseIdempotencyKey([])).toBeNull();
  });

  it('takes 1 to 255 printable ASCII characters, spaces included', () => {
    expect(parseIdempotencyKey(['a'])).toBe('a');
    expect(parseIdempotencyKey(['a b~!'])).toBe('a b~!');
    expect(parseIdempotencyKey(['x'.repeat(255)])).toHaveLength(255);
  });

  it.each([
    ['empty', [''], 'must not be empty'],
    ['256 characters', ['x'.repeat(256)], 'at most 255'],
    ['a control character', ['a\tb'], 'printable ASCII'],
    ['non-ASCII', ['clé'], 'printable ASCII'],
    ['sent twice', ['a', 'b'], 'once'],
  ])('refuses a key that is %s, naming the header', (_what, values, message) => {
    let error: unknown;
    try {
      parseIdempotencyKey(values);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('validation_error');
    expect((error as AppError).issues[0]?.field).toBe('Idempotency-Key');
    expect((error as AppError).issues[0]?.message).toContain(message);
  });
});

describe('canonicalJson and requestFingerprint', () => {
  it('ignores key order at every level but not array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    const one = requestFingerprint('create_post.B', {}, { content: 'x', platforms: ['a', 'b'] });
    expect(requestFingerprint('create_post.B', {}, { platforms: ['a', 'b'], content: 'x' })).toBe(one);
    expect(requestFingerprint('create_post.B', {}, { platforms: ['b', 'a'], content: 'x' })).not.toBe(one);
    expect(requestFingerprint('create_post.A', {}, { content: 'x', platforms: ['a', 'b'] })).not.toBe(one);
    expect(requestFingerprint('publish_post.B', { id: '1' }, {})).not.toBe(
      requestFingerprint('publish_post.B', { id: '2' }, {}),
    );
  });
});

it('refuses a body nested too deeply with a 400 naming body, instead of overflowing the stack', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i += 1) deep = [deep];
  expect(() => requestFingerprint('create_post.B', {}, deep)).toThrow(
    expect.objectContaining({
      code: 'validation_error',
      issues: [expect.objectContaining({ field: 'body' })],
    }),
  );
});

describe('isRememberedStatus', () => {
  it('remembers successes and refusals of requests that ran, not malformed or try-later answers', () => {
    for (const s of [200, 201, 202, 403, 404, 413, 415, 422]) expect(isRememberedStatus(s)).toBe(true);
    for (const s of [400, 401, 408, 409, 425, 429, 500, 502, 503]) expect(isRememberedStatus(s)).toBe(false);
  });
});
