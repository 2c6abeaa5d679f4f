import type { TPlatform, TPostRecord, TTargetStatus } from '@sps/core';
import type { SegmentDeliveryModel } from './generated/prisma/models/SegmentDelivery.js';
import { postFromSql, type TPostSqlRow } from './post-sql.js';

// The shapes the publisher's batched reads and writes take and answer (publish-batches.ts), and the helpers
// that match a statement's rows back to each caller of a batch.

export interface TSegmentRef {
  segmentIndex: number;
  status: SegmentDeliveryModel['status'];
  remoteId: string | null;
  remoteUrl: string | null;
  meta: Record<string, string> | null;
  attempts: number;
  /** When the segment's write-ahead row was first recorded (the earliest it can have reached the network). */
  createdAt: Date;
  /** When it was last handed to the network (the latest send, from which READBACK_SETTLE counts). */
  lastSentAt: Date;
  /**
   * Until when the run that wrote the write-ahead holds it (renewed while its connector call runs); null:
   * never leased. A `sending` row whose lease has not lapsed is another run's send in progress.
   */
  claimedUntil: Date | null;
}

export interface TTargetUpdate {
  status: TTargetStatus;
  remotePostId?: string | null;
  remoteUrl?: string | null;
  error?: string | null;
  errorKind?: string | null;
}

/** A network that succeeded: its last segment's answer (if this call has it) and its result. */
export interface TNetworkSuccess {
  /** The last segment's sent mark; absent when it was recorded earlier (a retry found it sent). */
  sent?: { segmentIndex: number; remoteId: string; remoteUrl: string; meta?: Record<string, string> };
  remotePostId: string | null;
  remoteUrl: string | null;
  errorKind: string | null;
  /** The attempt to end in the same transaction when this was its last pending network; null: do not. */
  finalizeAttempt: number | null;
}

/** A connected account as the publisher reads it (credentials still sealed). */
export interface TPublishAccount {
  id: string;
  accountId: string;
  platform: string;
  accountName: string;
  externalId: string | null;
  instanceUrl: string | null;
  credentialsEncrypted: string;
  isActive: boolean;
  /** ISO time the access token expires, where known (the publisher refreshes ahead of it). */
  tokenExpiresAt: string | null;
  /** The scopes the network granted (space-separated); null: unknown. */
  grantedScopes: string | null;
}

export interface TLoadedPost {
  post: TPostRecord;
  deletedAt: Date | null;
  /** The social account each network publishes with. */
  targetAccounts: Partial<Record<TPlatform, string | null>>;
  accounts: TPublishAccount[];
  segments: (TSegmentRef & { platform: TPlatform })[];
}

export type TLoadRow = TPostSqlRow & {
  segment_rows: (Omit<TSegmentRef, 'meta' | 'createdAt' | 'lastSentAt' | 'claimedUntil'> & {
    platform: string;
    meta: Record<string, string> | null;
    createdAt: string;
    lastSentAt: string;
    claimedUntil: string | null;
  })[];
  account_rows: TPublishAccount[];
};

export interface TSegmentKey {
  postId: string;
  platform: TPlatform;
  segmentIndex: number;
}

export const segmentKey = (k: TSegmentKey) => `${k.postId}/${k.platform}/${k.segmentIndex}`;

/** The segments a statement touched (its RETURNING rows), keyed like the batch. */
export function segmentAnswers(rows: { post_id: string; platform: string; segment_index: number }[]) {
  return new Map(
    rows.map((r) => [
      segmentKey({ postId: r.post_id, platform: r.platform as TPlatform, segmentIndex: r.segment_index }),
      true as const,
    ]),
  );
}

export function notUpdated(what: string): Error {
  return new Error(`Expected to update one ${what} row, updated none`);
}

/** Answers each item from a map keyed like the batch's rounds; an item the statement did not touch fails. */
export function answer<K, V>(
  items: readonly K[],
  key: (k: K) => string,
  answers: Map<string, V>,
  missing: () => Error,
) {
  return items.map((k) => answers.get(key(k)) ?? missing());
}

export function toLoaded(row: TLoadRow): TLoadedPost {
  return {
    post: postFromSql(row),
    deletedAt: row.deletedAt,
    targetAccounts: Object.fromEntries(row.targets.map((t) => [t.platform, t.socialAccountId])) as Partial<
      Record<TPlatform, string | null>
    >,
    accounts: row.account_rows,
    segments: row.segment_rows.map((s) => ({
      platform: s.platform as TPlatform,
      segmentIndex: s.segmentIndex,
      status: s.status,
      remoteId: s.remoteId,
      remoteUrl: s.remoteUrl,
      meta: s.meta,
      attempts: s.attempts,
      createdAt: new Date(s.createdAt),
      lastSentAt: new Date(s.lastSentAt),
      claimedUntil: s.claimedUntil === null ? null : new Date(s.claimedUntil),
    })),
  };
}
