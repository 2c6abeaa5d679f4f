import { mediaViewB, parseMediaPage } from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TIdempotent } from '../http/idempotency.js';
import type { TMediaService } from '../media/media-service.js';
import { receiveUpload } from '../media/multipart-upload.js';

/** `/v1/media`: the media library (multipart uploads, list, get, delete). */
export function mediaRouterB(media: TMediaService, publicUrl: string, idempotent: TIdempotent): Router {
  const router = Router();

  // A multipart body is fingerprinted by its length (reading the bytes would mean holding them): the same
  // key with a body of another length is 422, a retry of the same upload replays the item made.
  const keyed = idempotent('create_media.B', {
    fingerprintBody: (req) => ({ size: req.headers['content-length'] }),
  });
  router.post('/media', keyed, async (req, res) => {
    const auth = authOf(req);
    const { upload, altText } = await receiveUpload(req, res, media, auth, 'alt_text');
    const item = await media.record(upload, altText);
    res.status(201).json(mediaViewB(publicUrl, item));
  });

  router.get('/media', async (req, res) => {
    const page = parseMediaPage(req.query);
    const { items, total } = await media.list(authOf(req).accountId, page);
    res.json({
      media: items.map((item) => mediaViewB(publicUrl, item)),
      total,
      limit: page.limit,
      offset: page.offset,
    });
  });

  router.get('/media/:id', async (req, res) => {
    res.json(mediaViewB(publicUrl, await media.get(authOf(req).accountId, req.params.id)));
  });

  router.delete('/media/:id', async (req, res) => {
    await media.remove(authOf(req).accountId, req.params.id);
    res.status(204).end();
  });

  return router;
}
