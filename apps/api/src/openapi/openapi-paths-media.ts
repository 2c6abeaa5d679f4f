import { ZMediaPageQuery } from '@sps/core';
import type { TJsonSchema } from './openapi-components.js';
import type { TOperationSpec } from './openapi-operation.js';

// The media library in both variants (variant-a/media.route.ts, variant-b/media.route.ts) and the public
// serving route (media/media-serve.route.ts). tus uploads (/v1/media/uploads) follow the tus 1.0 protocol
// (HEAD and PATCH, no JSON bodies) and are described in the docs rather than here.

const MEDIA_ID = 'A media item id from upload or list.';

const upload = (altText: 'alt_text' | 'altText'): TJsonSchema => ({
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description:
        'The image (JPEG, PNG, WebP, GIF) or video (MP4, MOV, WebM); the type is read from the bytes.',
    },
    [altText]: { type: 'string', maxLength: 1000 },
  },
});

const UPLOAD_DESCRIPTION =
  'Streamed to the media store, never held whole in memory. Per-file caps and the account quota depend on the ' +
  'plan (see the docs); over either is 413, a file no network takes 415. Unfinished tus uploads hold their ' +
  'declared Upload-Length of the quota until they finish, are terminated or expire. For large files use the ' +
  'tus 1.0 endpoint `/v1/media/uploads` (resumable).';

export const MEDIA_OPERATIONS_B: readonly TOperationSpec[] = [
  {
    method: 'post',
    path: '/v1/media',
    operationId: 'uploadMediaB',
    idempotent: true,
    summary: 'Upload a media item (multipart/form-data: one `file` part, optional `alt_text`)',
    description: UPLOAD_DESCRIPTION,
    multipart: upload('alt_text'),
    success: { status: 201, description: 'The new item.', schema: 'MediaB' },
    errors: [400, 401, 413, 415, 429, 500],
  },
  {
    method: 'get',
    path: '/v1/media',
    operationId: 'listMediaB',
    summary: 'List the media items, newest first',
    query: ZMediaPageQuery,
    success: { status: 200, description: 'A page of items and the total count.', schema: 'MediaListB' },
    errors: [400, 401, 429, 500],
  },
  {
    method: 'get',
    path: '/v1/media/{id}',
    operationId: 'getMediaB',
    summary: 'Get a media item',
    pathParams: { id: MEDIA_ID },
    success: { status: 200, description: 'The item.', schema: 'MediaB' },
    errors: [401, 404, 429, 500],
  },
  {
    method: 'delete',
    path: '/v1/media/{id}',
    operationId: 'deleteMediaB',
    summary: 'Delete a media item no pending post uses',
    description:
      'A draft, scheduled, queued or publishing post using the item makes this 409 `media_in_use`.',
    pathParams: { id: MEDIA_ID },
    success: { status: 204, description: 'Deleted; its URL answers 404 from now on.' },
    errors: [401, 404, 409, 429, 500],
  },
];

export const MEDIA_OPERATIONS_A: readonly TOperationSpec[] = [
  {
    method: 'post',
    path: '/api/media',
    operationId: 'uploadMediaA',
    idempotent: true,
    summary: 'Upload a media item (multipart/form-data: one `file` part, optional `altText`)',
    description: UPLOAD_DESCRIPTION,
    multipart: upload('altText'),
    success: { status: 201, description: 'The new item.', schema: 'MediaEnvelopeA' },
    errors: [400, 401, 413, 415, 429, 500],
  },
  {
    method: 'get',
    path: '/api/media',
    operationId: 'listMediaA',
    summary: 'List the media items, newest first',
    query: ZMediaPageQuery,
    success: { status: 200, description: 'A page of items.', schema: 'MediaListA' },
    errors: [400, 401, 429, 500],
  },
  {
    method: 'get',
    path: '/api/media/{id}',
    operationId: 'getMediaA',
    summary: 'Get a media item',
    pathParams: { id: MEDIA_ID },
    success: { status: 200, description: 'The item.', schema: 'MediaEnvelopeA' },
    errors: [401, 404, 429, 500],
  },
  {
    method: 'delete',
    path: '/api/media/{id}',
    operationId: 'deleteMediaA',
    summary: 'Delete a media item no pending post uses',
    pathParams: { id: MEDIA_ID },
    success: { status: 200, description: 'Deleted.', schema: 'SuccessA' },
    errors: [401, 404, 409, 429, 500],
  },
];

export const MEDIA_OPERATIONS_PUBLIC: readonly TOperationSpec[] = [
  {
    method: 'get',
    path: '/media/{file}',
    operationId: 'serveMedia',
    summary: "A media item's bytes (`<id>` or `<id>.<ext>`), to anyone holding the URL",
    description:
      'One byte range per request (`Range`: 206, or 416 outside the object), `ETag` (304 on `If-None-Match`), ' +
      '`Cache-Control: public, max-age=31536000, immutable`. 404 for unknown or deleted items.',
    pathParams: { file: "The last part of the item's `url`." },
    success: {
      status: 200,
      description: "The bytes, with the item's Content-Type.",
      mediaType: 'application/octet-stream',
    },
    errors: [],
  },
];
