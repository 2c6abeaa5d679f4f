import type { TPlatform, TPostRecord } from '@sps/core';
import { batchLoader } from './batch.js';
import { inShortTransaction, sqlOf, type TDb } from './client.js';
import { POST_COLUMNS, POST_TARGETS, postFromSql, type TPostSqlRow } from './post-sql.js';
import {
  answer,
  notUpdated,
  segmentAnswers,
  segmentKey,
  type TLoadedPost,
  type TLoadRow,
  type TNetworkSuccess,
  type TSegmentKey,
  type TTargetUpdate,
  toLoaded,
} from './publish-batch-rows.js';
import { FINALIZE_SQL, handOut, NETWORK_DONE_SQL, outcomeEvents } from './publish-end-sql.js';

// The publisher's per-post reads and writes, batched across the jobs it runs at once (see batchLoader).
// Each keeps the meaning of the single-row version: a write that must hit one row fails when it does not.
// Ids are lower-cased on the way in: answers are matched to callers by the database's text form.

interface TFinalizeKey {
  postId: string;
  attempt: number;
}

export function createPublishBatches(db: TDb) {
  const loads = batchLoader<string, TLoadedPost | null>(async (ids) => {
    const { rows } = await sqlOf(db).query<TLoadRow>({
      name: 'publish_load_many',
      text: `SELECT ${POST_COLUMNS}, ${POST_TARGETS},
           COALESCE((SELECT json_agg(json_build_object('platform', s.platform, 'segmentIndex', s.segment_index,
               'status', s.status, 'remoteId', s.remote_id, 'remoteUrl', s.remote_url, 'meta', s.remote_meta,
               'attempts', s.attempts, 'createdAt', s.created_at, 'lastSentAt', s.last_sent_at,
               'claimedUntil', s.claimed_until))
             FROM segment_deliveries s WHERE s.post_id = p.id), '[]'::json) AS segment_rows,
           COALESCE((SELECT json_agg(json_build_object('id', a.id, 'accountId', a.account_id, 'platform', a.platform,
               'accountName', a.account_name, 'externalId', a.external_id, 'instanceUrl', a.instance_url,
               'credentialsEncrypted', a.credentials_encrypted, 'isActive', a.is_active,
               'tokenExpiresAt', a.token_expires_at, 'grantedScopes', a.granted_scopes))
             FROM social_accounts a
             WHERE a.id IN (SELECT t.social_account_id FROM post_targets t WHERE t.post_id = p.id)), '[]'::json)
             AS account_rows
         FROM posts p WHERE p.id = ANY ($1::uuid[])`,
      values: [ids],
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = byId.get(id);
      return row ? toLoaded(row) : null;
    });
  });

  // A claim, not just a record: the row is written only over the state its caller read (no row, or the
  // attempts count it saw, never a sent one). Two runs of one job (a stalled job taken again while its first
  // run still sends) read the same state; the second write finds the first's and claims nothing, so only
  // one of them sends. The count seen rides in the proposed row (`attempts` = seen + 1). The claim carries
  // its lease (`claimed_until`) in the same statement: a fast send costs nothing more.
  const sending = batchLoader<
    TSegmentKey & { idempotencyKey: string; seenAttempts: number; claimedUntil: Date },
    boolean
  >(async (items) => {
    // Only for posts that still exist: a post deleted while publishing claims nothing.
    const { rows } = await sqlOf(db).query<{ post_id: string; platform: string; segment_index: number }>({
      name: 'segment_claim_many',
      text: `INSERT INTO segment_deliveries
                   (id, post_id, platform, segment_index, idempotency_key, status, attempts, updated_at, last_sent_at,
                    claimed_until)
                 SELECT gen_random_uuid(), u.post_id, u.platform::"Platform", u.segment_index, u.idempotency_key,
                        'sending', u.seen + 1, $5, $5, u.claimed_until
                 FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $6::int[], $7::timestamptz[])
                      AS u(post_id, platform, segment_index, idempotency_key, seen, claimed_until)
                 WHERE EXISTS (SELECT 1 FROM posts p WHERE p.id = u.post_id)
                 ON CONFLICT (post_id, platform, segment_index) DO UPDATE SET
                   status = 'sending', attempts = segment_deliveries.attempts + 1, error = NULL, updated_at = $5,
                   last_sent_at = $5, claimed_until = EXCLUDED.claimed_until
                 WHERE segment_deliveries.status <> 'sent' AND segment_deliveries.attempts = EXCLUDED.attempts - 1
                 RETURNING post_id, platform::text AS platform, segment_index`,
      values: [
        items.map((k) => k.postId),
        items.map((k) => k.platform),
        items.map((k) => k.segmentIndex),
        items.map((k) => k.idempotencyKey),
        new Date(),
        items.map((k) => k.seenAttempts),
        items.map((k) => k.claimedUntil),
      ],
    });
    const claimed = segmentAnswers(rows);
    return items.map((k) => claimed.has(segmentKey(k)));
  }, segmentKey);

  type TSent = TSegmentKey & { remoteId: string; remoteUrl: string; meta?: Record<string, string> };
  const sent = batchLoader<TSent, true>(async (items) => {
    const { rows } = await sqlOf(db).query<{ post_id: string; platform: string; segment_index: number }>({
      name: 'segment_sent_many',
      text: `UPDATE segment_deliveries s SET status = 'sent', remote_id = u.remote_id, remote_url = u.remote_url,
                   remote_meta = u.meta, sent_at = $7, updated_at = $7
                 FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::jsonb[])
                      AS u(post_id, platform, segment_index, remote_id, remote_url, meta)
                 WHERE s.post_id = u.post_id AND s.platform = u.platform::"Platform" AND s.segment_index = u.segment_index
                 RETURNING s.post_id, s.platform::text AS platform, s.segment_index`,
      values: [
        items.map((k) => k.postId),
        items.map((k) => k.platform),
        items.map((k) => k.segmentIndex),
        items.map((k) => k.remoteId),
        items.map((k) => k.remoteUrl),
        items.map((k) => JSON.stringify(k.meta ?? {})),
        new Date(),
      ],
    });
    return answer(items, segmentKey, segmentAnswers(rows), () => notUpdated('segment'));
  }, segmentKey);

  type TTargetKey = TTargetUpdate & { postId: string; platform: TPlatform };
  const targetKey = (k: { postId: string; platform: string }) => `${k.postId}/${k.platform}`;
  const targets = batchLoader<TTargetKey, true>(async (items) => {
    // Columns not in an update keep their value (as Prisma's `undefined` = leave as is).
    const column = (get: (k: TTargetKey) => string | null | undefined) => ({
      keep: items.map((k) => get(k) === undefined),
      value: items.map((k) => get(k) ?? null),
    });
    const remoteId = column((k) => k.remotePostId);
    const remoteUrl = column((k) => k.remoteUrl);
    const error = column((k) => k.error);
    const errorKind = column((k) => k.errorKind);
    const { rows } = await sqlOf(db).query<{ post_id: string; platform: string }>({
      name: 'target_update_many',
      text: `UPDATE post_targets t SET status = u.status::"TargetStatus",
                   remote_post_id = CASE WHEN u.keep_remote_id THEN t.remote_post_id ELSE u.remote_post_id END,
                   remote_url = CASE WHEN u.keep_remote_url THEN t.remote_url ELSE u.remote_url END,
                   error = CASE WHEN u.keep_error THEN t.error ELSE u.error END,
                   error_kind = CASE WHEN u.keep_error_kind THEN t.error_kind ELSE u.error_kind END,
                   published_at = CASE WHEN u.status = 'succeeded' THEN $12 ELSE t.published_at END,
                   attempts = t.attempts + 1, updated_at = $12
                 FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[], $5::text[], $6::bool[], $7::text[],
                             $8::bool[], $9::text[], $10::bool[], $11::text[])
                      AS u(post_id, platform, status, keep_remote_id, remote_post_id, keep_remote_url, remote_url,
                           keep_error, error, keep_error_kind, error_kind)
                 WHERE t.post_id = u.post_id AND t.platform = u.platform::"Platform"
                 RETURNING t.post_id, t.platform::text AS platform`,
      values: [
        items.map((k) => k.postId),
        items.map((k) => k.platform),
        items.map((k) => k.status),
        remoteId.keep,
        remoteId.value,
        remoteUrl.keep,
        remoteUrl.value,
        error.keep,
        error.value,
        errorKind.keep,
        errorKind.value,
        new Date(),
      ],
    });
    const done = new Map(
      rows.map((r) => [targetKey({ postId: r.post_id, platform: r.platform }), true as const]),
    );
    return answer(items, targetKey, done, () => notUpdated('post target'));
  }, targetKey);

  type TDone = TNetworkSuccess & { postId: string; platform: TPlatform };
  type TDoneRow = Partial<TPostSqlRow> & { seg_keys: string | null; tgt_keys: string | null };
  const doneKey = (k: { postId: string; platform: string }) => `${k.postId}/${k.platform}`;
  const dones = batchLoader<TDone, TPostRecord | null>(async (items) => {
    const statement = {
      name: 'network_done_many',
      text: NETWORK_DONE_SQL,
      values: [
        items.map((k) => k.postId),
        items.map((k) => k.platform),
        items.map((k) => k.sent?.segmentIndex ?? null),
        items.map((k) => k.sent?.remoteId ?? null),
        items.map((k) => k.sent?.remoteUrl ?? null),
        items.map((k) => (k.sent ? JSON.stringify(k.sent.meta ?? {}) : null)),
        items.map((k) => k.remotePostId),
        items.map((k) => k.remoteUrl),
        items.map((k) => k.errorKind),
        items.map((k) => k.finalizeAttempt),
        new Date(),
      ],
    };
    const answers = (rows: TDoneRow[]) => {
      // One row carries the keys (whichever comes first); the others have NULL there.
      const keysOf = (pick: (r: TDoneRow) => string | null) =>
        new Set(rows.flatMap((r) => pick(r)?.split(' ') ?? []));
      const sentKeys = keysOf((r) => r.seg_keys);
      const targetKeys = keysOf((r) => r.tgt_keys);
      const posts = rows
        .filter((r) => r.id !== null && r.id !== undefined)
        .map((r) => postFromSql(r as TPostSqlRow));
      const ended = handOut(items, posts, (k) => ({ postId: k.postId, attempt: k.finalizeAttempt }));
      const value = items.map((k, i) => {
        if (k.sent && !sentKeys.has(doneKey(k))) return notUpdated('segment');
        if (!targetKeys.has(doneKey(k))) return notUpdated('post target');
        return ended[i] ?? null;
      });
      return { second: outcomeEvents(posts), value };
    };
    // The outbox rows must share the posts' transaction; a batch that ends no post needs none.
    if (items.every((k) => k.finalizeAttempt === null)) {
      return answers((await sqlOf(db).query<TDoneRow>(statement)).rows).value;
    }
    return inShortTransaction(db, statement, (result) => answers(result.rows as TDoneRow[]));
  }, doneKey);

  /**
   * One short transaction for every post finalized in the same turn: lock them (in id order, so two
   * processes never wait on each other in a cycle), work out each outcome, write the statuses and the
   * outbox rows. A post listed twice is finalized by its first call; the others get null, as a stale
   * attempt does.
   */
  const finals = batchLoader<TFinalizeKey, TPostRecord | null>((keys) =>
    inShortTransaction(
      db,
      {
        name: 'finalize_many',
        text: FINALIZE_SQL,
        values: [keys.map((k) => k.postId), keys.map((k) => k.attempt), new Date()],
      },
      (result) => {
        const posts = (result.rows as TPostSqlRow[]).map(postFromSql);
        return { second: outcomeEvents(posts), value: handOut(keys, posts, (k) => k) };
      },
    ),
  );

  return {
    /** Everything the publisher needs for one attempt, read fresh from PostgreSQL. */
    loadForPublish: (postId: string): Promise<TLoadedPost | null> => loads.load(postId.toLowerCase()),

    /**
     * Write-ahead: the segment is about to be sent. A crash after this leaves `sending` = outcome unknown.
     * `seenAttempts` is the row's attempts count as the caller read it (0: no row): false when the row has
     * moved on since (another run claimed or sent the segment) or the post is gone; nothing may be sent then.
     * The claim is leased until `claimedUntil` (see renewClaim); it then has `seenAttempts + 1` attempts.
     */
    markSending(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      idempotencyKey: string,
      seenAttempts: number,
      claimedUntil: Date,
    ): Promise<boolean> {
      return sending.load({
        postId: postId.toLowerCase(),
        platform,
        segmentIndex,
        idempotencyKey,
        seenAttempts,
        claimedUntil,
      });
    },

    /** Recorded the moment the network answers, so the segment is never sent again. */
    async markSent(
      postId: string,
      platform: TPlatform,
      segmentIndex: number,
      remote: { remoteId: string; remoteUrl: string; meta?: Record<string, string> },
    ) {
      await sent.load({ postId: postId.toLowerCase(), platform, segmentIndex, ...remote });
    },

    /** Per-network result, visible to clients as soon as that network completes. */
    async updateTarget(postId: string, platform: TPlatform, update: TTargetUpdate) {
      await targets.load({ ...update, postId: postId.toLowerCase(), platform });
    },

    /**
     * A network succeeded: its last segment's sent mark (when given) and its result in one statement, and
     * when `finalizeAttempt` is set, the attempt's end as `finalize` does it (status, outbox event) in the
     * same transaction. Returns the finalized post, or null when it was not finalized (not asked, another
     * network still pending, a stale attempt, a deleted post). Fails, writing nothing, when the segment or
     * target row is missing.
     */
    networkSucceeded: (
      postId: string,
      platform: TPlatform,
      success: TNetworkSuccess,
    ): Promise<TPostRecord | null> => dones.load({ ...success, postId: postId.toLowerCase(), platform }),

    /**
     * Ends an attempt once every network finished: `published` when at least one succeeded, else
     * `failed`, with `post.published` / `post.failed` written in the same transaction. Idempotent: a
     * stale attempt or an already final post changes nothing (null).
     */
    finalize: (postId: string, attempt: number): Promise<TPostRecord | null> =>
      finals.load({ postId: postId.toLowerCase(), attempt }),
  };
}
