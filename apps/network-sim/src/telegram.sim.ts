import { createHash } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { fileOf, readForm } from './multipart.sim.js';
import { oauthStoreOf } from './oauth/oauth-store.js';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

// Telegram Bot API as documented 2026-11-24 (https://core.telegram.org/bots/api; cited in
// telegram.connector.ts). Lengths in UTF-16 code units.
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
const FILE_MAX_BYTES = 50 * 1024 * 1024;

type TFilePart = { name: string; type: string; bytes: Buffer };

/** JSON, form, or multipart: fields (JSON-looking ones parsed) and the uploaded parts by field name. */
async function readCall(
  req: Request,
): Promise<{ body: Record<string, unknown>; files: Map<string, TFilePart> }> {
  const form = await readForm(req);
  const files = new Map<string, TFilePart>();
  if (!form) return { body: (req.body ?? {}) as Record<string, unknown>, files };
  const body: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    if (typeof value === 'string') {
      body[key] = /^[[{]/.test(value) ? safeJson(value) : value;
    } else {
      const file = await fileOf(value);
      if (file) files.set(key, file);
    }
  }
  return { body, files };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A file given as an upload (the part itself, or `attach://name`), or as a URL / file_id string. */
function mediaOf(value: unknown, field: string, files: Map<string, TFilePart>): TFilePart | string | null {
  const direct = files.get(field);
  if (direct) return direct;
  if (typeof value !== 'string' || value === '') return null;
  if (value.startsWith('attach://')) return files.get(value.slice('attach://'.length)) ?? null;
  return value;
}

function describe(media: TFilePart | string): unknown {
  // The digest lets tests check that the bytes which arrived are the bytes that were uploaded.
  return typeof media === 'string'
    ? media
    : {
        bytes: media.bytes.length,
        type: media.type,
        sha256: createHash('sha256').update(media.bytes).digest('hex'),
      };
}

function tooBig(media: TFilePart | string, kind: string): boolean {
  return (
    typeof media !== 'string' && media.bytes.length > (kind === 'photo' ? PHOTO_MAX_BYTES : FILE_MAX_BYTES)
  );
}

/** Bot API errors: `{ ok: false, error_code, description, parameters? }`, HTTP status = error_code. */
function botError(
  res: Response,
  code: number,
  description: string,
  parameters?: Record<string, number>,
): void {
  res.status(code).json({ ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });
}

const renderTelegramError: TErrorRenderer = (res, fault) => {
  switch (fault.kind) {
    case 'auth_expired':
      botError(res, 401, 'Unauthorized');
      return;
    case 'rate_limited': {
      // Like the real Bot API, the wait is only in the body (no Retry-After header).
      const seconds = fault.retryAfterSeconds ?? 1;
      botError(res, 429, `Too Many Requests: retry after ${seconds}`, { retry_after: seconds });
      return;
    }
    case 'rejected':
      botError(res, 400, 'Bad Request: chat not found');
      return;
    default:
      botError(res, 500, 'Internal Server Error');
  }
};

interface TChat {
  id: number;
  type: string;
  username?: string;
  title?: string;
}

/**
 * `@name` chat ids are public channels with that username; `-100…` ids are private supergroups or
 * channels; other numbers are private chats with a user.
 */
function chatOf(chatId: unknown, ids: Map<string, number>): TChat | undefined {
  const raw = typeof chatId === 'number' ? String(chatId) : typeof chatId === 'string' ? chatId : '';
  if (raw.startsWith('@') && raw.length > 1) {
    const username = raw.slice(1);
    const id = ids.get(username) ?? -1001000000000 - ids.size;
    ids.set(username, id);
    return { id, type: 'channel', username, title: username };
  }
  if (!/^-?\d+$/.test(raw)) return undefined;
  const id = Number(raw);
  return raw.startsWith('-100') ? { id, type: 'supergroup', title: 'Sim group' } : { id, type: 'private' };
}

type TMediaItem = { type?: string; media?: string; caption?: string };

/**
 * Telegram Bot API under `/bot<token>/<method>`: sendMessage, sendPhoto, sendVideo, sendMediaGroup,
 * deleteMessage and deleteMessages. Message ids count up across all chats.
 */
export function registerTelegramSim(router: Router, sim: SimState): void {
  const usernames = new Map<string, number>();
  const chatOfMessage = new Map<string, number>();
  /** When each message was sent (ms, on the simulated clock tests can move: /__sim/oauth/advance). */
  const sentAtOf = new Map<string, number>();
  const now = () => oauthStoreOf(sim).now();
  let nextMessageId = 100;

  router.use(networkMiddleware(sim, 'telegram', renderTelegramError));

  function post(
    req: Request,
    res: Response,
    chat: TChat,
    parts: { text: string; media: unknown; replyTo: string | null }[],
  ): void {
    const messages = parts.map(({ text, media, replyTo }) => {
      nextMessageId += 1;
      const id = String(nextMessageId);
      chatOfMessage.set(id, chat.id);
      sentAtOf.set(id, now());
      sim.addPost({ platform: 'telegram', remoteId: id, text, replyTo, media, idempotencyKey: null });
      return {
        message_id: nextMessageId,
        date: Math.floor(now() / 1000),
        chat,
        ...(text ? { text } : {}),
      };
    });
    const result = req.params.method === 'sendMediaGroup' ? messages : messages[0];
    answerOrHang(res, () => res.json({ ok: true, result }));
  }

  function remove(chat: TChat, ids: unknown[]): boolean {
    const posts = ids.map((id) => sim.getPost('telegram', String(id)));
    const found = posts.filter((p) => p && !p.deleted && chatOfMessage.get(p.remoteId) === chat.id);
    for (const p of found) if (p) p.deleted = true;
    return found.length > 0;
  }

  /** Returns whatever the branch answered, so each branch can end with `return`. */
  async function dispatch(req: Request<{ bot: string; method: string }>, res: Response): Promise<unknown> {
    const { bot, method } = req.params;
    if (!bot.startsWith('bot') || !/^\d+:[\w-]+$/.test(bot.slice(3))) {
      botError(res, 401, 'Unauthorized');
      return;
    }
    const { body, files } = await readCall(req);
    const chat = chatOf(body.chat_id, usernames);
    if (!chat) {
      botError(res, 400, 'Bad Request: chat not found');
      return;
    }
    const caption = typeof body.caption === 'string' ? body.caption : '';
    if (caption.length > 1024) {
      botError(res, 400, 'Bad Request: message caption is too long');
      return;
    }
    switch (method) {
      case 'sendMessage': {
        const text = typeof body.text === 'string' ? body.text : '';
        if (!text) return botError(res, 400, 'Bad Request: message text is empty');
        if (text.length > 4096) return botError(res, 400, 'Bad Request: message is too long');
        const reply = body.reply_parameters as
          | { message_id?: unknown; allow_sending_without_reply?: boolean }
          | undefined;
        const replyTo = reply?.message_id === undefined ? null : String(reply.message_id);
        if (replyTo && chatOfMessage.get(replyTo) !== chat.id && !reply?.allow_sending_without_reply) {
          return botError(res, 400, 'Bad Request: message to be replied not found');
        }
        return post(req, res, chat, [{ text, media: body.link_preview_options ?? null, replyTo }]);
      }
      case 'sendPhoto':
      case 'sendVideo': {
        const field = method === 'sendPhoto' ? 'photo' : 'video';
        const media = mediaOf(body[field], field, files);
        if (!media) return botError(res, 400, `Bad Request: there is no ${field} in the request`);
        if (tooBig(media, field)) return botError(res, 400, 'Bad Request: file is too big');
        return post(req, res, chat, [{ text: caption, media: { [field]: describe(media) }, replyTo: null }]);
      }
      case 'sendMediaGroup': {
        const items = Array.isArray(body.media) ? (body.media as TMediaItem[]) : [];
        if (items.length < 2 || items.length > 10) {
          return botError(res, 400, 'Bad Request: wrong number of messages in the media group');
        }
        const parts: { text: string; media: unknown; replyTo: null }[] = [];
        for (const item of items) {
          if ((item.caption ?? '').length > 1024)
            return botError(res, 400, 'Bad Request: message caption is too long');
          const kind = item.type === 'video' ? 'video' : 'photo';
          const media = mediaOf(item.media, '', files);
          if (!media) return botError(res, 400, 'Bad Request: wrong file identifier/HTTP URL specified');
          if (tooBig(media, kind)) return botError(res, 400, 'Bad Request: file is too big');
          parts.push({ text: item.caption ?? '', media: { [kind]: describe(media) }, replyTo: null });
        }
        return post(req, res, chat, parts);
      }
      case 'deleteMessage':
        // "A message can only be deleted if it was sent less than 48 hours ago." (#deletemessage)
        if ((sentAtOf.get(String(body.message_id)) ?? now()) <= now() - 48 * 3_600_000)
          return botError(res, 400, "Bad Request: message can't be deleted");
        if (!remove(chat, [body.message_id]))
          return botError(res, 400, 'Bad Request: message to delete not found');
        return res.json({ ok: true, result: true });
      case 'deleteMessages':
        remove(chat, Array.isArray(body.message_ids) ? body.message_ids : []);
        return res.json({ ok: true, result: true });
      default:
        return botError(res, 404, 'Not Found');
    }
  }

  router.post('/:bot/:method', async (req, res) => {
    await dispatch(req, res);
  });
}
