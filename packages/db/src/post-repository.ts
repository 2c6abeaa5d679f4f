import { randomUUID } from 'node:crypto';
import {
  canUpdate,
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
import { createPostInserts } from './post-insert.js';
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

  const inserts = createPostInserts(db);

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
        firstComment: changes.firstComment ?? null,
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
            ...(changes.firstComment !== undefined ? { firstComment: changes.firstComment } : {}),
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
