import type { Request, Response, Router } from 'express';
import { findLinks } from './links.sim.js';
import { fileOf, readForm } from './multipart.sim.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

/** Slack answers most failures with HTTP 200 and `{ ok: false, error }`. */
function slackError(res: Response, error: string, status = 200): void {
  res.status(status).json({ ok: false, error });
}

const renderSlackError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      slackError(res, 'token_expired');
      return;
    case 'rate_limited':
      res.set('Retry-After', String(fault.retryAfterSeconds ?? 1));
      slackError(res, 'ratelimited', 429);
      return;
    case 'rejected':
      slackError(res, 'invalid_blocks');
      return;
    default:
      slackError(res, 'service_unavailable', 503);
  }
};

/** Slack takes arguments as JSON, as a form, or in the query string. */
function args(req: Request): Record<string, unknown> {
  const body = req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : {};
  return { ...req.query, ...body };
}

function hasToken(req: Request): boolean {
  const header = req.headers.authorization ?? '';
  if (header.startsWith('Bearer ') && header.length > 7) return true;
  const token = args(req).token;
  return typeof token === 'string' && token.length > 0;
}

const SIM_WORKSPACE = 'https://sps-sim.slack.com';
/** The bot every simulated token speaks for (`auth.test` answers the same ids). */
const SIM_BOT = { user: 'U0SIMBOT', bot: 'B0SIM' };
/**
 * Slack stores a message with its links marked up: `<https://…>` for a link typed with its scheme,
 * `<http://example.com|example.com>` for one typed without (the label is what was typed); history and
 * replies give that text back. https://docs.slack.dev/messaging/formatting-message-text
 */
function markLinks(text: string): string {
  let out = '';
  let cursor = 0;
  for (const link of findLinks(text)) {
    out += text.slice(cursor, link.start);
    out += link.target === link.typed ? `<${link.target}>` : `<${link.target}|${link.typed}>`;
    cursor = link.end;
  }
  return out + text.slice(cursor);
}

/** chat.postMessage truncates beyond this; the simulator refuses instead, so a test notices. */
const TEXT_MAX = 40_000;

interface TFile {
  id: string;
  name: string;
  length: number;
  alt?: string;
  bytes?: number;
  type?: string;
  /**
   * Where it was shared, once completed; the share shows in files.info only from the second check, and not
   * before the processing time set through `PUT /__sim/processing/slack` has run since the completion. The
   * message itself is in conversations.history (or .replies) from the completion on, its `files[].id`
   * naming the file, so a long processing time stands for a share files.info never shows.
   */
  share?: { channel: string; ts: string; checks: number; at: number };
}

