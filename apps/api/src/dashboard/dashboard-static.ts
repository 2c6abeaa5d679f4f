import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, Router } from 'express';

// apps/dashboard/dist, built by `npm run build`; the same relative path from apps/api/src and apps/api/dist.
const DIST = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

// The page talks only to this origin; media previews may show https images from anywhere, and the composer's
// thumbnails of files being uploaded are `blob:` URLs of the local files.
const CSP = [
  "default-src 'self'",
  "img-src 'self' https: data: blob:",
  "media-src 'self' https: blob:",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const headers: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Frame-Options', 'DENY');
  next();
};

/** The owners' web app at /dashboard (hash routes, so index.html and its assets are all there is). */
export function dashboardStatic(): Router {
  const router = Router();
  router.use(headers);
  if (!existsSync(`${DIST}index.html`)) {
    router.use((_req, res) => {
      res.status(503).type('text/plain').send('The dashboard is not built: run `npm run build`.');
    });
    return router;
  }
  router.use(express.static(DIST, { index: 'index.html', maxAge: '1h', redirect: true }));
  return router;
}
