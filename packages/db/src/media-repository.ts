import { type TMediaItemType, type TMediaRecord, UUID_PATTERN } from '@sps/core';
import type { TDb } from './client.js';
import type { MediaModel } from './generated/prisma/models/Media.js';

// The media library's rows. Every lookup an API caller can reach is scoped by account; only the public
// serving path (`findServable`) and the sweep read items by id alone.

function toRecord(row: MediaModel): TMediaRecord {
  return {
    id: row.id,
    accountId: row.accountId ?? '',
    storageKey: row.storageKey,
    type: row.type as TMediaItemType,
    mimeType: row.mimeType,
    sizeBytes: Number(row.sizeBytes),
    width: row.width,
    height: row.height,
    durationS: row.durationS,
    altText: row.altText,
    etag: row.etag,
    createdAt: row.createdAt,
  };
}

export type TNewMedia = Omit<TMediaRecord, 'createdAt'>;

/** Posts that still need an item: not deleted, and not yet out (a failed post can be retried). */
const PENDING_STATUSES = ['draft', 'scheduled', 'publishing'];

export function createMediaRepository(db: TDb) {
  /** Ids of the account's posts whose media or segments name the item's URL path, `statuses` only. */
  const postsUsing = async (accountId: string, id: string, statuses: string[] | null, limit = 20) => {
    const needle = `/media/${id}`;
    const rows = await db.$queryRaw<{ id: string }[]>`
      SELECT id::text FROM posts
      WHERE account_id = ${accountId}::uuid AND deleted_at IS NULL
        AND (${statuses === null} OR status::text = ANY(${statuses ?? []}::text[]))
        AND (strpos(coalesce(media::text, ''), ${needle}) > 0 OR strpos(coalesce(segments::text, ''), ${needle}) > 0)
      ORDER BY created_at DESC
      LIMIT ${limit}`;
    return rows.map((row) => row.id);
  };

  return {
    /** Bytes the account's items take together. */
    async usedBytes(accountId: string): Promise<number> {
      const rows = await db.$queryRaw<{ used: bigint | null }[]>`
        SELECT sum(size_bytes)::bigint AS used FROM media WHERE account_id = ${accountId}::uuid`;
      return Number(rows[0]?.used ?? 0);
    },

    /**
     * Records an item unless the account's items would pass `quotaBytes` with it. The account row is
     * locked for the sum, so two uploads finishing together cannot both slip under the quota.
     */
    async insertWithinQuota(
      item: TNewMedia,
      quotaBytes: number,
    ): Promise<{ item: TMediaRecord } | { usedBytes: number }> {
      return db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${item.accountId}::uuid FOR UPDATE`;
        const rows = await tx.$queryRaw<{ used: bigint | null }[]>`
          SELECT sum(size_bytes)::bigint AS used FROM media WHERE account_id = ${item.accountId}::uuid`;
        const used = Number(rows[0]?.used ?? 0);
        if (used + item.sizeBytes > quotaBytes) return { usedBytes: used };
        const row = await tx.media.create({
          data: { ...item, sizeBytes: BigInt(item.sizeBytes) },
        });
        return { item: toRecord(row) };
      });
    },

    async list(accountId: string, page: { limit: number; offset: number }) {
      const [rows, total] = await Promise.all([
        db.media.findMany({
          where: { accountId },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: page.limit,
          skip: page.offset,
        }),
        db.media.count({ where: { accountId } }),
      ]);
      return { items: rows.map(toRecord), total };
    },

    async get(accountId: string, id: string): Promise<TMediaRecord | null> {
      if (!UUID_PATTERN.test(id)) return null;
      const row = await db.media.findFirst({ where: { id, accountId } });
      return row ? toRecord(row) : null;
    },

    /** An item anyone holding its URL may read: it exists and its account does. */
    async findServable(id: string): Promise<TMediaRecord | null> {
      if (!UUID_PATTERN.test(id)) return null;
      const row = await db.media.findFirst({ where: { id, accountId: { not: null } } });
      return row ? toRecord(row) : null;
    },

    /**
     * How many of the account's (not deleted) posts use each item, and how many of those are still pending
     * (draft, scheduled, publishing: they block deletion), by the same URL match as `pendingPostsUsing`.
     */
    async usageCounts(
      accountId: string,
      ids: readonly string[],
    ): Promise<Map<string, { posts: number; pending: number }>> {
      const out = new Map<string, { posts: number; pending: number }>();
      const valid = ids.filter((id) => UUID_PATTERN.test(id));
      if (valid.length === 0) return out;
      // One pass over the account's posts pulling every media id out of their JSON (not one text search per
      // item: a page of 50 items over 10,000 posts took 1.1 s that way, see bench/media-usage.bench.mjs).
      const rows = await db.$queryRaw<{ id: string; posts: bigint; pending: bigint }[]>`
        SELECT u.id, count(DISTINCT p.id) AS posts,
               count(DISTINCT p.id) FILTER (WHERE p.status::text = ANY(${PENDING_STATUSES}::text[])) AS pending
        FROM posts p
        CROSS JOIN LATERAL (
          SELECT DISTINCT m[1] AS id
          FROM regexp_matches(coalesce(p.media::text, '') || ' ' || coalesce(p.segments::text, ''),
                              '/media/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})', 'g') AS m
        ) u
        WHERE p.account_id = ${accountId}::uuid AND p.deleted_at IS NULL AND u.id = ANY(${valid}::text[])
        GROUP BY u.id`;
      for (const row of rows) out.set(row.id, { posts: Number(row.posts), pending: Number(row.pending) });
      return out;
    },

    /** Posts in draft, scheduled (or queued) or publishing that use the item. */
    pendingPostsUsing: (accountId: string, id: string) => postsUsing(accountId, id, PENDING_STATUSES),

    async remove(accountId: string, id: string): Promise<boolean> {
      const { count } = await db.media.deleteMany({ where: { id, accountId } });
      return count > 0;
    },

    /**
     * Items to remove now: those of deleted accounts, and those no post uses whose upload and last seen use
     * are both older than `cutoff`. Items a post still names get `last_used_at` refreshed instead, so
     * retention counts from their last use. At most `limit` per call.
     */
    async sweepCandidates(cutoff: Date, limit: number): Promise<{ id: string; storageKey: string }[]> {
      await db.$executeRaw`
        UPDATE media m SET last_used_at = now()
        WHERE m.account_id IS NOT NULL AND m.created_at < ${cutoff}
          AND (m.last_used_at IS NULL OR m.last_used_at < ${cutoff})
          AND EXISTS (
            SELECT 1 FROM posts p
            WHERE p.account_id = m.account_id AND p.deleted_at IS NULL
              AND (strpos(coalesce(p.media::text, ''), '/media/' || m.id::text) > 0
                OR strpos(coalesce(p.segments::text, ''), '/media/' || m.id::text) > 0))`;
      return db.$queryRaw<{ id: string; storageKey: string }[]>`
        SELECT id::text, storage_key AS "storageKey" FROM media
        WHERE account_id IS NULL
           OR (created_at < ${cutoff} AND (last_used_at IS NULL OR last_used_at < ${cutoff}))
        ORDER BY created_at
        LIMIT ${limit}`;
    },

    /** Removes a swept row (its bytes are already gone from the store). */
    async forget(id: string): Promise<void> {
      await db.media.deleteMany({ where: { id } });
    },
  };
}

export type TMediaRepository = ReturnType<typeof createMediaRepository>;
