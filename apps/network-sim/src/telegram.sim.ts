import type { Request, Response, Router } from 'express';
import { answerOrHang, networkMiddleware, type SimState, type TErrorRenderer } from './sim-state.js';

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
  let nextMessageId = 100;

  router.use(networkMiddleware(sim, 'telegram', renderTelegramError));

  function post(req: Request, res: Response, chat: TChat, parts: { text: string; media: unknown }[]): void {
    const messages = parts.map(({ text, media }) => {
      nextMessageId += 1;
      const id = String(nextMessageId);
      chatOfMessage.set(id, chat.id);
      sim.addPost({ platform: 'telegram', remoteId: id, text, replyTo: null, media, idempotencyKey: null });
      return {
        message_id: nextMessageId,
        date: Math.floor(Date.now() / 1000),
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
  function dispatch(req: Request<{ bot: string; method: string }>, res: Response): unknown {
    const { bot, method } = req.params;
    if (!bot.startsWith('bot') || !/^\d+:[\w-]+$/.test(bot.slice(3))) {
      botError(res, 401, 'Unauthorized');
      return;
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
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
        return post(req, res, chat, [{ text, media: body.link_preview_options ?? null }]);
      }
      case 'sendPhoto':
      case 'sendVideo': {
        const field = method === 'sendPhoto' ? 'photo' : 'video';
        if (typeof body[field] !== 'string')
          return botError(res, 400, `Bad Request: there is no ${field} in the request`);
        return post(req, res, chat, [{ text: caption, media: { [field]: body[field] } }]);
      }
      case 'sendMediaGroup': {
        const items = Array.isArray(body.media) ? (body.media as TMediaItem[]) : [];
        if (items.length < 2 || items.length > 10) {
          return botError(res, 400, 'Bad Request: wrong number of messages in the media group');
        }
        return post(
          req,
          res,
          chat,
          items.map((item) => ({ text: item.caption ?? '', media: { [item.type ?? 'photo']: item.media } })),
        );
      }
      case 'deleteMessage':
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

  router.post('/:bot/:method', (req, res) => {
    dispatch(req, res);
  });
}
