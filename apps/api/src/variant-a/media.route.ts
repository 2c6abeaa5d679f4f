import { mediaViewA, parseMediaPage } from '@sps/core';
import { Router } from 'express';
import { authOf } from '../http/auth.js';
import type { TIdempotent } from '../http/idempotency.js';
import type { TMediaService } from '../media/media-service.js';
import { receiveUpload } from '../media/multipart-upload.js';
import { readUploadAhead, uploadFingerprint } from '../media/upload-fingerprint.js';

/** `/api/media`: the media library in Variant A's shapes (`{success, media}`). */
export function mediaRouterA(media: TMediaService, publicUrl: string, idempotent: TIdempotent): Router {
  const router = Router();

  // A multipart body is fingerprinted by its content without the boundary (read ahead, up to a few MB; past
  // that by its first bytes and length): another body under the same key is 422, a retry replays the item.
  const keyed = idempotent('create_media.A', {
    fingerprintBody: uploadFingerprint,
  });
  router.post('/media', readUploadAhead(idempotent), keyed, async (req, res) => {
    const auth = authOf(req);
    const { upload, altText } = await receiveUpload(req, res, media, auth, 'altText');
    const item = await media.record(upload, altText);
    res.status(201).json({ success: true, media: mediaViewA(publicUrl, item) });
  });

  router.get('/media', async (req, res) => {
    const page = parseMediaPage(req.query);
    const { items, total } = await media.list(authOf(req).accountId, page);
    const hasMore = page.offset + items.length < total;
    res.json({
      success: true,
      media: items.map((item) => mediaViewA(publicUrl, item)),
      total,
      hasMore,
      ...(hasMore ? { nextOffset: page.offset + items.length } : {}),
    });
  });

  router.get('/media/:id', async (req, res) => {
    res.json({
      success: true,
      media: mediaViewA(publicUrl, await media.get(authOf(req).accountId, req.params.id)),
    });
  });

  router.delete('/media/:id', async (req, res) => {
    await media.remove(authOf(req).accountId, req.params.id);
    res.json({ success: true });
  });

  return router;
}