/** A JSON array given as an array or as a JSON string (form-encoded calls). */
function listOf(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return null;
  try {
    const parsed = JSON.parse(value) as unknown;
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Slack Web API: `chat.postMessage` (channel, text, blocks, thread_ts), `chat.getPermalink`,
 * `chat.delete`, and the file flow `files.getUploadURLExternal` → POST to the upload URL →
 * `files.completeUploadExternal` → `files.info` (shares appear asynchronously) → `files.delete`.
 * Channel ids must look like Slack's (`C…`, `G…` or `D…`); others answer `channel_not_found`.
 */
export function registerSlackSim(router: Router, sim: SimState): void {
  const channelOf = new Map<string, string>();
  const files = new Map<string, TFile>();
  /** Top-level messages, the only valid `thread_ts` values. */
  const parents = new Set<string>();
  let lastSecond = 0;
  let sequence = 0;

  /** Message timestamps are unique per channel: epoch seconds plus a six-digit sequence. */
  function nextTs(): string {
    const now = Math.floor(Date.now() / 1000);
    sequence = now === lastSecond ? sequence + 1 : 1;
    lastSecond = now;
    return `${now}.${String(sequence).padStart(6, '0')}`;
  }

  router.use(networkMiddleware(sim, 'slack', renderSlackError));

  // The upload host needs no token: the URL is the credential. Raw bytes or multipart are both taken.
  router.post('/__upload/:fileId', async (req, res) => {
    const file = files.get(req.params.fileId);
    if (!file || file.bytes !== undefined) {
      res.status(404).type('text/plain').send('Not Found');
      return;
    }
    const form = await readForm(req);
    const part = form ? await fileOf(form.get('file') ?? form.get('filename')) : null;
    const bytes = part ? part.bytes : Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (bytes.length !== file.length) {
      // Modeled: the declared `length` must match what arrives.
      res.status(400).type('text/plain').send(`Expected ${file.length} bytes, got ${bytes.length}`);
      return;
    }
    file.bytes = bytes.length;
    sim.recordUpload('slack', file.name, bytes);
    file.type = part?.type ?? String(req.headers['content-type'] ?? 'application/octet-stream');
    res.status(200).type('text/plain').send(`OK - ${bytes.length}`);
  });

  router.use((req, res, next) => {
    if (hasToken(req)) return next();
    slackError(res, 'not_authed');
  });

  router.post('/chat.postMessage', (req, res) => {
    const { channel, text, blocks, thread_ts: threadTs } = args(req);
    if (typeof channel !== 'string' || !/^[CGD][A-Z0-9]+$/.test(channel)) {
      slackError(res, 'channel_not_found');
      return;
    }
    if ((typeof text !== 'string' || text === '') && !Array.isArray(blocks)) {
      slackError(res, 'no_text');
      return;
    }
    if (typeof text === 'string' && Array.from(text).length > TEXT_MAX) {
      slackError(res, 'msg_too_long');
      return;
    }
    if (
      threadTs !== undefined &&
      (typeof threadTs !== 'string' || !parents.has(threadTs) || channelOf.get(threadTs) !== channel)
    ) {
      slackError(res, 'thread_not_found');
      return;
    }
    const ts = nextTs();
    channelOf.set(ts, channel);
    if (!threadTs) parents.add(ts);
    sim.addPost({
      platform: 'slack',
      remoteId: ts,
      text: typeof text === 'string' ? markLinks(text) : '',
      replyTo: typeof threadTs === 'string' ? threadTs : null,
      media: Array.isArray(blocks) ? blocks : null,
      idempotencyKey: null,
      author: channel,
    });
    answerOrHang(res, () =>
      res.json({
        ok: true,
        channel,
        ts,
        message: {
          type: 'message',
          text: typeof text === 'string' ? markLinks(text) : text,
          ts,
          user: SIM_BOT.user,
          bot_id: SIM_BOT.bot,
          blocks,
        },
      }),
    );
  });

  router.post('/files.getUploadURLExternal', (req, res) => {
    const { filename, length, alt_txt: alt } = args(req);
    const bytes = Number(length);
    if (typeof filename !== 'string' || filename === '' || !Number.isInteger(bytes) || bytes <= 0) {
      slackError(res, 'missing_argument');
      return;
    }
    if (typeof alt === 'string' && Array.from(alt).length > 1000) {
      slackError(res, 'alt_txt_too_large');
      return;
    }
    const id = `F${sim.nextNumericId()}`;
    files.set(id, { id, name: filename, length: bytes, ...(typeof alt === 'string' ? { alt } : {}) });
    const base = `${req.protocol}://${req.get('host')}${req.baseUrl}`;
    res.json({ ok: true, upload_url: `${base}/__upload/${id}`, file_id: id });
  });

  router.post('/files.completeUploadExternal', (req, res) => {
    const { files: list, channel_id: channel, initial_comment: comment, thread_ts: threadTs } = args(req);
    const entries = listOf(list);
    if (!entries || entries.length === 0) {
      slackError(res, 'invalid_arguments');
      return;
    }
    const chosen = entries.map((e) => files.get(String((e as { id?: unknown }).id ?? '')));
    if (chosen.some((f) => !f || f.bytes === undefined || f.share)) {
      // Unknown, never uploaded, or already completed.
      slackError(res, 'file_not_found');
      return;
    }
    if (typeof channel !== 'string' || !/^[CGD][A-Z0-9]+$/.test(channel)) {
      slackError(res, 'channel_not_found');
      return;
    }
    if (typeof comment === 'string' && Array.from(comment).length > TEXT_MAX) {
      slackError(res, 'msg_too_long');
      return;
    }
    if (threadTs !== undefined && (typeof threadTs !== 'string' || !parents.has(threadTs))) {
      slackError(res, 'thread_not_found');
      return;
    }
    const ts = nextTs();
    channelOf.set(ts, channel);
    if (!threadTs) parents.add(ts);
    const shared = chosen.filter((f): f is TFile => Boolean(f));
    for (const file of shared) file.share = { channel, ts, checks: 0, at: Date.now() };
    sim.addPost({
      platform: 'slack',
      remoteId: ts,
      text: typeof comment === 'string' ? markLinks(comment) : '',
      replyTo: typeof threadTs === 'string' ? threadTs : null,
      media: shared.map((f) => ({
        id: f.id,
        name: f.name,
        type: f.type,
        bytes: f.bytes,
        ...(f.alt ? { alt: f.alt } : {}),
      })),
      idempotencyKey: null,
      author: channel,
    });
    // Sharing finishes later: the answer carries the files without their shares.
    answerOrHang(res, () => res.json({ ok: true, files: shared.map((f) => ({ id: f.id, title: f.name })) }));
  });

  /**
   * `conversations.history` (a channel's top-level messages, newest first) and `conversations.replies`
   * (a thread: its parent, then the replies, oldest first): `oldest`/`latest` bound the `ts`, `inclusive`,
   * `limit` (100 by default, at most 999) and `cursor` paging. Reading needs channels:history (or
   * groups:history for private channels); a token containing "nohistory" stands for a bot without it.
   * https://docs.slack.dev/reference/methods/conversations.history
   * https://docs.slack.dev/reference/methods/conversations.replies
   */
  for (const method of ['conversations.history', 'conversations.replies'] as const) {
    router.all(`/${method}`, (req, res) => {
      const a = args(req);
      const token = req.headers.authorization?.slice(7) ?? String(a.token ?? '');
      if (token.includes('nohistory')) {
        res.json({
          ok: false,
          error: 'missing_scope',
          needed: 'channels:history,groups:history,mpim:history,im:history',
          provided: 'chat:write,files:write,channels:read',
        });
        return;
      }
      const channel = typeof a.channel === 'string' ? a.channel : '';
      if (!/^[CGD][A-Z0-9]+$/.test(channel)) {
        slackError(res, 'channel_not_found');
        return;
      }
      const parent = method === 'conversations.replies' ? String(a.ts ?? '') : null;
      if (parent !== null && !parents.has(parent)) {
        slackError(res, 'thread_not_found');
        return;
      }
      const inclusive = a.inclusive === true || a.inclusive === 'true' || a.inclusive === '1';
      const oldest = a.oldest === undefined ? undefined : Number(a.oldest);
      const latest = a.latest === undefined ? undefined : Number(a.latest);
      const inRange = (ts: string) => {
        const t = Number(ts);
        const above = oldest === undefined || (inclusive ? t >= oldest : t > oldest);
        const below = latest === undefined || (inclusive ? t <= latest : t < latest);
        return above && below;
      };
      const limit = Math.min(999, Math.max(1, Number(a.limit ?? 100) || 100));
      const offset =
        typeof a.cursor === 'string' && a.cursor ? Number(Buffer.from(a.cursor, 'base64url').toString()) : 0;
      const all = sim
        .timelineOf('slack', channel)
        .filter((p) => (parent === null ? p.replyTo === null : p.remoteId === parent || p.replyTo === parent))
        .filter((p) => inRange(p.remoteId));
      if (parent !== null) all.reverse();
      const page = all.slice(offset, offset + limit);
      const more = offset + limit < all.length;
      res.json({
        ok: true,
        messages: page.map((p) => ({
          type: 'message',
          text: p.text,
          ts: p.remoteId,
          user: SIM_BOT.user,
          bot_id: SIM_BOT.bot,
          ...(p.replyTo ? { thread_ts: p.replyTo, parent_user_id: SIM_BOT.user } : {}),
          ...(Array.isArray(p.media) && p.media.every((m) => typeof (m as { id?: unknown }).id === 'string')
            ? { files: (p.media as { id: string; name: string }[]).map((f) => ({ id: f.id, name: f.name })) }
            : {}),
        })),
        has_more: more,
        ...(method === 'conversations.history' ? { pin_count: 0 } : {}),
        response_metadata: {
          next_cursor: more ? Buffer.from(String(offset + limit)).toString('base64url') : '',
        },
      });
    });
  }

  router.all('/files.info', (req, res) => {
    const file = files.get(String(args(req).file ?? ''));
    if (!file) {
      slackError(res, 'file_not_found');
      return;
    }
    const share = file.share;
    const visible = share && share.checks++ >= 1 && sim.processed('slack', share.at);
    const kind = share?.channel.startsWith('C') ? 'public' : 'private';
    res.json({
      ok: true,
      file: {
        id: file.id,
        name: file.name,
        size: file.bytes,
        mimetype: file.type,
        shares: visible && share ? { [kind]: { [share.channel]: [{ ts: share.ts, reply_count: 0 }] } } : {},
      },
    });
  });

  router.post('/files.delete', (req, res) => {
    const id = String(args(req).file ?? '');
    if (!files.delete(id)) {
      slackError(res, 'file_not_found');
      return;
    }
    res.json({ ok: true });
  });

  router.all('/chat.getPermalink', (req, res) => {
    const { channel, message_ts: ts } = args(req);
    if (typeof ts !== 'string' || typeof channel !== 'string' || channelOf.get(ts) !== channel) {
      slackError(res, 'message_not_found');
      return;
    }
    res.json({
      ok: true,
      channel,
      permalink: `${SIM_WORKSPACE}/archives/${channel}/p${ts.replace('.', '')}`,
    });
  });

  router.post('/chat.delete', (req, res) => {
    const { channel, ts } = args(req);
    const post = typeof ts === 'string' ? sim.getPost('slack', ts) : undefined;
    if (!post || post.deleted || channelOf.get(post.remoteId) !== channel) {
      slackError(res, 'message_not_found');
      return;
    }
    post.deleted = true;
    res.json({ ok: true, channel, ts });
  });
}
