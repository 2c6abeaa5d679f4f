import {
  AppError,
  assertFirstCommentFits,
  assertMediaFits,
  DELETE_SUPPORTED,
  type TMediaFieldStyle,
  type TPlatform,
  type TPostChanges,
  type TPostRecord,
  type TPostStatus,
  type TQueueState,
  UUID_PATTERN,
} from '@sps/core';
import type { TIdempotencyWrite, TPostRepository } from '@sps/db';
import { enqueueDeleteRemote, type TQueues } from '@sps/queue';
import type { TPostJobs } from './post-jobs.js';

export interface TPostServiceDeps {
  posts: TPostRepository;
  jobs: TPostJobs;
  queues: TQueues;
  now?: () => Date;
  /** Told after every change a person could see in a list (the dashboard's live updates). */
  onChange?: (accountId: string, postId: string | null) => void;
}

/** Per network, what a Variant A delete does with the published copy. */
export type TPlatformDeletion = 'deleting' | 'not_supported' | 'kept';

/**
 * A post is either scheduled (a time), queued/pending (Variant A's interval queue) or neither; setting
 * one mode clears the other so the stored state is never ambiguous.
 */
function normaliseModes(changes: TPostChanges): TPostChanges {
  if (changes.scheduledFor) return { ...changes, queueState: null };
  if (changes.queueState) return { ...changes, scheduledFor: null };
  return changes;
}

function statusAfter(current: TPostRecord, changes: TPostChanges): TPostStatus {
  if (changes.scheduledFor !== undefined) return changes.scheduledFor ? 'scheduled' : 'draft';
  return current.status === 'failed' ? 'draft' : current.status;
}

/** The first comment's field name in the caller's variant. */
const firstCommentField = (style: TMediaFieldStyle) => (style === 'A' ? 'firstComment' : 'first_comment');

export function notFound(id: string): AppError {
  return new AppError('not_found', `No post with id ${id} in this account`, {
    fix: 'Check the id; posts of other accounts are not visible with this API key.',
  });
}

