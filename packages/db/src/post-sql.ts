import type {
  TMedia,
  TPlatform,
  TPoll,
  TPostRecord,
  TPostStatus,
  TQueueState,
  TSegment,
  TTargetRecord,
  TTargetStatus,
} from '@sps/core';

/** Plain SQL compares ids as uuid: anything else would be a query error instead of "no such row". */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A post's columns for plain-SQL reads of `posts p`. Enum arrays are cast to text[]: pg has no parser for
 * an array of a custom enum type and would hand back the literal `{a,b}`.
 */
export const POST_COLUMNS = `p.id, p.account_id, p.content, p.platforms::text[] AS platforms, p.status::text AS status,
  p.queue_state::text AS queue_state, p.queued_at, p.scheduled_for, p.media, p.segments, p.poll,
  p.publish_attempt, p.published_at, p.deleted_at, p.created_at, p.updated_at`;

/** One post target as JSON, from rows named `t` (the table or a CTE's RETURNING). */
const TARGET_JSON = `json_build_object('platform', t.platform, 'status', t.status, 'remotePostId', t.remote_post_id,
  'remoteUrl', t.remote_url, 'error', t.error, 'errorKind', t.error_kind, 'publishedAt', t.published_at,
  'socialAccountId', t.social_account_id)`;

/**
 * Targets in the order the post lists its networks (then creation order for networks no longer listed),
 * as `toPostRecord` sorts them: targets written by one statement share a creation time.
 */
const TARGET_ORDER = 'array_position(p.platforms, t.platform), t.created_at, t.id';

/** The targets of `p` as a JSON array. */
export const POST_TARGETS = `COALESCE((SELECT json_agg(${TARGET_JSON} ORDER BY ${TARGET_ORDER})
  FROM post_targets t WHERE t.post_id = p.id), '[]'::json) AS targets`;

/** The same array built from a CTE's RETURNING rows (`FROM <cte> t`). */
export function targetsFrom(cte: string): string {
  return `COALESCE((SELECT json_agg(${TARGET_JSON} ORDER BY ${TARGET_ORDER}) FROM ${cte} t), '[]'::json)`;
}

export interface TTargetJson {
  platform: string;
  status: string;
  remotePostId: string | null;
  remoteUrl: string | null;
  error: string | null;
  errorKind: string | null;
  /** ISO text: JSON has no timestamp type. */
  publishedAt: string | null;
  socialAccountId: string | null;
}

export interface TPostSqlRow {
  id: string;
  account_id: string;
  content: string;
  platforms: string[] | null;
  status: string;
  queue_state: string | null;
  queued_at: Date | null;
  scheduled_for: Date | null;
  media: unknown;
  segments: unknown;
  poll: unknown;
  publish_attempt: number;
  published_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
  targets: TTargetJson[];
}

export function targetFromJson(t: TTargetJson): TTargetRecord {
  return {
    platform: t.platform as TPlatform,
    status: t.status as TTargetStatus,
    remotePostId: t.remotePostId,
    remoteUrl: t.remoteUrl,
    error: t.error,
    errorKind: t.errorKind,
    publishedAt: t.publishedAt === null ? null : new Date(t.publishedAt),
  };
}

/** The same record `toPostRecord` makes from a Prisma row. */
export function postFromSql(row: TPostSqlRow): TPostRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    content: row.content,
    platforms: (row.platforms ?? []) as TPlatform[],
    status: row.status as TPostStatus,
    queueState: row.queue_state as TQueueState | null,
    queuedAt: row.queued_at,
    scheduledFor: row.scheduled_for,
    media: (row.media ?? null) as TMedia | null,
    segments: (row.segments ?? null) as TSegment[] | null,
    poll: (row.poll ?? null) as TPoll | null,
    publishAttempt: row.publish_attempt,
    publishedAt: row.published_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    targets: row.targets.map(targetFromJson),
  };
}
