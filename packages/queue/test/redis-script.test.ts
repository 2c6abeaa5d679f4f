import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { redisScript } from '../src/index.js';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const key = `sps-script-${randomBytes(4).toString('hex')}`;
const INCR_BY = `return redis.call('INCRBY', KEYS[1], ARGV[1])`;

afterAll(async () => {
  await redis.del(key);
  await redis.quit();
});

describe('redisScript', () => {
  it('runs by its hash, and loads itself again after the server forgot it', async () => {
    const incrBy = redisScript(redis, INCR_BY);
    expect(await incrBy(key, 2)).toBe(2);
    // A restarted or flushed server answers NOSCRIPT to the EVALSHA: the call must still run, once.
    await redis.script('FLUSH');
    expect(await incrBy(key, 3)).toBe(5);
    expect(await redis.get(key)).toBe('5');
  });

  it('defines a script once per connection, whoever asks, and keeps different scripts apart', async () => {
    const first = redisScript(redis, INCR_BY);
    const again = redisScript(redis, INCR_BY);
    const read = redisScript(redis, `return redis.call('GET', KEYS[1])`);
    await redis.set(key, '10');
    expect(await first(key, 1)).toBe(11);
    expect(await again(key, 1)).toBe(12);
    expect(await read(key)).toBe('12');
  });
});