export function createPostService({
  posts,
  jobs,
  queues,
  now = () => new Date(),
  onChange = () => undefined,
}: TPostServiceDeps) {
  const service = {
    /** `style` names refused media items in the caller's field names (A `mediaUrls.0`, B `media.images.0`). */
    async create(
      accountId: string,
      changes: TPostChanges,
      style: TMediaFieldStyle = 'B',
      /** Under an Idempotency-Key: the key's record, written in the same statement as the post. */
      idempotency?: (post: TPostRecord) => TIdempotencyWrite,
    ): Promise<TPostRecord> {
      const normalised = normaliseModes(changes);
      const status: TPostStatus = normalised.scheduledFor ? 'scheduled' : 'draft';
      assertMediaFits(
        {
          platforms: normalised.platforms ?? [],
          media: normalised.media ?? null,
          segments: normalised.segments ?? null,
        },
        style,
        { draft: status === 'draft' && !normalised.queueState && !normalised.publishNow },
      );
      assertFirstCommentFits(normalised.platforms ?? [], normalised.firstComment, firstCommentField(style));
      const post = await posts.create(accountId, status, normalised, now(), idempotency);
      await jobs.afterSave(null, post);
      onChange(accountId, post.id);
      return post;
    },

    async get(accountId: string, id: string): Promise<TPostRecord> {
      const post = UUID_PATTERN.test(id) ? await posts.find(accountId, id) : null;
      if (!post) throw notFound(id);
      return post;
    },

    /** A page of posts (newest first, or queue order) and the total: lists are never loaded whole. */
    listPage(
      accountId: string,
      filter: {
        status?: TPostStatus;
        queueState?: TQueueState;
        limit: number;
        offset: number;
        order?: 'newest' | 'oldestQueued';
      },
    ) {
      return posts.listPage(accountId, filter);
    },

    /**
     * Variant A's "all posts": up to `limit` after `offset`, newest first, read `pageSize` at a time. The
     * first page and the total are read at once (so a failure is still an error answer); the iterator reads
     * each following page when the previous one has been written.
     */
    async listInPages(
      accountId: string,
      filter: { queueState?: TQueueState; limit: number; offset: number; pageSize: number },
    ): Promise<{ total: number; first: TPostRecord[]; rest: AsyncIterable<TPostRecord[]> }> {
      const { queueState, limit, offset, pageSize } = filter;
      const firstPage = await posts.listPage(accountId, {
        ...(queueState ? { queueState } : {}),
        limit: Math.min(pageSize, limit),
        offset,
      });
      async function* rest(): AsyncGenerator<TPostRecord[]> {
        let read = firstPage.posts.length;
        // A page shorter than asked was the last one.
        let full = read === Math.min(pageSize, limit);
        let last = firstPage.posts.at(-1);
        while (last && full && read < limit) {
          const asked = Math.min(pageSize, limit - read);
          const page = await posts.listNewestAfter(accountId, {
            ...(queueState ? { queueState } : {}),
            limit: asked,
            after: { createdAt: last.createdAt, id: last.id },
          });
          if (page.length > 0) yield page;
          read += page.length;
          full = page.length === asked;
          last = page.at(-1);
        }
      }
      return { total: firstPage.total, first: firstPage.posts, rest: rest() };
    },

    /** Only drafts and scheduled posts change; published or publishing ones are `post_not_editable`. */
    async update(
      accountId: string,
      id: string,
      changes: TPostChanges,
      style: TMediaFieldStyle = 'B',
    ): Promise<TPostRecord> {
      if (!UUID_PATTERN.test(id)) throw notFound(id);
      const normalised = normaliseModes(changes);
      const outcome = await posts.update(
        accountId,
        id,
        normalised,
        (current) => {
          const status = statusAfter(current, normalised);
          // Checked on the post as it will be (inside the row lock), so a change of platforms alone is
          // checked against the stored media too; throwing here rolls the update back.
          const queueState = normalised.queueState !== undefined ? normalised.queueState : current.queueState;
          assertMediaFits(
            {
              platforms: normalised.platforms ?? current.platforms,
              media: normalised.media !== undefined ? normalised.media : current.media,
              segments: normalised.segments !== undefined ? normalised.segments : current.segments,
            },
            style,
            { draft: status === 'draft' && !queueState && !normalised.publishNow },
          );
          assertFirstCommentFits(
            normalised.platforms ?? current.platforms,
            normalised.firstComment !== undefined ? normalised.firstComment : current.firstComment,
            firstCommentField(style),
          );
          return status;
        },
        now(),
      );
      if (outcome.kind === 'not_found') throw notFound(id);
      if (outcome.kind === 'not_editable') {
        throw new AppError(
          'post_not_editable',
          `The post is ${outcome.status} and can no longer be changed`,
          {
            fix:
              outcome.status === 'publishing'
                ? 'Wait until publishing finishes.'
                : 'Create a new post instead; published posts cannot be edited.',
            details: { status: outcome.status },
          },
        );
      }
      await jobs.afterSave(outcome.before, outcome.post);
      onChange(accountId, outcome.post.id);
      return outcome.post;
    },

    /** Undoes a create whose publish could not start: removes the post only if it is still an untouched draft. */
    async discardDraft(accountId: string, id: string): Promise<boolean> {
      const discarded = await posts.deleteUntouchedDraft(accountId, id);
      if (discarded) onChange(accountId, id);
      return discarded;
    },

    /** Removes the post from the service only (Variant B, and Variant A with deleteFromPlatforms=false). */
    async remove(accountId: string, id: string): Promise<void> {
      const before = UUID_PATTERN.test(id) ? await posts.find(accountId, id) : null;
      if (!before || !(await posts.delete(accountId, id))) throw notFound(id);
      await jobs.afterDelete(before);
      onChange(accountId, id);
    },

    /**
     * Variant A delete with deleteFromPlatforms: the post disappears at once; the publisher removes its
     * copies where the network's API allows, then the row.
     */
    async removeWithCopies(
      accountId: string,
      id: string,
    ): Promise<Partial<Record<TPlatform, TPlatformDeletion>>> {
      const before = UUID_PATTERN.test(id) ? await posts.find(accountId, id) : null;
      if (!before) throw notFound(id);
      const sent = await posts.sentSegments(id);
      const platforms = [...new Set(sent.map((s) => s.platform as TPlatform))];
      if (platforms.length === 0) {
        await service.remove(accountId, id);
        return {};
      }
      if (!(await posts.softDelete(accountId, id, now()))) throw notFound(id);
      await enqueueDeleteRemote(queues, id);
      await jobs.afterDelete(before);
      onChange(accountId, id);
      return Object.fromEntries(
        platforms.map((p) => [p, DELETE_SUPPORTED.has(p) ? 'deleting' : 'not_supported']),
      );
    },

    /** Variant A approve: a pending post joins the interval queue. */
    async approve(accountId: string, id: string): Promise<TPostRecord> {
      const result = UUID_PATTERN.test(id) ? await posts.approve(accountId, id, now()) : 'not_found';
      if (result === 'not_found') throw notFound(id);
      if (result === 'not_pending') {
        throw new AppError('post_not_pending', 'The post is not pending approval', {
          fix: 'Only posts created with queueStatus "pending" can be approved.',
        });
      }
      await jobs.queueChanged(accountId);
      onChange(accountId, id);
      return service.get(accountId, id);
    },
  };
  return service;
}

export type TPostService = ReturnType<typeof createPostService>;
