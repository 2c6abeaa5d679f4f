import { Readable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AppError, MAX_ALT_TEXT, mediaViewB, parseMediaPage } from '@sps/core';
import { openMediaDownload, type TDownloadPolicy } from '@sps/safe-fetch';
import { z } from 'zod';
import type { TAuth } from '../http/auth.js';
import type { TMediaService } from '../media/media-service.js';
import { run } from './tool-result.js';

export interface TMediaToolDeps {
  auth: TAuth;
  media: TMediaService;
  publicUrl: string;
  /** Address policy and time bound of downloads from a URL (the publisher's, MEDIA_ALLOW_PRIVATE_URLS). */
  download: TDownloadPolicy;
}

const TYPES =
  "Accepted: JPEG, PNG, WebP, GIF images and MP4, MOV, WebM videos, recognised from the bytes (the name or the server's Content-Type do not count). Anything else is refused (unsupported_media_type). Per file: 50 MB for an image; videos 512 MB (free), 1 GB (starter), 4 GB (pro); the account's items together: 2 GB (free), 25 GB (starter), 250 GB (pro).";

const ZMediaId = z.string().describe('The media item id returned by upload_media or list_media.');

export function registerMediaTools(server: McpServer, deps: TMediaToolDeps): void {
  const { media, publicUrl } = deps;
  const { accountId, plan } = deps.auth;

  server.registerTool(
    'upload_media',
    {
      title: 'Upload media to the library',
      description: `Adds an image or video to this account's media library, from a public URL (downloaded by the service: https or http, public addresses only, at most 3 redirects) or from base64 content (small files: the whole MCP message is bounded). Give exactly one of url and content_base64. The answer's "url" can be used as a media URL in posts (media.images[].url, media.video.url, segments[].media_urls) and stays valid until the item is deleted. ${TYPES}`,
      inputSchema: {
        url: z.string().max(2048).optional().describe('A public http(s) URL of the file.'),
        content_base64: z.string().optional().describe('The file itself, base64-encoded.'),
        alt_text: z
          .string()
          .max(MAX_ALT_TEXT)
          .optional()
          .describe('Alternative text for screen readers (at most 1000 characters).'),
      },
    },
    (args) =>
      run(async () => {
        const given = [args.url, args.content_base64].filter((v) => v !== undefined);
        if (given.length !== 1) {
          throw new AppError('validation_error', 'Give exactly one of url and content_base64', {
            issues: [{ field: 'url', message: 'give exactly one of url and content_base64' }],
            fix: 'Send {"url": "https://..."} or {"content_base64": "..."}.',
          });
        }
        let body: Readable;
        if (args.url !== undefined) {
          try {
            body = (await openMediaDownload(args.url, deps.download)).stream;
          } catch (error) {
            throw new AppError('validation_error', (error as Error).message, {
              issues: [{ field: 'url', message: 'could not be downloaded' }],
              fix: 'Give a URL the service can download from the public internet, or send the file as content_base64.',
            });
          }
        } else {
          const bytes = Buffer.from(args.content_base64 ?? '', 'base64');
          body = Readable.from([bytes]);
        }
        const stored = await media.store(accountId, plan, body).catch((error: unknown) => {
          // A download that breaks off half-way is the URL's problem, not the service's.
          if (error instanceof AppError || args.url === undefined) throw error;
          throw new AppError('validation_error', `The download of ${args.url.slice(0, 200)} broke off`, {
            issues: [{ field: 'url', message: 'could not be downloaded whole' }],
            fix: 'Retry, or send the file as content_base64.',
          });
        });
        const alt = args.alt_text && args.alt_text.trim() !== '' ? args.alt_text : null;
        return mediaViewB(publicUrl, await media.record(stored, alt));
      }),
  );

  server.registerTool(
    'list_media',
    {
      title: 'List media',
      description:
        'The media library of this account, newest first, with total: id, url, type (image, gif, video), mime_type, size_bytes, width, height, duration_s, alt_text, created_at.',
      inputSchema: {
        limit: z.number().int().min(1).max(100).optional().describe('Items per page, 1-100 (default 20).'),
        offset: z.number().int().min(0).optional().describe('Items to skip (default 0).'),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      run(async () => {
        const page = parseMediaPage(args);
        const { items, total } = await media.list(accountId, page);
        return {
          media: items.map((item) => mediaViewB(publicUrl, item)),
          total,
          limit: page.limit,
          offset: page.offset,
        };
      }),
  );

  server.registerTool(
    'delete_media',
    {
      title: 'Delete media',
      description:
        'Deletes a media item and its bytes; its URL stops working. Refused (media_in_use, naming the posts) while a draft, scheduled, queued or publishing post uses it: remove it from those posts first.',
      inputSchema: { id: ZMediaId },
      annotations: { destructiveHint: true },
    },
    (args) =>
      run(async () => {
        await media.remove(accountId, args.id);
        return { deleted: true, id: args.id };
      }),
  );
}
