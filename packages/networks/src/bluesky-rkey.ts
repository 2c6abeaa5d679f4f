import { createHash } from 'node:crypto';
import { TID } from '@atproto/common-web';

/**
 * The record key of one (post, network, segment) on Bluesky, the same on every attempt, so a resend after
 * a lost answer or a crash lands on the record that may already exist instead of creating a second one.
 *
 * `app.bsky.feed.post` records are keyed by TIDs: a 64-bit integer, top bit 0, 53 bits of microseconds
 * since the UNIX epoch, 10 bits of clock identifier, in base32-sortable (https://atproto.com/specs/tid,
 * https://atproto.com/specs/record-key#record-key-type-tid). The timestamp is the post's creation time (it
 * never changes), with the microseconds within its millisecond and the clock identifier taken from a hash
 * of the idempotency key (`${postId}-${platform}-${segmentIndex}`): two segments, or two posts created in
 * the same millisecond, get different keys except with a chance of about one in a million.
 *
 * Exported for reading back whether a post landed (`com.atproto.repo.getRecord` with this key).
 */
export function blueskyRecordKey(idempotencyKey: string, createdAt: Date): string {
  const hash = createHash('sha256').update(idempotencyKey).digest();
  const micros = createdAt.getTime() * 1000 + (hash.readUInt16BE(0) % 1000);
  const clockId = hash.readUInt16BE(2) & 0x3ff;
  return TID.fromTime(micros, clockId).toString();
}
