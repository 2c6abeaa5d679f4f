import { sqlOf, type TDb } from './client.js';

/** One outbox row as the dashboard's live feed needs it: what changed, never the post's content. */
export interface TFeedEvent {
  id: string;
  accountId: string;
  type: string;
  createdAt: Date;
  /** `data.post.id` of post events. */
  postId: string | null;
  /** `data.post.status` of post events. */
  postStatus: string | null;
  /** `data.account.id` of account events (the social account). */
  socialAccountId: string | null;
}

interface TFeedRow {
  id: string;
  account_id: string;
  type: string;
  created_at: Date;
  post_id: string | null;
  post_status: string | null;
  social_account_id: string | null;
}

/**
 * Reads the outbox (`events`, the table the webhook dispatcher reads) for the dashboard's live feed. Only
 * the columns the feed sends are read: ids, type and status, not the stored post.
 */
export function createEventFeedRepository(db: TDb) {
  return {
    /** The database's clock: the feed's first cursor, so no application clock is compared with created_at. */
    async now(): Promise<Date> {
      const { rows } = await sqlOf(db).query<{ now: Date }>({
        name: 'event_feed_now',
        text: 'SELECT now() AS now',
      });
      return rows[0]!.now;
    },

    /**
     * Events of these accounts after `after` in (created_at, id) order, oldest first, at most `limit` (index
     * accountId, createdAt). The id breaks ties: one statement writes many events with the same created_at.
     */
    async since(
      accountIds: readonly string[],
      after: { createdAt: Date; id: string },
      limit: number,
    ): Promise<TFeedEvent[]> {
      if (accountIds.length === 0) return [];
      const { rows } = await sqlOf(db).query<TFeedRow>({
        name: 'event_feed_since',
        text: `SELECT id, account_id, type, created_at,
                      data->'post'->>'id' AS post_id, data->'post'->>'status' AS post_status,
                      data->'account'->>'id' AS social_account_id
               FROM events
               WHERE account_id = ANY ($1::uuid[]) AND (created_at, id) > ($2, $3::uuid)
               ORDER BY created_at, id
               LIMIT $4`,
        values: [accountIds, after.createdAt, after.id, limit],
      });
      return rows.map((r) => ({
        id: r.id,
        accountId: r.account_id,
        type: r.type,
        createdAt: r.created_at,
        postId: r.post_id,
        postStatus: r.post_status,
        socialAccountId: r.social_account_id,
      }));
    },
  };
}

/** Sorts before every uuid: a cursor at a time with no id yet. */
export const FEED_START_ID = '00000000-0000-0000-0000-000000000000';

export type TEventFeedRepository = ReturnType<typeof createEventFeedRepository>;
