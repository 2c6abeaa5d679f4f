import type { Request, Response, Router } from 'express';

/**
 * Mastodon's media API as a server holds it: `POST /api/v2/media` answers 200 for images (processed in
 * the request since 4.0) and 202 for video, gifv and audio (processed in the background); `GET
 * /api/v1/media/:id` answers 206 while processing and 200 once done. A status may only attach processed
 * media. https://docs.joinmastodon.org/methods/media/
 */

/** What `GET /api/v2/instance` announces; a test may change it through the simulator's control route. */
export interface TSimMastodonConfig {
  maxCharacters: number;
  maxMediaAttachments: number;
  supportedMimeTypes: string[];
  imageSizeLimit: number;
  videoSizeLimit: number;
  descriptionLimit: number;
}

export const defaultMastodonConfig = (): TSimMastodonConfig => ({
  maxCharacters: 500,
  maxMediaAttachments: 4,
  supportedMimeTypes: [
    'image/jpeg',
    'image/png',
    'image/gif',
    'image/heic',
    'image/heif',
    'image/webp',
    'image/avif',
    'video/webm',
    'video/mp4',
    'video/quicktime',
    'video/ogg',
    'audio/wave',
    'audio/mpeg',
    'audio/ogg',
  ],
  imageSizeLimit: 16_777_216,
  videoSizeLimit: 103_809_024,
  descriptionLimit: 1500,
});

export interface TSimMastodonMedia {
  id: string;
  type: 'image' | 'video';
  mimeType: string;
  description: string | null;
  /** Checks answered 206 before the media counts as processed (video: one). */
  pendingChecks: number;
  failed: boolean;
  attachedTo: string | null;
}

/** Bytes that make the simulated processing fail, as a server fails an undecodable file. */
export const MASTODON_FAIL_PROCESSING_MARKER = 'fail-processing';

interface TPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

/** A small multipart/form-data reader: enough for the simulator's one file and a few fields. */
function parseMultipart(req: Request): TPart[] | null {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(req.headers['content-type'] ?? '');
  const raw = Buffer.isBuffer(req.body) ? req.body : null;
  if (!boundary || !raw) return null;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: TPart[] = [];
  let start = raw.indexOf(delimiter);
  while (start !== -1 && parts.length < 20) {
    const headerStart = start + delimiter.length + 2;
    const next = raw.indexOf(delimiter, headerStart);
    if (next === -1) break;
    const headerEnd = raw.indexOf('\r\n\r\n', headerStart);
    if (headerEnd === -1 || headerEnd > next) break;
    const headers = raw.subarray(headerStart, headerEnd).toString('utf8');
    const name = /name="([^"]*)"/i.exec(headers)?.[1] ?? '';
    parts.push({
      name,
      filename: /filename="([^"]*)"/i.exec(headers)?.[1] ?? null,
      contentType: /content-type:\s*([^\r\n;]+)/i.exec(headers)?.[1]?.trim().toLowerCase() ?? null,
      data: raw.subarray(headerEnd + 4, next - 2),
    });
    start = next;
  }
  return parts;
}

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

export function registerMastodonMedia(
  router: Router,
  guard: (req: Request, res: Response) => boolean,
  config: () => TSimMastodonConfig,
  nextId: () => string,
  /** Each file received whole: its size and sha256 (SimState.recordUpload). */
  received: (name: string, bytes: Buffer) => void = () => undefined,
): Map<string, TSimMastodonMedia> {
  const media = new Map<string, TSimMastodonMedia>();
  const render = (req: Request, item: TSimMastodonMedia, processed: boolean) => {
    const origin = `${req.protocol}://${req.get('host')}${req.baseUrl}`;
    return {
      id: item.id,
      type: item.type,
      url: processed ? `${origin}/system/media/${item.id}/original` : null,
      preview_url: `${origin}/system/media/${item.id}/small`,
      remote_url: null,
      description: item.description,
      blurhash: null,
    };
  };

  router.post('/api/v2/media', (req, res) => {
    if (!guard(req, res)) return;
    const parts = req.is('multipart/form-data') ? parseMultipart(req) : null;
    const file = parts?.find((p) => p.name === 'file' && p.filename !== null);
    if (!file) {
      res.status(422).json({ error: "Validation failed: File can't be blank" });
      return;
    }
    const cfg = config();
    const mimeType = file.contentType ?? '';
    if (!cfg.supportedMimeTypes.includes(mimeType)) {
      res.status(422).json({ error: 'Validation failed: File content type is invalid, File is invalid' });
      return;
    }
    const type = mimeType.startsWith('image/') && mimeType !== 'image/gif' ? 'image' : 'video';
    const limit = type === 'image' ? cfg.imageSizeLimit : cfg.videoSizeLimit;
    if (file.data.length > limit) {
      res.status(422).json({ error: `Validation failed: File file size must be less than ${mb(limit)}` });
      return;
    }
    const description = parts?.find((p) => p.name === 'description')?.data.toString('utf8') ?? null;
    if (description !== null && description.length > cfg.descriptionLimit) {
      res.status(422).json({
        error: `Validation failed: Description is too long (maximum is ${cfg.descriptionLimit} characters)`,
      });
      return;
    }
    const item: TSimMastodonMedia = {
      id: nextId(),
      type,
      mimeType,
      description,
      pendingChecks: type === 'video' ? 1 : 0,
      failed: file.data.includes(MASTODON_FAIL_PROCESSING_MARKER),
      attachedTo: null,
    };
    media.set(item.id, item);
    received(file.filename ?? 'file', file.data);
    // Images are processed in the request; video (and GIFs, which become gifv video) in the background.
    const processed = item.pendingChecks === 0 && !item.failed;
    res.status(processed ? 200 : 202).json(render(req, item, processed));
  });

  router.get('/api/v1/media/:id', (req, res) => {
    if (!guard(req, res)) return;
    const item = media.get(req.params.id as string);
    if (!item) {
      res.status(404).json({ error: 'Record not found' });
      return;
    }
    if (item.failed) {
      res.status(422).json({ error: 'Validation failed: File content type is invalid, File is invalid' });
      return;
    }
    if (item.pendingChecks > 0) {
      item.pendingChecks -= 1;
      res.status(206).end();
      return;
    }
    res.json(render(req, item, true));
  });

  return media;
}

/**
 * Why a status may not attach these ids, or null (PostStatusService#validate_media!): each must exist
 * unattached, be processed, stay within the server's count, and a video goes alone.
 */
export function attachProblem(
  media: Map<string, TSimMastodonMedia>,
  ids: readonly unknown[],
  max: number,
): string | null {
  if (ids.length > max) return `Cannot attach more than ${max} files`;
  const items = ids.map((id) => (typeof id === 'string' ? media.get(id) : undefined));
  const missing = ids.filter((_id, i) => !items[i] || items[i]?.attachedTo !== null);
  if (missing.length > 0) {
    return `Media with IDs ${missing.map(String).join(', ')} were not found or already attached to another post`;
  }
  if (items.length > 1 && items.some((m) => m?.type === 'video')) {
    return 'Cannot attach a video to a post that already contains images';
  }
  if (items.some((m) => m?.failed || (m?.pendingChecks ?? 0) > 0)) {
    return 'Cannot attach files that have not finished processing. Try again in a moment!';
  }
  return null;
}
