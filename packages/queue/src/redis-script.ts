import { createHash } from 'node:crypto';
import type { TRedis } from './connection.js';

type TScriptArg = string | number;

/**
 * A Lua script called by its SHA1 (EVALSHA), through ioredis's `defineCommand`, which loads the script
 * again when a server answers NOSCRIPT (a restart, a flush, a cluster node that has not seen it). EVAL
 * would send and hash the whole text on every call, on the publisher's path twice a post (the lane
 * scripts). The command is named after the
 * script's hash, so two scripts never share a name and defining one twice on a connection is a no-op.
 */
export function redisScript(redis: TRedis, lua: string, numberOfKeys = 1) {
  const name = `sps_${createHash('sha1').update(lua).digest('hex').slice(0, 16)}`;
  const client = redis as unknown as Record<string, unknown>;
  if (typeof client[name] !== 'function') redis.defineCommand(name, { lua, numberOfKeys });
  const run = client[name] as (...args: TScriptArg[]) => Promise<unknown>;
  return (...keysThenArgs: TScriptArg[]): Promise<unknown> => run.apply(redis, keysThenArgs);
}
