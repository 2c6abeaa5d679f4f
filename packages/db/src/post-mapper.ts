import {
  FIRST_COMMENT_SEGMENT,
  type TFirstCommentRecord,
  type TMedia,
  type TPlatform,
  type TPoll,
  type TPostRecord,
  type TPostStatus,
  type TQueueState,
  type TSegment,
  type TTargetRecord,
  type TTargetStatus,
} from '@sps/core';
import { Prisma } from './generated/prisma/client.js';
import type { PostModel } from './generated/prisma/models/Post.js';

/** What a post target read gives, from Prisma or from plain SQL (enums as their text). */
export interface TTargetRow {
  platform: string;
  status: string;
  remotePostId: string | null;
  remoteUrl: string | null;
  error: string | null;
  errorKind: string | null;
  publishedAt: Date | null;
  createdAt: Date;
  /** The first comment's segment row on this target's network, where the read joins it. */
  firstComment?: TFirstCommentRecord | null;
}

/** A first comment's segment row (Prisma's include below). */
interface TCommentRow {
  platform: string;
  status: string;
  remoteId: string | null;
  remoteUrl: string | null;
  error: string | null;
}

/** A post row with its targets: a Prisma `PostModel` with `targets` fits, and so do the plain-SQL reads. */
export interface TPostRow
  extends Pick<
    PostModel,
    | 'id'
    | 'accountId'
    | 'content'
    | 'queuedAt'
    | 'scheduledFor'
    | 'media'
    | 'segments'
    | 'poll'
    | 'firstComment'
    | 'publishAttempt'
    | 'publishedAt'
    | 'createdAt'
    | 'updatedAt'
  > {
  platforms: string[];
  status: string;
  queueState: string | null;
  targets: TTargetRow[];
  /** First-comment segment rows (Prisma reads); plain-SQL reads put them on each target instead. */
  segmentDeliveries?: TCommentRow[];
}

export const POST_INCLUDE = {
  targets: { orderBy: { createdAt: 'asc' } },
  segmentDeliveries: {
    where: { segmentIndex: FIRST_COMMENT_SEGMENT },
    select: { platform: true, status: true, remoteId: true, remoteUrl: true, error: true },
  },
} as const satisfies Prisma.PostInclude;

export function toTargetRecord(row: TTargetRow): TTargetRecord {
  return {
    platform: row.platform as TPlatform,
    status: row.status as TTargetStatus,
    remotePostId: row.remotePostId,
    remoteUrl: row.remoteUrl,
    error: row.error,
    errorKind: row.errorKind,
    publishedAt: row.publishedAt,
    ...(row.firstComment ? { firstComment: row.firstComment } : {}),
  };
}

function commentRecord(row: TCommentRow): TFirstCommentRecord {
  return {
    status: row.status as TFirstCommentRecord['status'],
    remoteId: row.remoteId,
    remoteUrl: row.remoteUrl,
    error: row.error,
  };
}

export function toPostRecord(row: TPostRow): TPostRecord {
  return {
    id: row.id,
    accountId: row.accountId,
    content: row.content,
    platforms: row.platforms as TPlatform[],
    status: row.status as TPostStatus,
    queueState: row.queueState as TQueueState | null,
    queuedAt: row.queuedAt,
    scheduledFor: row.scheduledFor,
    media: (row.media ?? null) as TMedia | null,
    segments: (row.segments ?? null) as TSegment[] | null,
    poll: (row.poll ?? null) as TPoll | null,
    publishAttempt: row.publishAttempt,
    firstComment: row.firstComment ?? null,
    publishedAt: row.publishedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    targets: sortTargets(row.platforms, row.targets).map((t) => {
      const comment = row.segmentDeliveries?.find((c) => c.platform === t.platform);
      return toTargetRecord(comment ? { ...t, firstComment: commentRecord(comment) } : t);
    }),
  };
}

/**
 * In the order the post lists its networks (networks no longer listed last, oldest first): targets written
 * by one statement share a creation time, so that alone would leave their order to chance.
 */
function sortTargets(platforms: string[], targets: TTargetRow[]): TTargetRow[] {
  const rank = (t: TTargetRow) => {
    const i = platforms.indexOf(t.platform);
    return i === -1 ? platforms.length : i;
  };
  return [...targets].sort((a, b) => rank(a) - rank(b) || a.createdAt.getTime() - b.createdAt.getTime());
}

/** Nullable JSON columns need SQL NULL spelled out; `undefined` leaves the column as it is. */
export function jsonColumn(value: unknown): Prisma.InputJsonValue | typeof Prisma.DbNull | undefined {
  if (value === undefined) return undefined;
  if (value === null) return Prisma.DbNull;
  return value as Prisma.InputJsonValue;
}
