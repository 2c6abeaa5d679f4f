import { randomUUID } from 'node:crypto';
import {
  canUpdate,
  idempotencyKeyInUse,
  presentPostB,
  type TPostChanges,
  type TPostRecord,
  type TPostStatus,
  type TQueueState,
  UUID_PATTERN,
} from '@sps/core';
import { batchLoader } from './batch.js';
import { sqlOf, type TDb, type TTx } from './client.js';
import { recordEvent } from './event-repository.js';
import type { TIdempotencyWrite } from './idempotency-repository.js';
import { jsonColumn, POST_INCLUDE, toPostRecord } from './post-mapper.js';
import { POST_COLUMNS, POST_TARGETS, postFromSql, type TPostSqlRow } from './post-sql.js';

export type TUpdateOutcome =
  | { kind: 'updated'; post: TPostRecord; before: TPostRecord }
  | { kind: 'not_found' }
  | { kind: 'not_editable'; status: TPostStatus };

const EDITABLE: TPostStatus[] = ['draft', 'scheduled'];

export function createPostRepository(db: TDb) {
  const finds = batchLoader<{ accountId: string; id: string }, TPostRecord | null>(async (keys) => {
    const { rows } = await sqlOf(db).query<TPostSqlRow>({
      name: 'post_find_many',
      text: `SELECT ${POST_COLUMNS}, ${POST_TARGETS} FROM posts p
             WHERE p.id = ANY ($1::uuid[]) AND p.account_id = ANY ($2::uuid[]) AND p.deleted_at IS NULL`,
      values: [keys.map((k) => k.id), [...new Set(keys.map((k) => k.accountId))]],
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return keys.map((k) => {
      const row = byId.get(k.id);
      // Tenancy per caller: a batch mixes accounts.
      return row && row.accountId === k.accountId ? postFromSql(row) : null;
    });
  });

  /**
   * Creates of concurrent requests as one statement (see batchLoader): the posts, and for the scheduled
   * ones their `post.scheduled` event, written together (one statement is one transaction). Each row is
   * the caller's own (its account comes from its key); a row that fails alone fails only its caller.
   */
  const inserts = batchLoader<
    { post: TPostRecord; countsTwitterAllowance: boolean; idempotency?: TIdempotencyWrite | undefined },
    true
  >(async (items) => {
    const posts = items.map((i) => i.post);
    const keyed = items.filter((i) => i.idempotency);
    const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
    const scheduled = posts.filter((p) => p.status === 'scheduled');
    const { rows } = await sqlOf(db).query<{ id: string }>({
      name: 'post_create_many',
      // A post made under an Idempotency-Key is written only together with its key's record (the post
      // and, for a create, the answer), and only while its request still holds the key (lock_token).
      text: `WITH keyed AS (
               UPDATE idempotency_keys k
               SET resource_id = d.post_id, response_status = d.status, response_body = d.body,
                   lock_token = CASE WHEN d.status IS NULL THEN k.lock_token END
               FROM unnest($17::uuid[], $18::uuid[], $19::text[], $20::uuid[], $21::int[], $22::text[])
                    AS d(post_id, account_id, key, token, status, body)
               WHERE k.account_id = d.account_id AND k.key = d.key AND k.lock_token = d.token
               RETURNING d.post_id
             ), created AS (
               INSERT INTO posts (id, account_id, status, content, platforms, scheduled_for, queue_state, queued_at,
                                  media, segments, poll, counts_twitter_allowance, created_at, updated_at)
               SELECT i.id, i.account_id, i.status::"PostStatus", i.content,
                      string_to_array(i.platforms, ',')::"Platform"[], i.scheduled_for,
                      i.queue_state::"QueueState", i.queued_at, i.media, i.segments, i.poll, i.counts,
                      i.created_at, i.created_at
               FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
                           $7::text[], $8::timestamptz[], $9::jsonb[], $10::jsonb[], $11::jsonb[], $12::bool[],
                           $13::timestamptz[])
                    AS i(id, account_id, status, content, platforms, scheduled_for, queue_state, queued_at,
                         media, segments, poll, counts, created_at)
               WHERE i.id <> ALL ($17::uuid[]) OR i.id IN (SELECT post_id FROM keyed)
               RETURNING id
             ), events AS (
               INSERT INTO events (id, account_id, type, data)
               SELECT gen_random_uuid(), e.account_id, 'post.scheduled', e.data
               FROM unnest($14::uuid[], $15::uuid[], $16::jsonb[]) AS e(post_id, account_id, data)
               WHERE e.post_id IN (SELECT id FROM created)
             )
             SELECT id FROM created`,
      values: [
        posts.map((p) => p.id),
        posts.map((p) => p.accountId),
        posts.map((p) => p.status),
        posts.map((p) => p.content),
        posts.map((p) => p.platforms.join(',')),
        posts.map((p) => p.scheduledFor),
        posts.map((p) => p.queueState),
        posts.map((p) => p.queuedAt),
        posts.map((p) => json(p.media)),
        posts.map((p) => json(p.segments)),
        posts.map((p) => json(p.poll)),
        items.map((i) => i.countsTwitterAllowance),
        posts.map((p) => p.createdAt),
        scheduled.map((p) => p.id),
        scheduled.map((p) => p.accountId),
        scheduled.map((p) => JSON.stringify({ post: presentPostB(p) })),
        keyed.map((i) => i.post.id),
        keyed.map((i) => i.idempotency?.accountId),
        keyed.map((i) => i.idempotency?.key),
        keyed.map((i) => i.idempotency?.token),
        keyed.map((i) => i.idempotency?.status ?? null),
        keyed.map((i) => i.idempotency?.body ?? null),
      ],
    });
    const created = new Set(rows.map((r) => r.id));
    return items.map(({ post, idempotency }) =>
      created.has(post.id)
        ? true
        : idempotency
          ? idempotencyKeyInUse()
          : new Error(`Post ${post.id} was not created`),
    );
  });

  async function findInTx(tx: TTx | TDb, accountId: string, id: string): Promise<TPostRecord | null> {
    const row = await tx.post.findFirst({ where: { id, accountId, deletedAt: null }, include: POST_INCLUDE });
    return row ? toPostRecord(row) : null;
  }

  return {
    /**
     * Creates a post: plain SQL, batched with concurrent creates. A scheduled post also writes
     * `post.scheduled` in the same statement. The id and timestamps are chosen here so the event's post
     * view is built before the insert.
     */
    async create(
      accountId: string,
      status: TPostStatus,
      changes: TPostChanges,
      now: Date,
      /** With an Idempotency-Key: the key's record (and answer, built from the post) written with the post. */
      idempotency?: (post: TPostRecord) => TIdempotencyWrite,
    ): Promise<TPostRecord> {
      const data = {
        id: randomUUID(),
        accountId,
        status,
        content: changes.content ?? '',
        platforms: changes.platforms ?? [],
        scheduledFor: changes.scheduledFor ?? null,
        queueState: changes.queueState ?? null,
        queuedAt: changes.queueState ? now : null,
        createdAt: now,
        updatedAt: now,
      };
      const post: TPostRecord = {
        ...data,
        media: changes.media ?? null,
        segments: changes.segments ?? null,
        poll: changes.poll ?? null,
        publishAttempt: 0,
        publishedAt: null,
        targets: [],
      };
      await inserts.load({
        post,
        countsTwitterAllowance: changes.countsTwitterAllowance === true,
        idempotency: idempotency?.(post),
      });
      return post;
    },

    /**
     * Plain SQL, batched across concurrent requests (see batchLoader): every API read of a post and the
     * publish checks go through here.
     */
    find(accountId: string, id: string): Promise<TPostRecord | null> {
      if (!UUID_PATTERN.test(id)) return Promise.resolve(null);
      // Matched against the database's text form of the ids (lower case); ids are case-insensitive.
      return finds.load({ accountId: accountId.toLowerCase(), id: id.toLowerCase() });
    },

    /**
     * Applies changes only while the post is still a draft or scheduled. The row is locked for the
     * check, so a publish that starts meanwhile makes this a conflict rather than a lost update.
     * `nextStatus` computes the status from the current record and the merged changes.
     */
    async update(
      accountId: string,
      id: string,
      changes: TPostChanges,
      nextStatus: (current: TPostRecord) => TPostStatus,
      now: Date,
    ): Promise<TUpdateOutcome> {
      return db.$transaction(async (tx) => {
        const locked = await tx.$queryRaw<{ status: TPostStatus }[]>`
          SELECT status FROM posts WHERE id = ${id}::uuid AND account_id = ${accountId}::uuid AND deleted_at IS NULL FOR UPDATE`;
        const current = locked[0];
        if (!current) return { kind: 'not_found' } as const;
        if (!canUpdate(current.status)) return { kind: 'not_editable', status: current.status } as const;
        const before = await findInTx(tx, accountId, id);
        if (!before) return { kind: 'not_found' } as const;
        const status = nextStatus(before);
        const queueState = changes.queueState;
        const row = await tx.post.update({
          where: { id },
          data: {
            status,
            ...(changes.content !== undefined ? { content: changes.content } : {}),
            ...(changes.platforms !== undefined ? { platforms: changes.platforms } : {}),
            ...(changes.scheduledFor !== undefined ? { scheduledFor: changes.scheduledFor } : {}),
            ...(queueState !== undefined
              ? {
                  queueState,
                  queuedAt: queueState && queueState !== before.queueState ? now : before.queuedAt,
                }
              : {}),
            media: jsonColumn(changes.media),
            segments: jsonColumn(changes.segments),
            poll: jsonColumn(changes.poll),
            ...(changes.countsTwitterAllowance ? { countsTwitterAllowance: true } : {}),
          },
          include: POST_INCLUDE,
        });
        const post = toPostRecord(row);
        const newlyScheduled =
          status === 'scheduled' &&
          (before.status !== 'scheduled' || before.scheduledFor?.getTime() !== post.scheduledFor?.getTime());
        if (newlyScheduled) {
          await recordEvent(tx, { accountId, type: 'post.scheduled', data: { post: presentPostB(post) } });
        }
        return { kind: 'updated', post, before } as const;
      });
    },

    /** Variant A list: every post of the account, newest first, optionally by queue state. */
    /**
     * One page of the account's posts and the total for the filter: newest first, or (`oldestQueued`) in
     * queue order. Lists are always paged: no answer holds more than the caller's limit.
     */
    async listPage(
      accountId: string,
      filter: {
        status?: TPostStatus;
        queueState?: TQueueState;
        limit: number;
        offset: number;
        order?: 'newest' | 'oldestQueued';
      },
    ): Promise<{ posts: TPostRecord[]; total: number }> {
      const where = {
        accountId,
        deletedAt: null,
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.queueState ? { queueState: filter.queueState } : {}),
      };
      const orderBy =
        filter.order === 'oldestQueued'
          ? [{ queuedAt: 'asc' as const }, { id: 'asc' as const }]
          : [{ createdAt: 'desc' as const }, { id: 'desc' as const }];
      const [rows, total] = await Promise.all([
        db.post.findMany({ where, include: POST_INCLUDE, orderBy, take: filter.limit, skip: filter.offset }),
        db.post.count({ where }),
      ]);
      return { posts: rows.map(toPostRecord), total };
    },

    /**
     * The next page after `after`, newest first (created_at, then id, descending): a keyset continuation,
     * so posts created meanwhile neither repeat nor push others out of a list read in several pages.
     */
    async listNewestAfter(
      accountId: string,
      filter: { queueState?: TQueueState; limit: number; after: { createdAt: Date; id: string } },
    ): Promise<TPostRecord[]> {
      const { createdAt, id } = filter.after;
      const rows = await db.post.findMany({
        where: {
          accountId,
          deletedAt: null,
          ...(filter.queueState ? { queueState: filter.queueState } : {}),
          OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }],
        },
        include: POST_INCLUDE,
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: filter.limit,
      });
      return rows.map(toPostRecord);
    },

    /** Removes the post from the service. Returns false when there is no such post in this account. */
    async delete(accountId: string, id: string): Promise<boolean> {
      // A post already being removed (deleted_at set) is gone from every view, so it is not found here either.
      const { count } = await db.post.deleteMany({ where: { id, accountId, deletedAt: null } });
      return count > 0;
    },

    /** Removes a post only while it is a draft that never started publishing (undoing a failed create). */
    async deleteUntouchedDraft(accountId: string, id: string): Promise<boolean> {
      const { count } = await db.post.deleteMany({
        where: { id, accountId, deletedAt: null, status: 'draft', publishAttempt: 0 },
      });
      return count > 0;
    },

    /** Variant A approve: a pending post joins the interval queue (queued now, so it goes last). */
    async approve(
      accountId: string,
      id: string,
      now: Date,
    ): Promise<'approved' | 'not_found' | 'not_pending'> {
      const { count } = await db.post.updateMany({
        where: { id, accountId, deletedAt: null, status: 'draft', queueState: 'pending' },
        data: { queueState: 'queued', queuedAt: now },
      });
      if (count > 0) return 'approved';
      return (await findInTx(db, accountId, id)) ? 'not_pending' : 'not_found';
    },

    /** Hides the post at once; the row goes after its network copies are removed (delete-remote job). */
    async softDelete(accountId: string, id: string, now: Date): Promise<boolean> {
      const { count } = await db.post.updateMany({
        where: { id, accountId, deletedAt: null },
        data: { deletedAt: now },
      });
      return count > 0;
    },

    /** Worker reads: any account, deleted or not. */
    async findForWorker(id: string): Promise<{ post: TPostRecord; deletedAt: Date | null } | null> {
      const row = await db.post.findUnique({ where: { id }, include: POST_INCLUDE });
      return row ? { post: toPostRecord(row), deletedAt: row.deletedAt } : null;
    },

    async sentSegments(postId: string) {
      return db.segmentDelivery.findMany({
        where: { postId, status: 'sent', remoteId: { not: null } },
        orderBy: [{ platform: 'asc' }, { segmentIndex: 'desc' }],
      });
    },

    /** A copy removed from its network is no longer a sent segment. */
    async forgetSegment(segmentId: string): Promise<void> {
      await db.segmentDelivery.deleteMany({ where: { id: segmentId } });
    },

    async hardDelete(id: string): Promise<void> {
      await db.post.deleteMany({ where: { id } });
    },

    editableStatuses: EDITABLE,
  };
}

export type TPostRepository = ReturnType<typeof createPostRepository>;
