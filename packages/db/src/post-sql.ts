import { FIRST_COMMENT_SEGMENT, type TPostRecord } from '@sps/core';
import { type TPostRow, type TTargetRow, toPostRecord } from './post-mapper.js';

/**
 * A post's columns for plain-SQL reads of `posts p`. Enum arrays are cast to text[]: pg has no parser for
 * an array of a custom enum type and would hand back the literal `{a,b}`.
 */
export const POST_COLUMNS = `p.id, p.account_id AS "accountId", p.content, p.platforms::text[] AS platforms,
  p.status::text AS status, p.queue_state::text AS "queueState", p.queued_at AS "queuedAt",
  p.scheduled_for AS "scheduledFor", p.media, p.segments, p.poll, p.first_comment AS "firstComment", p.publish_attempt AS "publishAttempt",
  p.published_at AS "publishedAt", p.deleted_at AS "deletedAt", p.created_at AS "createdAt",
  p.updated_at AS "updatedAt"`;

/**
 * One post target as JSON, from rows named `t` (the table or a CTE's RETURNING) of post `p`. The first
 * comment's row is looked up only for a post that has one (a comment is sent only while the post has it):
 * on tables without statistics yet (a fresh database's first minute) a cached plan read that lookup through
 * the platform index, every row of the network for every target (docs/performance.md, round nine).
 */
const TARGET_JSON = `json_build_object('platform', t.platform, 'status', t.status, 'remotePostId', t.remote_post_id,
  'remoteUrl', t.remote_url, 'error', t.error, 'errorKind', t.error_kind, 'publishedAt', t.published_at,
  'socialAccountId', t.social_account_id, 'createdAt', t.created_at,
  'firstComment', CASE WHEN p.first_comment IS NOT NULL THEN (SELECT json_build_object('status', c.status,
    'remoteId', c.remote_id, 'remoteUrl', c.remote_url, 'error', c.error) FROM segment_deliveries c
    WHERE c.post_id = t.post_id AND c.platform = t.platform AND c.segment_index = ${FIRST_COMMENT_SEGMENT}) END)`;

/**
 * Targets in the order the post lists its networks (then creation order for networks no longer listed),
 * as `toPostRecord` sorts them: targets written by one statement share a creation time.
 */
const TARGET_ORDER = 'array_position(p.platforms, t.platform), t.created_at, t.id';

/** The targets of `p` as a JSON array. */
export const POST_TARGETS = `COALESCE((SELECT json_agg(${TARGET_JSON} ORDER BY ${TARGET_ORDER})
  FROM post_targets t WHERE t.post_id = p.id), '[]'::json) AS targets`;

/** The same array for post `p` built from a CTE's RETURNING rows (`FROM <cte> t`). */
export function targetsFrom(cte: string): string {
  return `COALESCE((SELECT json_agg(${TARGET_JSON} ORDER BY ${TARGET_ORDER}) FROM ${cte} t WHERE t.post_id = p.id), '[]'::json)`;
}

/** A target as JSON: timestamps are ISO text (JSON has no timestamp type). */
export interface TTargetJson extends Omit<TTargetRow, 'publishedAt' | 'createdAt'> {
  publishedAt: string | null;
  createdAt: string;
  socialAccountId: string | null;
}

/** A post read with POST_COLUMNS and its targets as JSON. */
export interface TPostSqlRow extends Omit<TPostRow, 'targets'> {
  deletedAt: Date | null;
  targets: TTargetJson[];
}

/** The same record `toPostRecord` makes from a Prisma row. */
export function postFromSql(row: TPostSqlRow): TPostRecord {
  return toPostRecord({
    ...row,
    platforms: row.platforms ?? [],
    targets: row.targets.map((t) => ({
      ...t,
      publishedAt: t.publishedAt === null ? null : new Date(t.publishedAt),
      createdAt: new Date(t.createdAt),
    })),
  });
}
