import type { TRedis } from '@sps/queue';

/**
 * Reserves `ARGV[2]` bytes for upload `ARGV[1]` in the account's hash (field: upload id, value:
 * `<bytes>:<expires at ms>`) if, with the other unexpired reservations, they fit in the `ARGV[3]` bytes the
 * account has left. Expired fields are dropped on the way. Returns -1 when reserved, else the bytes the others
 * hold. One key per account, so it is atomic on a Redis Cluster too.
 */
const RESERVE = `
local now = tonumber(ARGV[4])
local held = 0
local fields = redis.call('hgetall', KEYS[1])
for i = 1, #fields, 2 do
  local bytes, expires = string.match(fields[i + 1], '^(%d+):(%d+)$')
  if expires == nil or tonumber(expires) <= now then
    redis.call('hdel', KEYS[1], fields[i])
  elseif fields[i] ~= ARGV[1] then
    held = held + tonumber(bytes)
  end
end
if held + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return held end
redis.call('hset', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[5])
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[6]) then redis.call('pexpire', KEYS[1], ARGV[6]) end
return -1`;

/** An account's key part: the upload ids start with it (the account id without dashes). */
export const ownerPrefix = (accountId: string) => accountId.replace(/-/g, '').toLowerCase();

/**
 * The quota bytes that unfinished tus uploads hold: each declares its Upload-Length at creation and keeps
 * that much of the account's quota until it finishes, is terminated or expires (the staging store's
 * expiration). Without it, two large uploads created together both pass the check at creation and the second
 * is refused only at its last byte.
 */
export function createTusReservations(redis: TRedis, prefix: string, expiresAfterMs: number) {
  const keyOf = (accountId: string) => `${prefix}:tus:reserved:${ownerPrefix(accountId)}`;
  return {
    /** Reserves `bytes` for the upload if they fit in `left`; otherwise the bytes other uploads hold. */
    async reserve(
      accountId: string,
      uploadId: string,
      bytes: number,
      left: number,
    ): Promise<{ reserved: true } | { reserved: false; heldBytes: number }> {
      const now = Date.now();
      const held = Number(
        await redis.eval(
          RESERVE,
          1,
          keyOf(accountId),
          uploadId,
          String(bytes),
          String(left),
          String(now),
          String(now + expiresAfterMs),
          String(expiresAfterMs),
        ),
      );
      return held < 0 ? { reserved: true } : { reserved: false, heldBytes: held };
    },

    /** The bytes the account's unfinished uploads hold, but `exceptUpload`'s (its own bytes being stored). */
    async heldBytes(accountId: string, exceptUpload?: string): Promise<number> {
      const fields = await redis.hgetall(keyOf(accountId));
      const now = Date.now();
      let held = 0;
      for (const [id, value] of Object.entries(fields)) {
        const [bytes, expires] = value.split(':').map(Number);
        if (id !== exceptUpload && bytes !== undefined && expires !== undefined && expires > now)
          held += bytes;
      }
      return held;
    },

    /** Frees an upload's bytes (its id starts with its account's key part). */
    async release(uploadId: string): Promise<void> {
      await redis.hdel(`${prefix}:tus:reserved:${uploadId.slice(0, 32)}`, uploadId);
    },
  };
}

export type TTusReservations = ReturnType<typeof createTusReservations>;
