import { parseCreatePostB, parseListQueryB, parseUpdatePostB, presentPostB } from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import { idempotencyOf, type TIdempotent } from '../http/idempotency.js';
import type { TPostService } from '../services/post-service.js';
import type { TPublishService } from '../services/publish-service.js';

export function postsRouterB(
  posts: TPostService,
  publishing: TPublishService,
  idempotent: TIdempotent,
): Router {
  const router = Router();

  router.post('/posts', idempotent('create_post.B'), async (req, res) => {
    const changes = parseCreatePostB(req.body, new Date());
    const key = idempotencyOf(req);
    const post = await posts.create(
      authOf(req).accountId,
      changes,
      'B',
      key ? (made) => key.withAnswer(201, presentPostB(made)) : undefined,
    );
    res.status(201).json(presentPostB(post));
  });

  router.get('/posts', async (req, res) => {
    const query = parseListQueryB(req.query);
    const page = await posts.listPage(authOf(req).accountId, query);
    res.json({ posts: page.posts.map(presentPostB), total: page.total });
  });

  router.get('/posts/:id', async (req, res) => {
    res.json(presentPostB(await posts.get(authOf(req).accountId, req.params.id)));
  });

  router.put('/posts/:id', async (req, res) => {
    const auth = authOf(req);
    await posts.get(auth.accountId, req.params.id);
    const changes = parseUpdatePostB(req.body, new Date());
    res.json(presentPostB(await posts.update(auth.accountId, req.params.id, changes)));
  });

  /** Answers at once with the post in `publishing`; results fill in as each network completes. */
  router.post('/posts/:id/publish', idempotent<{ id: string }>('publish_post.B'), async (req, res) => {
    const { accountId } = authOf(req);
    const key = idempotencyOf(req);
    if (key?.resume) {
      // The first request with this key crashed after starting the publish: answer with the post now.
      res.json(presentPostB(await posts.get(accountId, key.resume.resourceId)));
      return;
    }
    const started = await publishing.start(
      accountId,
      req.params.id,
      ['draft', 'scheduled'],
      'B',
      undefined,
      key?.effectOnly(),
    );
    res.json(presentPostB(started.post));
  });

  router.delete('/posts/:id', async (req, res) => {
    await posts.remove(authOf(req).accountId, req.params.id);
    res.status(204).end();
  });

  return router;
}
