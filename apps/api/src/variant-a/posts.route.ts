import {
  parseCreatePostA,
  parseDeleteFromPlatforms,
  parseListQueryA,
  presentPostA,
  presentPublishResultA,
  type TPlatform,
  type TPostRecord,
} from '@sps/core';
import { type Response, Router } from 'express';
import { authOf } from '../http/auth.js';
import { idempotencyOf, type TIdempotent } from '../http/idempotency.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService, TPublishStart } from '../services/publish-service.js';
import { requireActivePlan } from './plan-guard.js';

/** Rows read from the database at a time for GET /api/posts. */
const LIST_PAGE_A = 200;

function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Variant A may publish anything not yet published: drafts, scheduled, queued and failed posts. */
const PUBLISHABLE_A = ['draft', 'scheduled', 'failed'] as const;

function publishResults(post: TPostRecord, platforms: TPlatform[]) {
  return post.targets
    .filter((t) => platforms.includes(t.platform))
    .map((t) =>
      t.status === 'pending' || t.status === 'publishing'
        ? {
            platform: t.platform,
            success: false,
            error: `Still publishing to ${t.platform}; GET /api/posts/${post.id} shows the outcome when it finishes.`,
          }
        : presentPublishResultA(t),
    );
}

export function postsRouterA(
  posts: TPostService,
  publishing: TPublishService,
  idempotent: TIdempotent,
): Router {
  const router = Router();

  async function publishAndWait(accountId: string, started: TPublishStart) {
    // Once the publish has started an error answer would invite a retry, and a retried create would post
    // twice: if waiting fails (database busy), answer with the post as it was when publishing started.
    const post = await publishing
      .waitForOutcome(accountId, started.post.id, started.attempt)
      .catch(() => started.post);
    const results = publishResults(post, started.platforms);
    return { success: results.some((r) => r.success), post: presentPostA(post), publishResults: results };
  }

  // "All posts of the account" (spec), up to MAX_LIST_A per answer: read LIST_PAGE_A at a time and written
  // page by page, so neither the database read nor the answer is held whole in memory.
  router.get('/posts', async (req, res) => {
    const { queueState, limit, offset } = parseListQueryA(req.query);
    const { total, first, rest } = await posts.listInPages(authOf(req).accountId, {
      ...(queueState ? { queueState } : {}),
      limit,
      offset,
      pageSize: LIST_PAGE_A,
    });
    res.status(200).type('application/json');
    let written = 0;
    const write = async (page: TPostRecord[]) => {
      const items = page.map((p) => JSON.stringify(presentPostA(p))).join(',');
      // Backpressure: the next page is read once the client has taken this one (or has gone).
      if (!res.write(`${written > 0 && items ? ',' : ''}${items}`)) await drainedOrClosed(res);
      written += page.length;
    };
    try {
      res.write('{"success":true,"posts":[');
      await write(first);
      for await (const page of rest) {
        if (res.destroyed) return;
        await write(page);
      }
    } catch (error) {
      // The status line is sent: a half-written list must not look complete, so the connection is cut.
      res.destroy();
      throw error;
    }
    const hasMore = offset + written < total;
    res.end(`],"total":${total},"hasMore":${hasMore}${hasMore ? `,"nextOffset":${offset + written}` : ''}}`);
  });

  router.post('/posts', idempotent('create_post.A'), async (req, res) => {
    const auth = authOf(req);
    requireActivePlan(auth);
    const changes = parseCreatePostA(req.body, new Date());
    const key = idempotencyOf(req);
    // The first request with this key crashed after creating its post: publish that one (or wait for the
    // publish it started) instead of creating another. A post discarded since (its publish was refused) is
    // made again.
    const made =
      key?.resume && changes.publishNow
        ? await posts.get(auth.accountId, key.resume.resourceId).catch(() => null)
        : null;
    if (made) {
      const started =
        made.status === 'draft' && made.publishAttempt === 0
          ? await publishing.start(auth.accountId, made.id, ['draft'], 'A', auth.plan, key?.effectOnly())
          : { post: made, attempt: made.publishAttempt, platforms: made.platforms };
      const outcome = await publishAndWait(auth.accountId, started);
      res.status(201).json({ success: true, post: outcome.post, publishResults: outcome.publishResults });
      return;
    }
    // Every create listing twitter, draft or not, is refused once the month's twitter allowance is used up.
    await publishing.ensureTwitterAllowance(auth.accountId, auth.plan, changes.platforms ?? []);
    if (changes.publishNow) {
      // Refuse before storing anything: a post that cannot publish now is not created either.
      await publishing.check(
        auth.accountId,
        {
          content: changes.content ?? '',
          platforms: changes.platforms ?? [],
          media: changes.media ?? null,
          segments: changes.segments ?? null,
        },
        'A',
      );
    }
    // Without publishing the answer is known before the insert and goes into the same statement; with
    // publishing the key records the post, and the answer is stored once publishing has its outcome.
    const created = await posts.create(
      auth.accountId,
      changes,
      'A',
      key
        ? (post) =>
            changes.publishNow
              ? key.effectOnly()
              : key.withAnswer(201, { success: true, post: presentPostA(post) })
        : undefined,
    );
    if (!changes.publishNow) {
      res.status(201).json({ success: true, post: presentPostA(created) });
      return;
    }
    const started = await publishing
      .start(auth.accountId, created.id, ['draft'], 'A', auth.plan, key?.effectOnly())
      .catch(async (error: unknown) => {
        // The caller gets an error, so no post may stay behind: a retry of the request would make two.
        // Only an untouched draft goes: one that started publishing after all stays (and is published).
        await posts.discardDraft(auth.accountId, created.id).catch(() => undefined);
        throw error;
      });
    const outcome = await publishAndWait(auth.accountId, started);
    res.status(201).json({ success: true, post: outcome.post, publishResults: outcome.publishResults });
  });

  router.get('/posts/:id', async (req, res) => {
    const post = await posts.get(authOf(req).accountId, req.params.id);
    res.json({ post: presentPostA(post) });
  });

  router.put('/posts/:id', async (req, res) => {
    const auth = authOf(req);
    const current = await posts.get(auth.accountId, req.params.id);
    const changes = parseCreatePostA(req.body, new Date());
    if (changes.publishNow) {
      requireActivePlan(auth);
      // Checked on the post as it would be, before changing it: a refused publish changes nothing.
      await publishing.check(
        auth.accountId,
        {
          content: changes.content ?? current.content,
          platforms: changes.platforms ?? current.platforms,
          media: changes.media !== undefined ? changes.media : current.media,
          segments: changes.segments !== undefined ? changes.segments : current.segments,
        },
        'A',
      );
      await publishing.ensureTwitterAllowance(
        auth.accountId,
        auth.plan,
        changes.platforms ?? current.platforms,
      );
    }
    const updated = await posts.update(auth.accountId, req.params.id, changes, 'A');
    if (!changes.publishNow) {
      res.json({ post: presentPostA(updated) });
      return;
    }
    const started = await publishing.start(auth.accountId, updated.id, [...PUBLISHABLE_A], 'A', auth.plan);
    const outcome = await publishAndWait(auth.accountId, started);
    res.json({ post: outcome.post, publishResults: outcome.publishResults });
  });

  router.delete('/posts/:id', async (req, res) => {
    const auth = authOf(req);
    const deleteFromPlatforms = parseDeleteFromPlatforms(req.query.deleteFromPlatforms);
    const post = await posts.get(auth.accountId, req.params.id);
    const platformDeletions = deleteFromPlatforms
      ? await posts.removeWithCopies(auth.accountId, post.id)
      : {};
    if (!deleteFromPlatforms) await posts.remove(auth.accountId, post.id);
    res.json({ success: true, id: post.id, deleted: true, deleteFromPlatforms, platformDeletions });
  });

  router.post('/posts/:id/publish', idempotent<{ id: string }>('publish_post.A'), async (req, res) => {
    const auth = authOf(req);
    requireActivePlan(auth);
    const key = idempotencyOf(req);
    // The first request with this key crashed after starting the publish: wait for that attempt instead.
    const resumed = key?.resume
      ? await posts.get(auth.accountId, key.resume.resourceId).catch(() => null)
      : null;
    const started = resumed
      ? {
          post: resumed,
          attempt: key?.resume?.attempt ?? resumed.publishAttempt,
          platforms: resumed.platforms,
        }
      : await publishing.start(
          auth.accountId,
          req.params.id,
          [...PUBLISHABLE_A],
          'A',
          auth.plan,
          key?.effectOnly(),
        );
    res.json(await publishAndWait(auth.accountId, started));
  });

  router.post('/posts/:id/retry', async (req, res) => {
    const auth = authOf(req);
    requireActivePlan(auth);
    const started = await publishing.retry(auth.accountId, req.params.id, auth.plan);
    res.json(await publishAndWait(auth.accountId, started));
  });

  router.post('/posts/:id/approve', async (req, res) => {
    const post = await posts.approve(authOf(req).accountId, req.params.id);
    res.json({ success: true, post: presentPostA(post) });
  });

  return router;
}
