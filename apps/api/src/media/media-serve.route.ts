import { pipeline } from 'node:stream/promises';
import type { TMediaRepository } from '@sps/db';
import { StorageNotFoundError, type TStorage } from '@sps/storage';
import { type ErrorRequestHandler, Router } from 'express';
import type { Logger } from 'pino';
import parseRange from 'range-parser';

/** Items never change under an id: caches may keep them for a year. */
const CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * `GET /media/<id>[.<ext>]`: an item's bytes to anyone holding its URL (networks that fetch media
 * themselves: Instagram, Threads, TikTok's PULL_FROM_URL). The random UUID is the secret; a deleted item,
 * or one whose account is gone, is 404 at once. One byte range per request (206, 416 outside the object).
 */
export function mediaServeRouter(deps: {
  media: TMediaRepository;
  storage: TStorage;
  logger: Logger;
}): Router {
  const router = Router();
  router.get('/media/:file', async (req, res) => {
    const id = /^([0-9a-f-]{36})(\.[a-z0-9]{1,5})?$/.exec(req.params.file)?.[1];
    const item = id ? await deps.media.findServable(id) : null;
    const notFound = () =>
      res.status(404).set('Cache-Control', 'no-store').json({ error: 'Media not found' });
    if (!item) {
      notFound();
      return;
    }
    const size = item.sizeBytes;
    res.set({
      'Content-Type': item.mimeType,
      ETag: item.etag,
      'Cache-Control': CACHE_CONTROL,
      'Accept-Ranges': 'bytes',
      'X-Content-Type-Options': 'nosniff',
      'Content-Disposition': 'inline',
      'Last-Modified': item.createdAt.toUTCString(),
    });
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    let range: { start: number; end: number } | undefined;
    const header = req.headers.range;
    // If-Range with another validator: the client's partial copy is stale, so it gets the whole object.
    const ifRange = req.headers['if-range'];
    if (header && (!ifRange || ifRange === item.etag)) {
      const ranges = parseRange(size, header, { combine: true });
      if (ranges === -1) {
        res.status(416).set('Content-Range', `bytes */${size}`).end();
        return;
      }
      // -2 (malformed) and multiple ranges are answered with the whole object, as RFC 9110 allows.
      if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) range = ranges[0];
    }
    const length = range ? range.end - range.start + 1 : size;
    res.status(range ? 206 : 200).set('Content-Length', String(length));
    if (range) res.set('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
    if (req.method === 'HEAD' || length === 0) {
      res.end();
      return;
    }
    let body: NodeJS.ReadableStream;
    try {
      body = await deps.storage.get(item.storageKey, range);
    } catch (error) {
      if (error instanceof StorageNotFoundError) {
        res.removeHeader('Content-Range');
        res.removeHeader('Content-Length');
        res.removeHeader('Cache-Control');
        notFound();
        return;
      }
      throw error;
    }
    try {
      await pipeline(body, res);
    } catch (error) {
      // A client that goes away mid-download is normal (players seek); anything else is worth a line.
      if (!res.destroyed || (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        deps.logger.warn({ err: error, media: item.id }, 'media download ended early');
      }
    }
  });
  // The store or the database failing: a JSON 503 the fetching network can retry, never Express's HTML page.
  router.use('/media', ((error, req, res, _next) => {
    deps.logger.error({ err: error, path: req.path }, 'media serving failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res
      .status(503)
      .set({ 'Retry-After': '5', 'Cache-Control': 'no-store' })
      .json({ error: 'Media temporarily unavailable' });
  }) as ErrorRequestHandler);
  return router;
}
