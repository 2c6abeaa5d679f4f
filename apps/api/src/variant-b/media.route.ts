import { mediaViewB, parseMediaPage } from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TIdempotent } from '../http/idempotency.js';
import type { TMediaService } from '../media/media-service.js';
import { receiveUpload } from '../media/multipart-upload.js';
import { readUploadAhead, uploadFingerprint } from '../media/upload-fingerprint.js';

/** `/v1/media`: the media library (multipart uploads, list, get, delete). */
export function mediaRouterB(media: TMediaService, publicUrl: string, idempotent: TIdempotent): Router {
  const router = Router();

  // A multipart body is fingerprinted by its content without the boundary (read ahead, up to a few MB; past
  // that by its first bytes and length): another body under the same key is 422, a retry replays the item.
  const keyed = idempotent('create_media.B', {
    fingerprintBody: uploadFingerprint,
  });
  router.post('/media', readUploadAhead(idempotent), keyed, async (req, res) => {
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
