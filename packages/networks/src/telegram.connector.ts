import { HTTPError } from 'got';
import type {
  TConnectorAccount,
  TConnectorOptions,
  TDeleteOutcome,
  TNetworkConnector,
  TNetworkFailure,
  TPublishInput,
  TPublishOutcome,
  TRemoteRef,
} from './connector.js';
import { classifyHttpError, createHttpClient } from './http-client.js';

const DEFAULT_BASE_URL = 'https://api.telegram.org';
const NETWORK = 'Telegram';
const CAPTION_MAX = 1024;
const MEDIA_GROUP_MAX = 10;

/** Bot API answers: `{ ok: true, result }` or `{ ok: false, error_code, description, parameters }`. */
interface TBotAnswer<T> {
  ok?: boolean;
  result?: T;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

interface TMessage {
  message_id: number;
  chat: { id: number; type?: string; username?: string };
}

function answerOf(error: unknown): TBotAnswer<unknown> | undefined {
  if (!(error instanceof HTTPError)) return undefined;
  const body = error.response.body;
  return typeof body === 'object' && body !== null ? (body as TBotAnswer<unknown>) : undefined;
}

function classify(error: unknown): TNetworkFailure {
  const failure = classifyHttpError(error, { network: NETWORK });
  // Telegram states the wait in the body, not in a Retry-After header.
  const retryAfter = answerOf(error)?.parameters?.retry_after;
  if (failure.kind === 'rate_limited' && typeof retryAfter === 'number') {
    return {
      ...failure,
      retryAfterMs: retryAfter * 1000,
      message: `${NETWORK} rate limit reached. The post will be retried in ${retryAfter} s.`,
    };
  }
  return failure;
}

/** Public chats link by username; private supergroups and channels (`-100…` ids) by `t.me/c/` for members. */
function messageUrl(message: TMessage): string {
  const { chat, message_id: id } = message;
  if (chat.username) return `https://t.me/${chat.username}/${id}`;
  const chatId = String(chat.id);
  return chatId.startsWith('-100') ? `https://t.me/c/${chatId.slice(4)}/${id}` : '';
}

type TItem = { type: 'photo' | 'video'; media: string };

export function createTelegramConnector(options: TConnectorOptions = {}): TNetworkConnector {
  const http = createHttpClient(options.baseUrl ?? DEFAULT_BASE_URL, options.timeoutMs);

  /** The bot token is part of the path; got's errors never carry the URL into our failure messages. */
  async function call<T>(
    account: TConnectorAccount,
    method: string,
    payload: Record<string, unknown>,
  ): Promise<T> {
    const body = await http.post(`bot${account.token}/${method}`, { json: payload }).json<TBotAnswer<T>>();
    if (!body.ok || body.result === undefined) {
      throw new Error(`${NETWORK} answered ${method} without a result`);
    }
    return body.result;
  }

  async function send(account: TConnectorAccount, chatId: string, input: TPublishInput): Promise<TMessage[]> {
    const { text, media } = input;
    const items: TItem[] = [
      ...(media?.images ?? []).map((image) => ({ type: 'photo' as const, media: image.url })),
      ...(media?.video ? [{ type: 'video' as const, media: media.video.url }] : []),
    ];
    const first = items[0];
    if (!first) return [await call<TMessage>(account, 'sendMessage', { chat_id: chatId, text })];
    if (text.length > CAPTION_MAX) {
      // Captions stop at 1024 characters; a text message previewing the first media keeps it one message.
      return [
        await call<TMessage>(account, 'sendMessage', {
          chat_id: chatId,
          text,
          link_preview_options: { url: first.media, prefer_large_media: true, show_above_text: true },
        }),
      ];
    }
    const caption = text ? { caption: text } : {};
    if (items.length === 1) {
      const method = first.type === 'photo' ? 'sendPhoto' : 'sendVideo';
      return [
        await call<TMessage>(account, method, { chat_id: chatId, [first.type]: first.media, ...caption }),
      ];
    }
    // The caption of the first item is shown as the album's caption.
    const group = items.map((item, index) => (index === 0 ? { ...item, ...caption } : item));
    return call<TMessage[]>(account, 'sendMediaGroup', { chat_id: chatId, media: group });
  }

  return {
    platform: 'telegram',
    async publish(input: TPublishInput): Promise<TPublishOutcome> {
      const { account, media } = input;
      const chatId = account.externalId;
      if (!chatId) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `The ${NETWORK} account has no chat id. Reconnect it with the target chat and retry.`,
          },
        };
      }
      const count = (media?.images.length ?? 0) + (media?.video ? 1 : 0);
      if (count > MEDIA_GROUP_MAX) {
        return {
          ok: false,
          failure: {
            kind: 'rejected',
            message: `${NETWORK} albums hold at most ${MEDIA_GROUP_MAX} items (got ${count}). Remove some media and retry.`,
          },
        };
      }
      try {
        const messages = await send(account, chatId, input);
        const head = messages[0];
        if (!head) {
          return {
            ok: false,
            failure: {
              kind: 'transient',
              outcomeUnknown: true,
              message: `${NETWORK} answered without a message; check the chat before retrying.`,
            },
          };
        }
        return {
          ok: true,
          remoteId: String(head.message_id),
          url: messageUrl(head),
          meta: {
            chatId: String(head.chat.id),
            ...(messages.length > 1 ? { messageIds: messages.map((m) => m.message_id).join(',') } : {}),
          },
        };
      } catch (error) {
        return { ok: false, failure: classify(error) };
      }
    },

    async delete(account: TConnectorAccount, remote: TRemoteRef): Promise<TDeleteOutcome> {
      const chatId = remote.meta?.chatId ?? account.externalId;
      if (!chatId) {
        return {
          ok: false,
          failure: { kind: 'rejected', message: `No ${NETWORK} chat is known for this message.` },
        };
      }
      const ids = (remote.meta?.messageIds ?? remote.remoteId).split(',').map(Number);
      try {
        if (ids.length > 1) {
          // An album is one message per item; deleteMessages removes them together.
          await call<boolean>(account, 'deleteMessages', { chat_id: chatId, message_ids: ids });
        } else {
          await call<boolean>(account, 'deleteMessage', { chat_id: chatId, message_id: ids[0] });
        }
        return { ok: true };
      } catch (error) {
        // An already deleted message is a 400 here; Telegram's 404 means a malformed bot token, not a gone message.
        const answer = answerOf(error);
        if (answer?.error_code === 400 && /message to delete not found/i.test(answer.description ?? '')) {
          return { ok: true };
        }
        return { ok: false, failure: classify(error) };
      }
    },
  };
}
