import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { type RequestHandler, Router } from 'express';
import { openApiDocument } from './openapi-document.js';

/** swagger-ui-dist's folder of static assets (resolved through its package.json, never loaded as code). */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files of swagger-ui-dist served under /docs. */
const ASSETS = new Set([
  '/swagger-ui.css',
  '/index.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui-standalone-preset.js',
  '/favicon-32x32.png',
  '/favicon-16x16.png',
]);

// Served as a file, not inline, so the page's Content-Security-Policy can forbid inline scripts.
// `validatorUrl: null`: Swagger UI would otherwise send the document to an external validator.
const INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
};
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>Social post publishing service: API</title>
    <link rel="stylesheet" type="text/css" href="/docs/swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="/docs/index.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="/docs/swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

/** Everything from this origin only; Swagger UI sets inline styles and uses data: images. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const docsAssets = (): RequestHandler => {
  const files = express.static(SWAGGER_UI_DIR, { index: false, redirect: false, fallthrough: true });
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path === '/swagger-initializer.js') {
      res.type('text/javascript').send(INITIALIZER);
      return;
    }
    if (!ASSETS.has(req.path)) return next();
    files(req, res, next);
  };
};

/** `GET /openapi.json` (the document) and `GET /docs` (Swagger UI from swagger-ui-dist, no CDN); no API key. */
export function openApiRouter(): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });
  router.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.type('html').send(PAGE);
  });
  router.use('/docs', docsAssets());
  return router;
}
